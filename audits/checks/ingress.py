"""Load balancing and ingress: the front door must survive losing one of anything."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, name_of, pod_is_ready, sample
from audits.collect.snapshot import Obj
from audits.severity import Severity


@check(
    id="KG-ING-001",
    title="Ingress controller has fewer than two ready replicas",
    area="ingress",
    severity=Severity.CRITICAL,
    needs=("Pod",),
    cases=("IL-0256", "KC-022", "KC-021"),
    why=(
        "Every request to the cluster's services passes through the ingress controller. With one ready replica, "
        "its crash, eviction or the node under it failing is a full outage of everything behind it, and failover "
        "to a replacement is exactly the step that tends to go wrong under pressure."
    ),
    fix="Run at least two ready controller replicas on different nodes and zones, with a PodDisruptionBudget.",
)
def controller_ready_replicas(index: SnapshotIndex) -> Iterator[Hit]:
    for controller in index.ingress_controllers:
        ready = sorted(name_of(p) for p in controller.ready_pods())
        if len(ready) >= 2:
            continue
        yield Hit(
            controller.obj,
            f"Ingress controller has {len(ready)} ready replica(s) of {len(controller.pods)}: losing one pod or node "
            "stops all ingress traffic.",
            {
                "ready pods": ready,
                "pods": len(controller.pods),
                "spec.replicas": controller.obj.get("spec", {}).get("replicas"),
            },
        )


@check(
    id="KG-ING-002",
    title="Ingress controller replicas share one node or one zone",
    area="ingress",
    severity=Severity.HIGH,
    needs=("Pod", "Node"),
    cases=("IL-0256", "KC-022", "KC-082"),
    why=(
        "Redundant replicas that share a node or a zone fail together, like redundant links that shared one path: "
        "the second replica only helps if it survives what takes the first one down."
    ),
    fix="Spread the controller with topologySpreadConstraints on kubernetes.io/hostname and "
    "topology.kubernetes.io/zone, then restart it so the pods are rescheduled apart.",
)
def controller_placement(index: SnapshotIndex) -> Iterator[Hit]:
    for controller in index.ingress_controllers:
        pods = controller.active_pods()
        if len(pods) < 2:
            continue  # one replica is reported by KG-ING-001
        nodes, zones = index.placement(pods)
        where = index.failure_domain(nodes, zones)
        if where is None:
            continue
        yield Hit(
            controller.obj,
            f"All {len(pods)} ingress controller pods run in {where}: losing it stops all ingress traffic.",
            {"nodes": sample(nodes), "zones": sorted(zones), "cluster zones": sorted(index.zones)},
        )


@check(
    id="KG-ING-003",
    title="Ingress controller has no PodDisruptionBudget",
    area="ingress",
    severity=Severity.HIGH,
    needs=("Pod", "PodDisruptionBudget"),
    cases=("IL-0256", "KC-021", "KC-022"),
    why=(
        "Without a budget a drain or upgrade may evict every controller pod at once; upgrades that drained node "
        "pools took the ingress tier with them and turned a planned window into hours of lost traffic."
    ),
    fix="Add a PodDisruptionBudget for the controller pods with maxUnavailable: 1 (and run at least two replicas).",
)
def controller_without_pdb(index: SnapshotIndex) -> Iterator[Hit]:
    for controller in index.ingress_controllers:
        # Drains leave DaemonSet pods in place, so a budget would protect nothing there.
        if controller.kind == "DaemonSet" or index.workload_pdbs(controller):
            continue
        yield Hit(
            controller.obj,
            "Ingress controller has no PodDisruptionBudget: a drain or upgrade may evict all its pods at once.",
            {"template.labels": controller.labels, "matching PodDisruptionBudgets": []},
        )


def _local_load_balancers(index: SnapshotIndex) -> Iterator[tuple[Obj, list[Obj]]]:
    """LoadBalancer Services with externalTrafficPolicy: Local, with their ready backend pods."""
    for svc in index.of_kind("Service"):
        spec = svc.get("spec", {})
        if spec.get("type") != "LoadBalancer" or spec.get("externalTrafficPolicy") != "Local":
            continue
        ready = [p for p in index.service_pods(svc) if pod_is_ready(p) and p.get("spec", {}).get("nodeName")]
        if ready:
            yield svc, ready


@check(
    id="KG-ING-004",
    title="Local-traffic LoadBalancer has all its endpoints on one node or zone",
    area="ingress",
    severity=Severity.HIGH,
    needs=("Service", "Pod", "Node"),
    cases=("KC-022", "IL-0256"),
    why=(
        "With externalTrafficPolicy: Local the cloud load balancer only sends traffic to nodes that host a ready "
        "endpoint. When those all sit on one node or zone, losing it leaves the load balancer with no healthy "
        "target at all: a drain did exactly that to an ingress tier."
    ),
    fix="Spread the backing pods over several nodes and zones (topologySpreadConstraints), or use "
    "externalTrafficPolicy: Cluster if client source IPs are not needed.",
)
def local_lb_concentrated(index: SnapshotIndex) -> Iterator[Hit]:
    for svc, ready in _local_load_balancers(index):
        nodes, zones = index.placement(ready)
        where = index.failure_domain(nodes, zones)
        if where is None:
            continue
        yield Hit(
            svc,
            f"LoadBalancer Service with externalTrafficPolicy: Local has all {len(ready)} ready endpoint(s) in "
            f"{where}: losing it leaves the load balancer no healthy target.",
            {"spec.externalTrafficPolicy": "Local", "endpoint nodes": sample(nodes), "endpoint zones": sorted(zones)},
        )


@check(
    id="KG-ING-005",
    title="Local-traffic LoadBalancer's endpoints are all on cordoned nodes",
    area="ingress",
    severity=Severity.CRITICAL,
    needs=("Service", "Pod", "Node"),
    cases=("KC-022",),
    why=(
        "Cordoned nodes are about to be drained, and cloud load balancers stop targeting them. When every ready "
        "endpoint of a Local-traffic Service sits on such nodes, the load balancer is left pointing at new nodes "
        "with no endpoint, which took down all ingress in a drain."
    ),
    fix=(
        "Move (restart) the backing pods onto schedulable nodes before draining, and keep a PodDisruptionBudget on "
        "them."
    ),
)
def local_lb_on_cordoned_nodes(index: SnapshotIndex) -> Iterator[Hit]:
    for svc, ready in _local_load_balancers(index):
        nodes, _ = index.placement(ready)
        known = [index.node_by_name[n] for n in nodes if n in index.node_by_name]
        if len(known) != len(nodes) or not all(n.get("spec", {}).get("unschedulable") for n in known):
            continue
        yield Hit(
            svc,
            "Every ready endpoint of this Local-traffic LoadBalancer is on a cordoned node "
            f"({', '.join(sorted(nodes))}): when they are drained the load balancer has no healthy target.",
            {"spec.externalTrafficPolicy": "Local", "cordoned endpoint nodes": sample(nodes)},
        )
