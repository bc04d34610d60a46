"""Reading snapshots from files: kubectl List JSON and the project's own export.

Every problem a user can cause names the file and says what to do about it.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
from pathlib import Path
from typing import IO, Any

import orjson

from audits.collect.snapshot import FORMAT, Snapshot, SnapshotError

GZIP_MAGIC = b"\x1f\x8b"
KUBECTL_HINT = "Create it with `kubectl get nodes,pods,deployments,... -A -o json > FILE.json`."


def snapshot_load(path: Path, *, max_bytes: int, display_name: str | None = None) -> Snapshot:
    """Read a snapshot file (kubectl List JSON, or our gzip JSON export)."""
    name = display_name or path.name
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SnapshotError(f"{name}: cannot be read ({exc.strerror}).") from None
    if size > max_bytes:
        raise SnapshotError(
            f"{name}: {size:,} bytes is over the limit of {max_bytes:,} bytes (SNAPSHOT_MAX_BYTES). "
            "Split it, or raise the limit."
        )
    with path.open("rb") as fh:
        return snapshot_parse(fh, name=name, max_bytes=max_bytes)


def snapshot_parse(fh: IO[bytes], *, name: str, max_bytes: int) -> Snapshot:
    raw = fh.read(max_bytes + 1)
    if raw[:2] == GZIP_MAGIC:
        raw = _gunzip(raw, name=name, max_bytes=max_bytes)
    if len(raw) > max_bytes:
        raise SnapshotError(
            f"{name}: more than {max_bytes:,} bytes (SNAPSHOT_MAX_BYTES). Split it, or raise the limit."
        )
    if not raw.strip():
        raise SnapshotError(f"{name}: the file is empty. {KUBECTL_HINT}")
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        truncated = "unexpected end" in str(exc).lower()
        what = "is truncated" if truncated else "is not valid JSON"
        raise SnapshotError(f"{name}: {what} ({exc}). {KUBECTL_HINT}") from None
    return snapshot_from_document(document, name=name)


def snapshot_from_document(document: Any, *, name: str) -> Snapshot:
    if not isinstance(document, dict):
        raise SnapshotError(f"{name}: expected a JSON object (a Kubernetes List), found {type(document).__name__}.")
    if document.get("format") == FORMAT:
        return _from_export(document, name=name)
    kind = document.get("kind")
    if not isinstance(kind, str) or not kind:
        raise SnapshotError(f'{name}: not a Kubernetes object or List: it has no "kind". {KUBECTL_HINT}')
    snapshot = Snapshot(source=name)
    if kind.endswith("List"):
        items = document.get("items")
        if not isinstance(items, list):
            raise SnapshotError(f'{name}: the {kind} has no "items" array. {KUBECTL_HINT}')
        # A typed list (PodList) names its kind even when empty; items of a
        # cluster-info dump carry no kind of their own.
        list_kind = kind[: -len("List")] if kind != "List" else None
        if list_kind:
            snapshot.mark_collected(list_kind)
        for position, item in enumerate(items):
            if not isinstance(item, dict):
                snapshot.warnings.append(f"{name}: item {position} is not an object; skipped.")
                continue
            item_kind = item.get("kind") or list_kind
            if not item_kind:
                snapshot.warnings.append(f"{name}: item {position} has no kind; skipped.")
                continue
            if snapshot.add(item, item_kind):
                snapshot.mark_collected(item_kind)
    elif not snapshot.add(document, kind):
        raise SnapshotError(f"{name}: the {kind} object has no metadata.name, or is a kind never read.")
    if not snapshot.objects:
        raise SnapshotError(f"{name}: the List holds no Kubernetes objects kubegap-web can audit. {KUBECTL_HINT}")
    return snapshot


def snapshot_dump(snapshot: Snapshot, fh: IO[bytes]) -> None:
    """Write our own export: gzip JSON that records exactly what was collected."""
    document = {
        "format": FORMAT,
        "captured_at": snapshot.captured_at.isoformat() if snapshot.captured_at else None,
        "source": snapshot.source,
        "server_version": snapshot.server_version,
        "not_collected": snapshot.not_collected,
        "stats": snapshot.stats,
        "warnings": snapshot.warnings,
        "objects": snapshot.objects,
    }
    with gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
        gz.write(orjson.dumps(document))


def _from_export(document: dict[str, Any], *, name: str) -> Snapshot:
    objects = document.get("objects")
    if not isinstance(objects, dict) or not all(isinstance(v, list) for v in objects.values()):
        raise SnapshotError(f'{name}: a {FORMAT} export whose "objects" is not a map of kind to list; export it again.')
    captured = document.get("captured_at")
    try:
        captured_at = dt.datetime.fromisoformat(captured) if captured else None
    except (TypeError, ValueError):
        raise SnapshotError(f"{name}: captured_at {captured!r} is not an ISO 8601 time.") from None
    return Snapshot(
        objects=objects,
        not_collected=dict(document.get("not_collected") or {}),
        captured_at=captured_at,
        source=str(document.get("source") or name),
        server_version=str(document.get("server_version") or ""),
        stats=dict(document.get("stats") or {}),
        warnings=list(document.get("warnings") or []),
    )


def _gunzip(raw: bytes, *, name: str, max_bytes: int) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
            data = gz.read(max_bytes + 1)
    except (OSError, EOFError) as exc:
        raise SnapshotError(f"{name}: a damaged gzip file ({exc}).") from None
    return data
