"""Where a cluster's data comes from, turned into a Snapshot."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from audits.collect.files import snapshot_load
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.models import AuditRun, Cluster, SourceKind


def snapshot_for_run(run: AuditRun) -> Snapshot:
    """The data a run audits: its own imported file, or a fresh read of its cluster."""
    if run.snapshot_file:
        return snapshot_load(
            Path(str(run.snapshot_file.path)),
            max_bytes=settings.SNAPSHOT_MAX_BYTES,
            display_name=Path(str(run.snapshot_file.name)).name,
        )
    return snapshot_for_cluster(run.cluster)


def snapshot_for_cluster(cluster: Cluster) -> Snapshot:
    if cluster.source_kind == SourceKind.SNAPSHOT:
        if not cluster.source_file:
            raise SnapshotError(f"cluster {cluster.name!r} has no snapshot file; upload one.")
        return snapshot_load(
            Path(str(cluster.source_file.path)),
            max_bytes=settings.SNAPSHOT_MAX_BYTES,
            display_name=Path(str(cluster.source_file.name)).name,
        )
    raise SnapshotError(
        f"cluster {cluster.name!r} reads from a {cluster.get_source_kind_display()}, "
        "which this version cannot collect yet."
    )
