"""How the objects of an artifact's files enter a snapshot.

Unlike a snapshot file, an artifact is read file by file, and a bad file is
skipped rather than fatal: so each file is a small transaction. Its objects
are kept when the whole file was read, and taken out again when it was not,
so a kind is never judged on the half of a file before the damage.

Artifacts repeat objects (a must-gather writes a pod in its namespace's List
and again in the pod's own folder; several gather images write the same
namespaces): each object counts once, by kind, namespace, name and uid.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from audits.collect.artifacts.captured import NewestObjectTime
from audits.collect.artifacts.layouts import KIND_NAMES
from audits.collect.documents import SnapshotAssembler
from audits.collect.snapshot import Obj, Snapshot, SnapshotError

ObjectKey = tuple[str, str, str, str]


class ArtifactAssembler(SnapshotAssembler):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__(snapshot)
        self.seen: set[ObjectKey] = set()
        self.repeats = 0
        # Objects of kinds kubegap-web does not read, met inside files of kinds it does.
        self.other_kinds: Counter[str] = Counter()
        self.newest = NewestObjectTime()
        self._file_newest = NewestObjectTime()
        self._file_keys: list[ObjectKey] = []
        self._file_repeats = 0
        self._lengths: dict[str, int] = {}
        self._warnings = 0

    # One file at a time.

    def begin_file(self, kind: str) -> None:
        self.default_kind = kind
        self._lengths = {kind: len(objects) for kind, objects in self.snapshot.objects.items()}
        self._warnings = len(self.snapshot.warnings)
        self._file_keys = []
        self._file_repeats = 0
        self._file_newest = NewestObjectTime()

    def commit_file(self) -> None:
        self.newest.merge(self._file_newest)
        self.repeats += self._file_repeats
        self.default_kind = None

    def rollback_file(self) -> None:
        """Take out everything the file added: objects, kinds it marked collected, its warnings."""
        objects = self.snapshot.objects
        for kind in list(objects):
            if kind not in self._lengths:
                del objects[kind]
            else:
                del objects[kind][self._lengths[kind] :]
        del self.snapshot.warnings[self._warnings :]
        self.seen.difference_update(self._file_keys)
        self.default_kind = None

    # Objects.

    def document(self, document: Any, *, where: str) -> None:
        if isinstance(document, dict):
            kind = document.get("kind")
            if isinstance(kind, str) and kind and not kind.endswith("List") and not document.get("apiVersion"):
                raise SnapshotError(
                    f"{where}: a {kind} without apiVersion is in Kubernetes' internal form, not what the API "
                    "serves (kubectl get -o json)"
                )
        super().document(document, where=where)

    def admit(self, obj: Obj, kind: str, *, where: str) -> bool:
        if kind not in KIND_NAMES:
            self.other_kinds[kind] += 1
            return False
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict):
            if "ObjectMeta" in obj or "TypeMeta" in obj:
                raise SnapshotError(
                    f"{where}: objects in Kubernetes' internal form (Go field names such as ObjectMeta), "
                    "not what the API serves (kubectl get -o json)"
                )
            return True  # kept or refused by the snapshot, which names what is missing
        key = (
            kind,
            str(metadata.get("namespace") or ""),
            str(metadata.get("name") or ""),
            str(metadata.get("uid") or ""),
        )
        if key in self.seen:
            self._file_repeats += 1
            return False
        self.seen.add(key)
        self._file_keys.append(key)
        self._file_newest.see(obj, kind)
        return True
