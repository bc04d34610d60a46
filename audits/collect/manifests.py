"""A directory of manifests, audited before anything is deployed.

The directory is taken as the whole desired state: every kind the collector
reads that a team declares (Deployments, PodDisruptionBudgets, Services, ...)
counts as collected even when no file declares one, so "this Deployment has no
PodDisruptionBudget" is found in CI. What only a running cluster has (Nodes,
Pods, EndpointSlices, ...) stays not collected, and the checks that need it
report "not evaluated".
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from audits.collect.documents import CLUSTER_STATE_KINDS, SnapshotAssembler
from audits.collect.formats import read_documents
from audits.collect.kinds import KINDS
from audits.collect.reading import BinaryReadable, LimitedReader, gc_paused
from audits.collect.snapshot import Snapshot, SnapshotError

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
DECLARED_KINDS = tuple(kind.name for kind in KINDS if kind.name not in CLUSTER_STATE_KINDS)
NOT_DECLARED = "cluster state: a manifest directory declares desired state only"


def manifest_files(root: Path) -> list[Path]:
    """Manifest files under a directory, recursively and in a stable order, skipping hidden ones (.git)."""
    found: list[Path] = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith("."))
        found.extend(
            Path(directory) / f
            for f in sorted(files)
            if not f.startswith(".") and f.lower().endswith(MANIFEST_SUFFIXES)
        )
    return found


def is_manifest_path(relative: str) -> bool:
    """A file a manifest directory is made of: *.yaml, *.yml or *.json, in no hidden directory."""
    parts = relative.split("/")
    return not any(part.startswith(".") for part in parts) and parts[-1].lower().endswith(MANIFEST_SUFFIXES)


def manifests_load(path: Path, *, max_bytes: int, display_name: str | None = None) -> Snapshot:
    """Read a directory of manifests (or one manifest file) as the desired state of a cluster.

    `max_bytes` bounds all files together.
    """
    name = display_name or path.name
    if path.is_dir():
        files = manifest_files(path)
        if not files:
            raise SnapshotError(f"{name}: no manifests in this directory (*.yaml, *.yml, *.json; hidden ones skipped).")
    elif path.is_file():
        files = [path]
    else:
        raise SnapshotError(f"{name}: no such file or directory.")

    def opened() -> Iterator[tuple[str, BinaryReadable]]:
        for file in files:
            shown = f"{name}/{file.relative_to(path).as_posix()}" if path.is_dir() else name
            try:
                fh = file.open("rb")
            except OSError as exc:
                raise SnapshotError(f"{shown}: cannot be read ({exc.strerror}).") from None
            with fh:
                yield shown, fh

    return manifests_read(opened(), name=name, max_bytes=max_bytes)


def manifests_read(files: Iterable[tuple[str, BinaryReadable]], *, name: str, max_bytes: int) -> Snapshot:
    """Read manifest files, each given with the name messages call it, as one desired state."""
    snapshot = Snapshot(source=name)
    assembler = SnapshotAssembler(snapshot, manifests=True)
    budget = max_bytes
    for shown, fh in files:
        with gc_paused():
            reader = LimitedReader(
                fh,
                name=shown,
                max_bytes=budget,
                over_limit=f"{name}: the manifests add up to more than {max_bytes:,} bytes (SNAPSHOT_MAX_BYTES). "
                "Audit a smaller directory, or raise the limit.",
            )
            read_documents(reader, assembler, name=shown)
        budget -= reader.consumed
    for kind in DECLARED_KINDS:
        snapshot.mark_collected(kind)
    for kind in CLUSTER_STATE_KINDS:
        snapshot.not_collected[kind] = NOT_DECLARED
    return assembler.finish(name=name)
