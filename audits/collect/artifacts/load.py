"""Reading an artifact into a Snapshot.

1. List the artifact's files (see archives.py) and recognise its layout from
   the paths (layouts.py). A directory with no known layout is read as
   manifests, as always; an archive with none, as manifests too if it holds
   any, else it is refused with the layouts looked for.
2. Read the planned files in storage order, each as one transaction
   (assembler.py): a damaged, binary, protobuf or internal-form file is
   skipped with a warning naming it, and its objects are not kept.
3. What the artifact holds is cluster state: a kind with at least one file
   read is collected (even with no objects); every other kind kubegap-web
   reads is "not collected", with why (absent from the artifact, its files
   unreadable, or the bundle's own collector failing on it).
4. Choose the capture time (captured.py) and say how.

Everything is held in memory until the snapshot is complete: a bad artifact
raises before anything is stored.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

from audits.collect.artifacts import archives, captured
from audits.collect.artifacts.archives import (
    ArtifactError,
    ArtifactSource,
    DirectorySource,
    Limits,
    Member,
    member_display,
    open_source,
)
from audits.collect.artifacts.assembler import ArtifactAssembler
from audits.collect.artifacts.layouts import READ_KINDS, FileTask, Plan, detect
from audits.collect.artifacts.yaml_items import read_yaml_items
from audits.collect.formats import JSON_SUFFIXES, YAML_SUFFIXES
from audits.collect.json_stream import read_json_documents
from audits.collect.manifests import is_manifest_path, manifests_load, manifests_read
from audits.collect.reading import BinaryReadable, LimitedReader, gc_paused
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.collect.yaml_stream import ManifestLoader
from audits.moments import parse_utc

ABSENT = "absent from the artifact"
PROTOBUF_MAGIC = b"k8s\x00"
# Small files read whole: timestamps, metadata, versions, troubleshoot's error lists.
SMALL_FILE_BYTES = 1024**2
# Objects shaped like nothing the API serves (a list where a mapping belongs, nesting without end) can
# trip the code that reads them; such a file is skipped like a damaged one rather than failing the artifact.
ODD_DATA = (TypeError, KeyError, AttributeError, IndexError, RecursionError)
# How many entries a warning lists before it only counts the rest.
LISTED = 10
# Objects may be stamped this long after the capture time before the time is doubted (clock skew).
SKEW = dt.timedelta(minutes=10)
# Where snapshot.stats keeps what the artifact was; stats entries starting with "_" are not kinds.
SUMMARY_KEY = "_artifact"


def artifact_load(
    path: Path, *, max_bytes: int, display_name: str | None = None, captured_at: dt.datetime | None = None
) -> Snapshot:
    """Read an artifact (a directory or an archive) into a snapshot; see the module's docstring."""
    name = display_name or path.name
    limits = Limits(
        max_bytes=max_bytes,
        max_member_bytes=min(archives.MAX_MEMBER_BYTES, max_bytes),
        max_members=archives.MAX_MEMBERS,
        max_ratio=archives.MAX_RATIO,
    )
    source = open_source(path, name=name, limits=limits)
    listing = source.listing()
    plan = detect(listing.members)
    if plan is None:
        snapshot = _manifests(path, source, listing.members, name=name, max_bytes=max_bytes)
        snapshot.warnings.extend(_listed(listing.refused, "entries not read"))
        if captured_at is not None:
            snapshot.captured_at = captured_at
        return snapshot
    reading = _ArtifactReading(source, plan, name=name, limits=limits, files=len(listing.members))
    reading.warnings.extend(_listed(listing.refused, "entries not read"))
    return reading.run(given=captured_at)


