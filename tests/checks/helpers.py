"""Building snapshots and reading findings in check tests.

Snapshots are built through Snapshot.add, which projects every object, so a
passing test also proves the projection keeps what the check reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from audits.checks import CATALOG, evaluate
from audits.checks.engine import Finding
from audits.collect.kinds import KINDS
from audits.collect.snapshot import Snapshot
from audits.demo import builders as b

Obj = b.Obj
CAPTURED_AT = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
SERVER_VERSION = "v1.30.4"
ALL_KINDS = tuple(kind.name for kind in KINDS)


def snapshot_of(*objects: Obj, kinds: Iterable[str] = ALL_KINDS) -> Snapshot:
    """A snapshot of these objects in which every kind in `kinds` counts as collected."""
    snap = Snapshot(source="test", captured_at=CAPTURED_AT, server_version=SERVER_VERSION)
    for kind in kinds:
        snap.mark_collected(kind)
    for obj in objects:
        if snap.add(obj):
            snap.mark_collected(obj["kind"])
    return snap


def findings_of(check_id: str, snap: Snapshot) -> list[Finding]:
    evaluation = evaluate(snap, [CATALOG[check_id]])
    assert check_id not in evaluation.not_evaluated, evaluation.not_evaluated
    return evaluation.findings


def found(check_id: str, *objects: Obj) -> list[Finding]:
    """The findings of one check over a snapshot of these objects, every kind collected."""
    return findings_of(check_id, snapshot_of(*objects))


def deployment(
    name: str,
    namespace: str,
    nodes: list[str],
    *,
    replicas: int | None = None,
    containers: list[Obj],
    ready: int | None = None,
    **kw: object,
) -> list[Obj]:
    """A Deployment with its ReplicaSet and one pod per node listed (replicas defaults to that count)."""
    replicas = len(nodes) if replicas is None else replicas
    dep = b.workload("Deployment", name, namespace, replicas=replicas, containers=containers, **kw)  # type: ignore[arg-type]
    rs = b.replicaset_for(dep)
    ready = len(nodes) if ready is None else ready
    return [dep, rs, *(b.pod_for(rs, i, node, ready=i < ready) for i, node in enumerate(nodes))]


def statefulset(name: str, namespace: str, nodes: list[str], *, containers: list[Obj], **kw: object) -> list[Obj]:
    sts = b.workload("StatefulSet", name, namespace, replicas=len(nodes), containers=containers, **kw)  # type: ignore[arg-type]
    return [sts, *(b.pod_for(sts, i, node) for i, node in enumerate(nodes))]


def daemonset(name: str, namespace: str, nodes: list[str], *, containers: list[Obj], **kw: object) -> list[Obj]:
    ds = b.workload("DaemonSet", name, namespace, containers=containers, **kw)  # type: ignore[arg-type]
    return [ds, *(b.pod_for(ds, i, node) for i, node in enumerate(nodes))]


def three_zones(prefix: str = "n", per_zone: int = 1) -> list[Obj]:
    """Nodes spread over zones a, b and c, named <prefix>-<zone>-<i>."""
    return [b.node(f"{prefix}-{z}-{i}", zone=f"zone-{z}") for z in "abc" for i in range(1, per_zone + 1)]
