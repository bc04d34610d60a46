"""Where a cluster's data comes from, turned into a Snapshot."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from audits.collect import live
from audits.collect.files import snapshot_load
from audits.collect.kubeconfig import kubeconfig_decrypt
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.models import AuditRun, Cluster, SourceKind


def snapshot_for_run(run: AuditRun, progress: live.Progress | None = None) -> Snapshot:
    """The data a run audits: its own imported file, or a fresh read of its cluster."""
    if run.snapshot_file:
        return snapshot_load(
            Path(str(run.snapshot_file.path)),
            max_bytes=settings.SNAPSHOT_MAX_BYTES,
            display_name=Path(str(run.snapshot_file.name)).name,
        )
    return snapshot_for_cluster(run.cluster, progress)


def snapshot_for_cluster(cluster: Cluster, progress: live.Progress | None = None) -> Snapshot:
    match cluster.source_kind:
        case SourceKind.SNAPSHOT:
            if not cluster.source_file:
                raise SnapshotError(f"cluster {cluster.name!r} has no snapshot file; upload one.")
            return snapshot_load(
                Path(str(cluster.source_file.path)),
                max_bytes=settings.SNAPSHOT_MAX_BYTES,
                display_name=Path(str(cluster.source_file.name)).name,
            )
        case SourceKind.KUBECONFIG:
            config = kubeconfig_decrypt(bytes(cluster.kubeconfig_encrypted))
            return live.collect(live.api_client_from_kubeconfig(config), progress=progress, source=cluster.kube_context)
        case SourceKind.IN_CLUSTER:
            return live.collect(live.api_client_in_cluster(), progress=progress, source="in-cluster service account")
        case SourceKind.MANIFESTS:
            return snapshot_load(Path(cluster.source_path), max_bytes=settings.SNAPSHOT_MAX_BYTES)
    raise SnapshotError(f"cluster {cluster.name!r} has an unknown source {cluster.source_kind!r}.")
