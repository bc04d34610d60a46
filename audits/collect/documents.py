"""From parsed documents to a Snapshot: Lists, single objects and our own export.

JSON and YAML readers hand documents here, complete or (for large JSON files)
still being parsed. A List being parsed is consumed from the front: each
finished item is projected into the snapshot and removed from the list, so the
raw document is never held whole, whatever its size.

Two modes:
- a snapshot (what a cluster holds): only kinds present, or named by a typed
  List such as PodList, count as collected;
- manifests (the desired state a directory declares): objects of cluster-state
  kinds are skipped, and files that are not Kubernetes objects (a Helm
  values.yaml, a kustomization.yaml) are skipped with a warning.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from audits.collect.kinds import FORBIDDEN_KINDS, KINDS_BY_NAME
from audits.collect.snapshot import FORMAT, Obj, Snapshot, SnapshotError

KUBECTL_HINT = "Create it with `kubectl get nodes,pods,deployments,... -A -o json > FILE.json`."

# What a cluster creates or reports, never what a team declares. A manifest
# directory leaves these not collected, so the checks that need them say
# "not evaluated" instead of judging half a picture.
CLUSTER_STATE_KINDS = frozenset(
    {"Node", "Pod", "EndpointSlice", "ReplicaSet", "PersistentVolume", "Namespace", "APIService"}
)


def list_kind(kind: str) -> str | None:
    """The kind of a typed List's items (PodList -> Pod); None for a plain List."""
    return kind[: -len("List")] if kind != "List" else None


