"""Reading snapshots from files, and writing our own export.

A snapshot file is what `kubectl get ... -o json` (or `-o yaml`) prints, several
such Lists one after another (`kubectl cluster-info dump` prints them with pod
logs between, which are left out), a single object, or our own export
(`kubegap.snapshot/v1`, gzip JSON); any of them may be gzip-compressed. An
archive, or a directory laid out as a cluster-info dump, a support bundle or a
must-gather, is read as an artifact (see artifacts/); any other directory as
manifests (see manifests.py).

Files are streamed: a 150,000-pod List is projected item by item and never
held whole. Every problem a user can cause names the file and says what to do.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from typing import IO

import orjson

from audits.collect.artifacts import archive_kind, artifact_load
from audits.collect.documents import SnapshotAssembler
from audits.collect.formats import read_documents
from audits.collect.reading import LimitedReader, gc_paused
from audits.collect.snapshot import FORMAT, Snapshot, SnapshotError

# Objects serialised per write of the export: large enough that orjson does the
# work, small enough that the export is never built whole in memory.
DUMP_BATCH = 1000


def snapshot_load(
    path: Path, *, max_bytes: int, display_name: str | None = None, captured_at: dt.datetime | None = None
) -> Snapshot:
    """Read a snapshot file, an artifact (archive or directory), or a directory of manifests.

    `captured_at`, when given, is the moment the data describes, whatever the input says.
    """
    name = display_name or path.name
    if path.is_dir() or archive_kind(path, name=name) is not None:
        return artifact_load(path, max_bytes=max_bytes, display_name=display_name, captured_at=captured_at)
    try:
        size = path.stat().st_size
        fh = path.open("rb")
    except OSError as exc:
        raise SnapshotError(f"{name}: cannot be read ({exc.strerror}).") from None
    with fh:
        if size > max_bytes:
            raise SnapshotError(
                f"{name}: {size:,} bytes is over the limit of {max_bytes:,} bytes (SNAPSHOT_MAX_BYTES). "
                "Split it, or raise the limit."
            )
        snapshot = snapshot_parse(fh, name=name, max_bytes=max_bytes)
    if captured_at is not None:
        snapshot.captured_at = captured_at
    return snapshot


def snapshot_parse(fh: IO[bytes], *, name: str, max_bytes: int) -> Snapshot:
    """Read a snapshot from an open binary file; `name` is what messages call it."""
    assembler = SnapshotAssembler(Snapshot(source=name))
    with gc_paused():
        read_documents(LimitedReader(fh, name=name, max_bytes=max_bytes), assembler, name=name)
    return assembler.finish(name=name)


def snapshot_dump(snapshot: Snapshot, fh: IO[bytes]) -> None:
    """Write our own export: gzip JSON that records exactly what was collected.

    Written piece by piece, the format first and the objects last, kind by kind,
    so that neither writing nor reading it back holds the whole document.
    """
    header = {
        "format": FORMAT,
        "captured_at": snapshot.captured_at.isoformat() if snapshot.captured_at else None,
        "source": snapshot.source,
        "server_version": snapshot.server_version,
        "not_collected": snapshot.not_collected,
        "stats": snapshot.stats,
        "warnings": snapshot.warnings,
    }
    with gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, compresslevel=6) as gz:
        gz.write(orjson.dumps(header)[:-1] + b',"objects":{')
        for position, (kind, objects) in enumerate(snapshot.objects.items()):
            gz.write(b"," if position else b"")
            gz.write(orjson.dumps(kind) + b":[")
            for start in range(0, len(objects), DUMP_BATCH):
                gz.write(b"," if start else b"")
                gz.write(orjson.dumps(objects[start : start + DUMP_BATCH])[1:-1])
            gz.write(b"]")
        gz.write(b"}}")
