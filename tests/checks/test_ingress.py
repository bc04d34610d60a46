"""KG-ING: ingress controllers and Local-traffic load balancers that one failure takes down."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found, three_zones

CONTROLLER = [b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2")]
NAME = "ingress-nginx-controller"
BALANCER = b.service(NAME, "ingress", {"app": NAME}, type_="LoadBalancer", external_traffic_policy="Local")


def controller(nodes: list[str], *, ready: int | None = None) -> list[b.Obj]:
    return deployment(NAME, "ingress", nodes, containers=CONTROLLER, ready=ready)


def test_ingress_controller_with_one_ready_replica_is_found() -> None:
    [finding] = found("KG-ING-001", *controller(["n1", "n2"], ready=1))

    assert (finding.kind, finding.name) == ("Deployment", NAME)
    assert "Ingress controller has 1 ready replica(s) of 2" in finding.message
    assert finding.evidence["pods"] == 2
    assert len(finding.evidence["ready pods"]) == 1
    assert found("KG-ING-001", *controller(["n1", "n2"])) == []


def test_ingress_controller_pods_on_one_node_or_zone_are_found() -> None:
    nodes = three_zones(per_zone=2)

    [on_node] = found("KG-ING-002", *nodes, *controller(["n-a-1", "n-a-1"]))
    [in_zone] = found("KG-ING-002", *nodes, *controller(["n-a-1", "n-a-2"]))

    assert "All 2 ingress controller pods run in node n-a-1" in on_node.message
    assert "run in zone zone-a" in in_zone.message
    assert found("KG-ING-002", *nodes, *controller(["n-a-1", "n-b-1"])) == []


def test_ingress_controller_without_pdb_is_found() -> None:
    [finding] = found("KG-ING-003", *controller(["n1", "n2"]))

    assert "Ingress controller has no PodDisruptionBudget" in finding.message
    assert found("KG-ING-003", *controller(["n1", "n2"]), b.pdb(NAME, "ingress", {"app": NAME})) == []


def test_a_local_load_balancer_with_endpoints_on_one_node_is_found() -> None:
    nodes = three_zones()

    [finding] = found("KG-ING-004", *nodes, BALANCER, *controller(["n-a-1", "n-a-1"]))

    assert (finding.kind, finding.name) == ("Service", NAME)
    assert "has all 2 ready endpoint(s) in node n-a-1" in finding.message
    assert finding.evidence["endpoint nodes"] == ["n-a-1"]
    assert found("KG-ING-004", *nodes, BALANCER, *controller(["n-a-1", "n-b-1"])) == []


def test_a_cluster_traffic_load_balancer_is_not_judged_on_placement() -> None:
    cluster_policy = b.service(NAME, "ingress", {"app": NAME}, type_="LoadBalancer", external_traffic_policy="Cluster")

    assert found("KG-ING-004", *three_zones(), cluster_policy, *controller(["n-a-1", "n-a-1"])) == []


def test_a_local_load_balancer_whose_endpoints_are_all_cordoned_is_found() -> None:
    cordoned = [b.node("old-1", unschedulable=True), b.node("old-2", unschedulable=True), b.node("new-1")]

    [finding] = found("KG-ING-005", *cordoned, BALANCER, *controller(["old-1", "old-2"]))

    assert (
        "Every ready endpoint of this Local-traffic LoadBalancer is on a cordoned node (old-1, old-2)"
        in finding.message
    )
    assert found("KG-ING-005", *cordoned, BALANCER, *controller(["old-1", "new-1"])) == []


def test_a_daemonset_ingress_controller_needs_no_pdb() -> None:
    ds = b.workload(
        "DaemonSet", "haproxy-ingress", "ingress", containers=[b.container("c", "haproxytech/kubernetes-ingress:3.0")]
    )

    assert found("KG-ING-003", ds, b.pod_for(ds, 0, "n1"), b.pod_for(ds, 1, "n2")) == []