class SnapshotAssembler:
    """Adds the objects of documents to one snapshot, with messages naming where they came from.

    Two hooks serve readers that know more than a document says (artifacts):
    `default_kind` is the kind of objects and Lists that name none, and
    `admit` may refuse an object before it is kept.
    """

    def __init__(self, snapshot: Snapshot, *, manifests: bool = False) -> None:
        self.snapshot = snapshot
        self.manifests = manifests
        self.skipped_state: Counter[str] = Counter()
        # The kind of objects, and of Lists' items, that carry no kind of their own.
        self.default_kind: str | None = None
        # The document being parsed, and how many of its items were taken already.
        self._open: Obj | None = None
        self._taken = 0

    # Documents still being parsed (JSON streaming).

    def stream(self, document: Obj, *, where: str) -> None:
        """Take the finished items of a document still being parsed.

        The last element of each list may be an object still being filled, so it
        stays until the next call or until the document is complete.
        """
        if document is not self._open:
            self._open, self._taken = document, 0
        if document.get("format") == FORMAT:
            objects = document.get("objects")
            if isinstance(objects, dict):
                for kind, items in objects.items():
                    if isinstance(items, list) and len(items) > 1:
                        self._take_exported(kind, items, len(items) - 1, where=where)
            return
        kind = document.get("kind")
        items = document.get("items")
        if not isinstance(items, list) or len(items) < 2:
            return
        if kind is None and self.default_kind:
            self._take_items(items, len(items) - 1, None, where=where)
        elif kind is None:
            # `kubectl get -o json` prints "kind" after "items", but names the kind
            # of every item; an item that does not waits for the List's kind.
            ready = next(
                (i for i, item in enumerate(items[:-1]) if isinstance(item, dict) and not item.get("kind")),
                len(items) - 1,
            )
            self._take_items(items, ready, None, where=where)
        elif isinstance(kind, str) and kind.endswith("List"):
            self._take_items(items, len(items) - 1, list_kind(kind), where=where)

    # Complete documents.

    def document(self, document: Any, *, where: str) -> None:
        """Add every object of a complete document: a List, an export, or one object."""
        taken = self._taken if document is self._open else 0
        self._open, self._taken = None, 0
        if document is None:  # an empty YAML document, such as a trailing `---`
            return
        if not isinstance(document, dict):
            self._refuse_or_skip(where, f"expected a JSON object (a Kubernetes List), found {type(document).__name__}.")
            return
        if document.get("format") == FORMAT:
            if self.manifests:
                self._refuse_or_skip(where, f"a {FORMAT} export is a snapshot, not a manifest.")
                return
            self._export(document, where=where)
            return
        kind = document.get("kind")
        if not kind and self.default_kind:
            kind = f"{self.default_kind}List" if isinstance(document.get("items"), list) else self.default_kind
        if not isinstance(kind, str) or not kind:
            self._refuse_or_skip(where, 'not a Kubernetes object or List: it has no "kind".', hint=KUBECTL_HINT)
            return
        if kind.endswith("List"):
            items = document.get("items")
            if not isinstance(items, list):
                raise SnapshotError(f'{where}: the {kind} has no "items" array. {KUBECTL_HINT}')
            self._open, self._taken = document, taken
            self._take_items(items, len(items), list_kind(kind), where=where)
            self._open, self._taken = None, 0
        else:
            self._add(document, kind, where=where)

    def finish(self, *, name: str) -> Snapshot:
        """The snapshot, once every document was added; refused when it holds nothing to audit."""
        for kind, count in sorted(self.skipped_state.items()):
            self.snapshot.warnings.append(
                f"{name}: {count} {kind} object(s) skipped: {kind} is cluster state, not audited from manifests."
            )
        # A typed List with no items (PodDisruptionBudgetList) still says the kind was read.
        if not (self.snapshot.count() if self.manifests else self.snapshot.objects):
            what, hint = ("manifests hold", "") if self.manifests else ("file holds", f" {KUBECTL_HINT}")
            raise SnapshotError(
                f"{name}: the {what} no Kubernetes objects kubegap-web can audit "
                f"(Secrets and objects without metadata.name are never read).{hint}"
            )
        return self.snapshot

    # Objects.

    def _take_items(self, items: list[Any], count: int, of_kind: str | None, *, where: str) -> None:
        """Add the first `count` items of a List and remove them from it."""
        if of_kind:
            self._mark_collected(of_kind)
        for offset, item in enumerate(items[:count]):
            position = self._taken + offset
            if not isinstance(item, dict):
                self.snapshot.warnings.append(f"{where}: item {position} is not an object; skipped.")
                continue
            kind = item.get("kind") or of_kind or self.default_kind
            if not isinstance(kind, str) or not kind:
                self.snapshot.warnings.append(f"{where}: item {position} has no kind; skipped.")
                continue
            self._add(item, kind, where=where)
        del items[:count]
        self._taken += count

    def _add(self, obj: Obj, kind: str, *, where: str) -> None:
        if self.manifests and kind in CLUSTER_STATE_KINDS:
            self.skipped_state[kind] += 1
            return
        known = KINDS_BY_NAME.get(kind)
        if known is not None and known.custom:
            group = str(obj.get("apiVersion") or "").rpartition("/")[0]
            if group and group != known.group:
                # kustomize's own kustomization.yaml says `kind: Kustomization` too.
                self.snapshot.warnings.append(
                    f"{where}: a {kind} of {group} is not the {kind} of {known.group} kubegap-web reads; skipped."
                )
                return
        if not self.admit(obj, kind, where=where):
            return
        if self.snapshot.add(obj, kind):
            self._mark_collected(kind)
        elif kind not in FORBIDDEN_KINDS and not (obj.get("metadata") or {}).get("name"):
            self.snapshot.warnings.append(f"{where}: a {kind} without metadata.name; skipped.")

    def admit(self, obj: Obj, kind: str, *, where: str) -> bool:
        """Whether to keep an object; readers that need to (artifacts) refuse repeats and the like."""
        return True

    def _mark_collected(self, kind: str) -> None:
        if kind not in FORBIDDEN_KINDS and not (self.manifests and kind in CLUSTER_STATE_KINDS):
            self.snapshot.mark_collected(kind)

    def _refuse_or_skip(self, where: str, problem: str, *, hint: str = "") -> None:
        """A document that is no Kubernetes object: an error in a snapshot, skipped among manifests
        (a chart's values.yaml sits beside its templates)."""
        if not self.manifests:
            raise SnapshotError(f"{where}: {problem} {hint}".rstrip())
        self.snapshot.warnings.append(f"{where}: {problem} Skipped.")

    # Our own export.

    def _take_exported(self, kind: str, items: list[Any], count: int, *, where: str) -> None:
        self.snapshot.mark_collected(kind)
        for obj in items[:count]:
            if isinstance(obj, dict):
                self.snapshot.add(obj, kind)
        del items[:count]

    def _export(self, document: Obj, *, where: str) -> None:
        objects = document.get("objects")
        if not isinstance(objects, dict) or not all(isinstance(v, list) for v in objects.values()):
            raise SnapshotError(
                f'{where}: a {FORMAT} export whose "objects" is not a map of kind to list; export it again.'
            )
        for kind, items in objects.items():
            self._take_exported(kind, items, len(items), where=where)
        captured = document.get("captured_at")
        try:
            captured_at = dt.datetime.fromisoformat(captured) if captured else None
        except (TypeError, ValueError):
            raise SnapshotError(f"{where}: captured_at {captured!r} is not an ISO 8601 time.") from None
        snapshot = self.snapshot
        snapshot.captured_at = captured_at
        snapshot.source = str(document.get("source") or snapshot.source)
        snapshot.server_version = str(document.get("server_version") or "")
        snapshot.not_collected.update(
            {k: v for k, v in dict(document.get("not_collected") or {}).items() if k not in snapshot.objects}
        )
        snapshot.stats.update(dict(document.get("stats") or {}))
        snapshot.warnings.extend(list(document.get("warnings") or []))