def _manifests(path: Path, source: ArtifactSource, members: list[Member], *, name: str, max_bytes: int) -> Snapshot:
    if isinstance(source, DirectorySource):
        return manifests_load(path, max_bytes=max_bytes, display_name=name)
    wanted = [member for member in members if is_manifest_path(member.path)]
    if not wanted:
        examples = ", ".join(member.path for member in members[:5]) or "no files at all"
        raise ArtifactError(
            f"{name}: not an artifact kubegap-web recognises, and no manifests in it. It reads kubectl "
            "cluster-info dumps (nodes.json, <namespace>/pods.json), support bundles (cluster-resources/..., "
            "yamls/namespaced/...), OpenShift must-gathers (cluster-scoped-resources/, namespaces/<ns>/core/) "
            f"and manifests (*.yaml, *.json). Found {len(members):,} file(s): {examples}."
        )
    files = ((member_display(name, member, source.kind), stream) for member, stream in source.read(wanted))
    return manifests_read(files, name=name, max_bytes=max_bytes)


@dataclass
class _KindStats:
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    errors: int = 0
    unreadable: list[str] = field(default_factory=list)


class _ArtifactReading:
    def __init__(self, source: ArtifactSource, plan: Plan, *, name: str, limits: Limits, files: int) -> None:
        self.source, self.plan, self.name, self.limits = source, plan, name, limits
        self.files = files
        self.snapshot = Snapshot(source=name)
        self.assembler = ArtifactAssembler(self.snapshot)
        self.warnings: list[str] = []
        self.kinds: dict[str, _KindStats] = defaultdict(_KindStats)
        self.collector_errors: dict[str, list[str]] = defaultdict(list)
        self.recorded: tuple[dt.datetime, str] | None = None
        self.newest_file: tuple[float, str] | None = None
        self.files_read = 0

    def run(self, *, given: dt.datetime | None) -> Snapshot:
        tasks = {task.member.position: task for task in self.plan.tasks}
        errors = {task.member.position: task for task in self.plan.error_files}
        wanted = []
        for member in self.plan.wanted:
            if member.size > self.limits.max_member_bytes:
                task = tasks.pop(member.position, None)
                shown = self._shown(member)
                self.warnings.append(f"{shown}: {member.size:,} bytes is over the limit of one file; not read.")
                if task is not None:
                    self.kinds[task.kind].unreadable.append(shown)
            else:
                wanted.append(member)
        with gc_paused():
            for member, stream in self.source.read(wanted):
                if member.position in tasks:
                    self._read_objects(tasks[member.position], stream)
                elif member.position in errors:
                    self._read_collector_errors(errors[member.position], stream)
                elif member in self.plan.timestamp_files:
                    self._read_timestamp(member, stream)
                else:
                    self._read_version(member, stream)
        self._conclude(given)
        if not self.snapshot.objects:
            problems = " ".join(self.warnings[:3])
            raise ArtifactError(
                f"{self.name}: {self.plan.label}, but none of its files of kinds kubegap-web reads could be "
                f"read. {problems}".rstrip()
            )
        return self.assembler.finish(name=self.name)

    def _shown(self, member: Member) -> str:
        return member_display(self.name, member, self.source.kind)

    # Files of objects.

    def _read_objects(self, task: FileTask, stream: BinaryReadable) -> None:
        shown = self._shown(task.member)
        stats = self.kinds[task.kind]
        started = time.process_time()
        self.assembler.begin_file(task.kind)
        try:
            reader = LimitedReader(stream, name=shown, max_bytes=self.limits.max_member_bytes)
            _parse(reader, self.assembler, shown=shown, kind=task.kind)
        except ArtifactError:
            raise
        except (SnapshotError, *ODD_DATA) as exc:
            self.assembler.rollback_file()
            stats.errors += 1
            stats.unreadable.append(shown)
            message = str(exc) if isinstance(exc, SnapshotError) else f"{shown}: {type(exc).__name__}: {exc}"
            self.warnings.append(
                f"{message.rstrip('.')}; the file is skipped, its {task.kind} objects are not audited."
            )
            return
        finally:
            stats.seconds += time.process_time() - started
        self.assembler.commit_file()
        self.snapshot.mark_collected(task.kind)
        stats.files += 1
        stats.bytes += reader.consumed
        self.files_read += 1
        mtime = task.member.mtime
        if mtime is not None and (self.newest_file is None or mtime > self.newest_file[0]):
            self.newest_file = (mtime, task.member.path)

    # Files about the artifact.

    def _small(self, member: Member, stream: BinaryReadable) -> bytes | None:
        try:
            return LimitedReader(stream, name=self._shown(member), max_bytes=SMALL_FILE_BYTES).read()
        except ArtifactError:
            raise
        except SnapshotError as exc:
            self.warnings.append(f"{exc} Not used.")
            return None

    def _read_collector_errors(self, task: FileTask, stream: BinaryReadable) -> None:
        data = self._small(task.member, stream)
        if not data or not data.strip():
            return
        try:
            errors = orjson.loads(data)
        except orjson.JSONDecodeError:
            self.warnings.append(f"{self._shown(task.member)}: not JSON; not used.")
            return
        messages = errors.values() if isinstance(errors, dict) else errors if isinstance(errors, list) else []
        self.collector_errors[task.kind].extend(str(message) for message in messages if message)

    def _read_timestamp(self, member: Member, stream: BinaryReadable) -> None:
        data = self._small(member, stream)
        if data is None:
            return
        text = data.decode("utf-8", errors="replace")
        shown = self._shown(member)
        found: dt.datetime | None = None
        if member.name == "timestamp":
            found = captured.go_time_last(text)
            source = f"the must-gather's timestamp file ({shown})"
        else:
            metadata = _yaml_mapping(text)
            version = _get_folded(metadata, "kubernetesversion")
            if version:
                self.snapshot.server_version = str(version)[:64]
            created = _get_folded(metadata, "bundlecreatedat")
            source = f"the bundle's metadata ({shown}, bundleCreatedAt)"
            try:
                found = parse_utc(str(created)) if created else None
            except ValueError:
                self.warnings.append(f"{shown}: bundleCreatedAt {created!r} is not an ISO 8601 time; not used.")
        if found is not None and (self.recorded is None or found > self.recorded[0]):
            self.recorded = (found, source)
        mtime = member.mtime
        if mtime is not None and (self.newest_file is None or mtime > self.newest_file[0]):
            self.newest_file = (mtime, member.path)

    def _read_version(self, member: Member, stream: BinaryReadable) -> None:
        data = self._small(member, stream)
        try:
            version = orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            version = None
        if isinstance(version, dict):
            info = version.get("info")
            text = (info.get("gitVersion") if isinstance(info, dict) else None) or version.get("string")
            if isinstance(text, str):
                self.snapshot.server_version = text[:64]

    # What the artifact held, and when.

    def _conclude(self, given: dt.datetime | None) -> None:
        snapshot, plan = self.snapshot, self.plan
        for kind in READ_KINDS:
            stats = self.kinds.get(kind.name)
            errors = self.collector_errors.get(kind.name)
            if kind.name in snapshot.objects:
                if errors:
                    self.warnings.append(
                        f"{kind.name}: the bundle's collector could not read all of them "
                        f"({_shorten(errors[0])}); those it could not read are not audited."
                    )
                continue
            if errors:
                snapshot.not_collected[kind.name] = f"the bundle's collector could not read it: {_shorten(errors[0])}"
            elif stats is not None and stats.unreadable:
                snapshot.not_collected[kind.name] = (
                    "its file(s) in the artifact could not be read: "
                    + ", ".join(stats.unreadable[:3])
                    + (f" and {len(stats.unreadable) - 3} more" if len(stats.unreadable) > 3 else "")
                )
            else:
                snapshot.not_collected[kind.name] = ABSENT
        if plan.secret_files:
            self.warnings.append(f"{plan.secret_files} file(s) of Secrets not opened: Secrets are never read.")
        if self.assembler.repeats:
            self.warnings.append(
                f"{self.assembler.repeats:,} object(s) written more than once in the artifact were counted once."
            )
        moment = captured.choose(
            given=given, recorded=self.recorded, archive_times=self.newest_file, objects=self.assembler.newest
        )
        snapshot.captured_at = moment.at
        newest = self.assembler.newest.at
        if moment.at is not None and newest is not None and newest > moment.at + SKEW:
            self.warnings.append(
                f"objects carry times up to {newest:%Y-%m-%d %H:%M:%S} UTC ({self.assembler.newest.where}), after "
                f"the capture time {moment.at:%Y-%m-%d %H:%M:%S} UTC taken {moment.basis}; if that is wrong, "
                "give the time with --captured-at."
            )
        for name, stats in self.kinds.items():
            snapshot.stats[name] = {
                "objects": len(snapshot.objects.get(name, [])),
                "pages": stats.files,
                "bytes": stats.bytes,
                "seconds": round(stats.seconds, 3),
                "retries": 0,
                "errors": stats.errors,
            }
        snapshot.warnings.extend(self.warnings)
        snapshot.stats[SUMMARY_KEY] = _summary(plan, self, moment)


