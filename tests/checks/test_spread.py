"""KG-SPR: replicas that one node or zone takes down together, judged from where pods run."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found, three_zones

APP = [b.container("app", "shop/api:1.2.3")]


def test_replicas_running_on_one_node_are_found_whatever_the_rules_say() -> None:
    api = deployment(
        "api", "shop", ["n-a-1", "n-a-1", "n-a-1"], containers=APP, pod_spec=b.spread(labels={"app": "api"})
    )

    [finding] = found("KG-SPR-001", *three_zones(), *api)

    assert (finding.kind, finding.name) == ("Deployment", "api")
    assert "All 3 running replicas are on node n-a-1" in finding.message
    assert finding.evidence["node"] == "n-a-1"
    assert found("KG-SPR-001", *three_zones(), *deployment("api", "shop", ["n-a-1", "n-b-1"], containers=APP)) == []


def test_replicas_in_one_zone_of_a_multi_zone_cluster_are_found() -> None:
    nodes = three_zones(per_zone=2)

    [finding] = found("KG-SPR-002", *nodes, *deployment("api", "shop", ["n-a-1", "n-a-2"], containers=APP))

    assert "are in zone zone-a although the cluster spans 3 zones" in finding.message
    assert finding.evidence["nodes"] == ["n-a-1", "n-a-2"]
    assert found("KG-SPR-002", *nodes, *deployment("api", "shop", ["n-a-1", "n-b-1"], containers=APP)) == []


def test_a_cluster_in_one_zone_is_found() -> None:
    [finding] = found("KG-SPR-003", b.node("n1", zone="eu-1a"), b.node("n2", zone="eu-1a"))

    assert (finding.kind, finding.name) == ("Cluster", "zones")
    assert "All 2 nodes are in zone eu-1a" in finding.message
    assert finding.evidence["nodes by topology.kubernetes.io/zone"] == ["eu-1a"]
    assert found("KG-SPR-003", *three_zones()) == []


def test_a_cluster_without_zone_labels_is_one_failure_domain() -> None:
    unlabelled = b.node("n1")
    del unlabelled["metadata"]["labels"]["topology.kubernetes.io/zone"]

    [finding] = found("KG-SPR-003", unlabelled)

    assert "no node has a topology.kubernetes.io/zone label" in finding.message


def test_a_replicated_workload_without_spread_rules_is_found() -> None:
    bare = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)
    spread = b.workload(
        "Deployment", "api", "shop", replicas=3, containers=APP, pod_spec=b.spread(labels={"app": "api"})
    )
    anti = b.workload(
        "Deployment",
        "api",
        "shop",
        replicas=3,
        containers=APP,
        pod_spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}}},
    )

    [finding] = found("KG-SPR-004", *three_zones(), bare)

    assert "runs 3 replicas with no topologySpreadConstraints or podAntiAffinity" in finding.message
    assert found("KG-SPR-004", *three_zones(), spread) == []
    assert found("KG-SPR-004", *three_zones(), anti) == []
