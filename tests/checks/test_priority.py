"""KG-PRI: preempting priority classes on large pods, and node agents without system priority."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

BIG = [b.container("ingester", "cortex/ingester:1.9", memory_request="16Gi", memory_limit="16Gi", cpu_request="4")]
SMALL = [b.container("app", "shop/api:1.2.3")]


def ingesters(class_name: str = "high") -> b.Obj:
    return b.workload(
        "StatefulSet", "ingester", "metrics", replicas=6, containers=BIG, pod_spec={"priorityClassName": class_name}
    )


def test_large_preempting_pods_with_unprotected_victims_are_found() -> None:
    victim = b.workload("Deployment", "api", "shop", replicas=3, containers=SMALL)

    [finding] = found("KG-PRI-001", b.priority_class("high", 1000000), ingesters(), victim)

    assert (finding.kind, finding.name) == ("StatefulSet", "ingester")
    assert "request 4 CPU and 16.0Gi each and may preempt 1 lower-priority workload(s)" in finding.message
    assert finding.evidence["unprotected lower-priority workloads"] == ["Deployment/shop/api"]
    assert finding.evidence["preemptionPolicy"] == "PreemptLowerPriority"


def test_protected_victims_or_a_non_preempting_class_pass() -> None:
    victim = b.workload("Deployment", "api", "shop", replicas=3, containers=SMALL)
    budget = b.pdb("api", "shop", {"app": "api"})

    assert found("KG-PRI-001", b.priority_class("high", 1000000), ingesters(), victim, budget) == []
    assert found("KG-PRI-001", b.priority_class("high", 1000000, preemption_policy="Never"), ingesters(), victim) == []


def test_a_kube_system_daemonset_without_system_priority_is_found() -> None:
    cni = b.workload("DaemonSet", "cilium", "kube-system", containers=SMALL)
    critical = b.workload(
        "DaemonSet", "cilium", "kube-system", containers=SMALL, pod_spec={"priorityClassName": "system-node-critical"}
    )

    [finding] = found("KG-PRI-002", cni)

    assert (finding.kind, finding.name) == ("DaemonSet", "cilium")
    assert "runs with priority none" in finding.message
    assert found("KG-PRI-002", critical) == []