def _summary(plan: Plan, reading: _ArtifactReading, moment: captured.CaptureTime) -> Any:
    """What the artifact was, kept with the snapshot's stats (and so with the run) for pages and exports."""
    namespaces = sorted(plan.namespaces)
    return {
        "layout": plan.layout,
        "label": plan.label,
        "captured_at_from": moment.basis,
        "files_read": reading.files_read,
        "files_not_read": reading.files - len(plan.wanted),
        "repeated_files": plan.repeated_files,
        "secret_files": plan.secret_files,
        "repeated_objects": reading.assembler.repeats,
        "namespaces": namespaces[:200],
        "namespace_count": len(namespaces),
        # Kept here too, so that a run (which stores these stats) can list them.
        "warnings": reading.snapshot.warnings[:100],
    }


def summary_of(snapshot: Snapshot) -> dict[str, Any] | None:
    """The artifact summary of a snapshot read from an artifact (or from its export); None otherwise."""
    found: Any = snapshot.stats.get(SUMMARY_KEY)
    return found if isinstance(found, dict) and "layout" in found else None


def _parse(reader: LimitedReader, assembler: ArtifactAssembler, *, shown: str, kind: str) -> None:
    """One file's objects: JSON (a List, several, one object, or a bare array of objects) or YAML."""
    head = reader.peek(512)
    if head.startswith(PROTOBUF_MAGIC):
        raise SnapshotError(
            f"{shown}: Kubernetes protobuf (the API's binary encoding), not JSON or YAML; collect with -o json"
        )
    if b"\x00" in head:
        raise SnapshotError(f"{shown}: binary data, not JSON or YAML")
    lowered = shown.lower()
    if lowered.endswith(YAML_SUFFIXES):
        read_yaml_items(reader, assembler, name=shown)
        return
    first = reader.first_byte()
    if first == b"[":
        # Older troubleshoot bundles write a List's items alone, as an array; its path says their kind.
        reader.surround(b'{"kind":"%sList","items":' % kind.encode(), b"}")
    elif not lowered.endswith(JSON_SUFFIXES) and first not in (b"{", b""):
        read_yaml_items(reader, assembler, name=shown)
        return
    read_json_documents(reader, assembler, name=shown)


def _yaml_mapping(text: str) -> dict[str, Any]:
    try:
        loaded = yaml.load(text, Loader=ManifestLoader)  # noqa: S506 - ManifestLoader is a SafeLoader
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _get_folded(mapping: dict[str, Any], key: str) -> Any:
    """A key whatever its case: `bundleCreatedAt` and `bundlecreatedat` are both written."""
    return next((value for name, value in mapping.items() if str(name).lower() == key), None)


def _shorten(message: str, limit: int = 200) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _listed(entries: list[str], what: str) -> list[str]:
    shown = entries[:LISTED]
    rest = len(entries) - len(shown)
    return shown + ([f"and {rest:,} more {what}"] if rest else [])
