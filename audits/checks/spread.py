"""Spread and placement: replicas that one node or one zone takes down together.

Placement is judged from where pods actually run (spec.nodeName joined to the
node's zone label), not only from the rules a workload declares.
"""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import REGION_LABEL, ZONE_LABEL, SnapshotIndex, cluster_object, name_of, sample
from audits.severity import Severity

PLACED_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")


@check(
    id="KG-SPR-001",
    title="All replicas run on one node",
    area="spread",
    severity=Severity.HIGH,
    needs=("Pod",),
    cases=("KC-002", "KC-011", "KC-107"),
    why=(
        "Replicas on the same node fail together: one node crash, kernel panic or drain removes them all. The "
        "scheduler packed CPU-heavy pods onto one node until it panicked, and a single core node hosting every "
        "hub took all of them down with it."
    ),
    fix=(
        "Add topologySpreadConstraints on kubernetes.io/hostname (whenUnsatisfiable: DoNotSchedule for critical "
        "services) or required podAntiAffinity, then restart the pods so they are rescheduled apart."
    ),
)
def replicas_on_one_node(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads_of_kind(*PLACED_KINDS):
        pods = workload.active_pods()
        if len(pods) < 2:
            continue
        nodes, _ = index.placement(pods)
        if len(nodes) != 1:
            continue
        [node] = nodes
        yield Hit(
            workload.obj,
            f"All {len(pods)} running replicas are on node {node}: losing that one node takes the workload down.",
            {"node": node, "pods": sample(name_of(p) for p in pods)},
        )


@check(
    id="KG-SPR-002",
    title="All replicas run in one zone of a multi-zone cluster",
    area="spread",
    severity=Severity.MEDIUM,
    needs=("Pod", "Node"),
    cases=("KC-075", "KC-107"),
    why=(
        "A zone fails as a unit (power, network, a bad change). Services designed to be highly available went down "
        "with a single facility because everything they needed ran only there."
    ),
    fix=(
        "Add topologySpreadConstraints on topology.kubernetes.io/zone so replicas land in at least two zones, then "
        "restart the pods so they are rescheduled."
    ),
)
def replicas_in_one_zone(index: SnapshotIndex) -> Iterator[Hit]:
    if len(index.zones) < 2:
        return
    for workload in index.workloads_of_kind(*PLACED_KINDS):
        pods = workload.active_pods()
        if len(pods) < 2:
            continue
        nodes, zones = index.placement(pods)
        # One node is reported by KG-SPR-001; unlabelled nodes leave the zone unknown.
        if len(nodes) < 2 or len(zones) != 1 or any(index.zone_of_node(n) is None for n in nodes):
            continue
        [zone] = zones
        yield Hit(
            workload.obj,
            f"All {len(pods)} running replicas are in zone {zone} although the cluster spans "
            f"{len(index.zones)} zones: a zone outage takes the workload down.",
            {"zone": zone, "nodes": sample(nodes), "cluster zones": sorted(index.zones)},
        )


@check(
    id="KG-SPR-003",
    title="Cluster nodes are all in one zone",
    area="spread",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("IL-0256", "KC-075"),
    why=(
        "When every node sits in one zone (or carries no zone label at all), no spreading rule can survive that "
        "zone or site failing. Redundancy that shares one hidden failure domain fails at the worst moment, as the "
        "supposedly redundant links and load balancers did."
    ),
    fix=(
        "Add node pools in at least two more zones (or label nodes with topology.kubernetes.io/zone per rack or "
        "site on premises) and spread critical workloads across them."
    ),
)
def cluster_in_one_zone(index: SnapshotIndex) -> Iterator[Hit]:
    nodes = index.of_kind("Node")
    if not nodes or len(index.zones) >= 2:
        return
    if index.zones:
        [zone] = index.zones
        where = f"zone {zone}"
    else:
        where = "one unlabelled failure domain (no node has a topology.kubernetes.io/zone label)"
    yield Hit(
        cluster_object("zones"),
        f"All {len(nodes)} nodes are in {where}: a single zone outage stops the whole cluster.",
        {f"nodes by {ZONE_LABEL}": sorted(index.zones), f"nodes by {REGION_LABEL}": sorted(index.regions)},
    )


@check(
    id="KG-SPR-004",
    title="Replicated workload declares no spread across nodes or zones",
    area="spread",
    severity=Severity.LOW,
    needs=("Deployment",),
    cases=("KC-011", "KC-002"),
    why=(
        "Without topologySpreadConstraints or podAntiAffinity, the scheduler may pack replicas together whenever "
        "that is cheapest, and keep them together when they are rescheduled after a failure."
    ),
    fix=(
        "Declare topologySpreadConstraints for kubernetes.io/hostname and topology.kubernetes.io/zone (maxSkew: 1), "
        "or a podAntiAffinity on the hostname."
    ),
)
def no_spread_rules(index: SnapshotIndex) -> Iterator[Hit]:
    if len(index.node_by_name) == 1:
        return
    for workload in index.workloads_of_kind("Deployment", "StatefulSet"):
        replicas = workload.replicas or 0
        if replicas < 2:
            continue
        spec = workload.spec
        anti = (spec.get("affinity") or {}).get("podAntiAffinity") or {}
        if spec.get("topologySpreadConstraints") or anti:
            continue
        yield Hit(
            workload.obj,
            f"{workload.kind} runs {replicas} replicas with no topologySpreadConstraints or podAntiAffinity: nothing "
            "keeps them on different nodes or zones.",
            {"spec.replicas": replicas, "template.spec.topologySpreadConstraints": None, "podAntiAffinity": None},
        )
