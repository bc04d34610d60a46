"""KG-DNS: CoreDNS replicas, budget, placement, memory, and ndots amplification."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import daemonset, deployment, found, three_zones

APP = [b.container("app", "shop/api:1.2.3")]
NODES = three_zones(per_zone=2)


def coredns(nodes: list[str], *, memory: str = "512Mi", ready: int | None = None) -> list[b.Obj]:
    container = b.container("coredns", "registry.k8s.io/coredns/coredns:v1.11.3", memory_limit=memory)
    return deployment(
        "coredns", "kube-system", nodes, containers=[container], ready=ready, labels={"k8s-app": "kube-dns"}
    )


def test_coredns_with_one_replica_is_found() -> None:
    [finding] = found("KG-DNS-001", *NODES, *coredns(["n-a-1"]))

    assert (finding.kind, finding.namespace, finding.name) == ("Deployment", "kube-system", "coredns")
    assert "Cluster DNS has 1 ready pod(s) for 1 replica(s)" in finding.message
    assert finding.evidence["spec.replicas"] == 1


def test_coredns_with_only_one_ready_pod_is_found_and_two_ready_pass() -> None:
    [finding] = found("KG-DNS-001", *NODES, *coredns(["n-a-1", "n-b-1"], ready=1))

    assert finding.evidence["spec.replicas"] == 2
    assert len(finding.evidence["ready pods"]) == 1
    assert found("KG-DNS-001", *NODES, *coredns(["n-a-1", "n-b-1"])) == []


def test_coredns_without_a_pdb_is_found() -> None:
    [finding] = found("KG-DNS-002", *coredns(["n-a-1", "n-b-1"]))

    assert "Cluster DNS has no PodDisruptionBudget" in finding.message
    assert found("KG-DNS-002", *coredns(["n-a-1", "n-b-1"]), b.pdb("coredns", "kube-system", {"app": "coredns"})) == []


def test_coredns_pods_on_one_node_or_in_one_zone_are_found() -> None:
    [on_node] = found("KG-DNS-003", *NODES, *coredns(["n-a-1", "n-a-1"]))
    [in_zone] = found("KG-DNS-003", *NODES, *coredns(["n-a-1", "n-a-2"]))

    assert "All 2 CoreDNS pods run in node n-a-1" in on_node.message
    assert "All 2 CoreDNS pods run in zone zone-a" in in_zone.message
    assert in_zone.evidence["zones"] == ["zone-a"]
    assert found("KG-DNS-003", *NODES, *coredns(["n-a-1", "n-b-1"])) == []


def test_a_coredns_memory_limit_below_twice_the_estimate_is_found() -> None:
    [finding] = found("KG-DNS-004", *coredns(["n-a-1", "n-b-1"], memory="100Mi"))

    assert "CoreDNS memory limit 100Mi is below 108Mi" in finding.message
    assert finding.evidence["pods + services"] == 2
    assert finding.evidence["required MiB"] == 108
    assert found("KG-DNS-004", *coredns(["n-a-1", "n-b-1"], memory="170Mi")) == []


def test_autopath_raises_the_memory_coredns_needs() -> None:
    services = [b.service(f"s{i}", "shop", {"app": f"s{i}"}) for i in range(2000)]
    autopath = b.config_map("coredns", "kube-system", {"Corefile": ".:53 {\n    autopath @kubernetes\n}\n"})
    plain = b.config_map("coredns", "kube-system", {"Corefile": ".:53 {\n    cache 30\n}\n"})

    [finding] = found("KG-DNS-004", *coredns(["n-a-1", "n-b-1"], memory="120Mi"), *services, autopath)

    assert finding.evidence["autopath"] is True
    assert finding.evidence["required MiB"] == 128
    assert found("KG-DNS-004", *coredns(["n-a-1", "n-b-1"], memory="120Mi"), *services, plain) == []


def test_default_ndots_without_node_local_dns_is_found() -> None:
    api = b.workload("Deployment", "api", "shop", containers=APP)
    tuned = b.workload(
        "Deployment",
        "api",
        "shop",
        containers=APP,
        pod_spec={"dnsConfig": {"options": [{"name": "ndots", "value": "2"}]}},
    )
    cache = daemonset(
        "node-local-dns",
        "kube-system",
        ["n-a-1"],
        containers=[b.container("c", "registry.k8s.io/dns/k8s-dns-node-cache:1.23.1")],
    )

    [finding] = found("KG-DNS-005", api)

    assert (finding.kind, finding.name) == ("Deployment", "api")
    assert "resolve names with ndots:5 and no node-local DNS cache" in finding.message
    assert finding.evidence["dnsConfig.options.ndots"] == 5
    assert found("KG-DNS-005", tuned) == []
    assert found("KG-DNS-005", api, *cache) == []
