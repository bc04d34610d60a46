"""Control plane: enough API servers and etcd members to survive losing one."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import CONTROL_PLANE_LABELS, SnapshotIndex, cluster_object, labels_of, name_of, sample
from audits.severity import Severity


@check(
    id="KG-CP-001",
    title="Self-managed control plane runs on fewer than three nodes",
    area="control-plane",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("KC-029", "KC-076"),
    why=(
        "With one control-plane node, its failure stops the API, scheduling and self-healing; with two, stacked "
        "etcd loses quorum when either fails. A single-master cluster lost its whole control plane with nothing "
        "to fail over to."
    ),
    fix="Run three (or five) control-plane nodes in different failure domains. (Managed control planes, which "
    "show no control-plane nodes, are not reported.)",
)
def few_control_plane_nodes(index: SnapshotIndex) -> Iterator[Hit]:
    nodes = [n for n in index.of_kind("Node") if any(label in labels_of(n) for label in CONTROL_PLANE_LABELS)]
    if not nodes or len(nodes) >= 3:
        return
    yield Hit(
        cluster_object("control-plane"),
        f"The control plane runs on {len(nodes)} node(s): losing {'it' if len(nodes) == 1 else 'one'} stops the "
        "API server or etcd quorum.",
        {"control-plane nodes": sample(name_of(n) for n in nodes)},
    )


@check(
    id="KG-CP-002",
    title="etcd runs a member count that cannot lose a member",
    area="control-plane",
    severity=Severity.HIGH,
    needs=("Pod",),
    cases=("KC-029", "KC-076", "KC-008"),
    why=(
        "etcd needs a majority of members to accept writes. One or two members tolerate no failure, and an even "
        "count tolerates no more than the odd count below it while adding another voter to every election: "
        "partial failures left etcd without a leader and read-only."
    ),
    fix="Run an odd number of etcd members, at least three, on separate nodes and failure domains.",
)
def etcd_members(index: SnapshotIndex) -> Iterator[Hit]:
    members = [
        p
        for p in index.pods_by_namespace.get("kube-system", [])
        if labels_of(p).get("component") == "etcd" and p.get("status", {}).get("phase") != "Succeeded"
    ]
    count = len(members)
    if count == 0 or (count >= 3 and count % 2 == 1):
        return
    tolerates = (count - 1) // 2
    yield Hit(
        cluster_object("etcd"),
        f"etcd runs {count} member(s), which tolerate {tolerates} failure(s): "
        + ("one member failing stops all writes." if tolerates == 0 else "an even count adds risk without tolerance."),
        {"etcd pods": sample(name_of(p) for p in members), "members": count, "failures tolerated": tolerates},
    )
