"""KG-CAP: pods the scheduler cannot place, node pod ranges too small for max pods."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found


def test_pods_that_cannot_be_scheduled_are_found_with_the_schedulers_reason() -> None:
    dep, rs, running = deployment("api", "shop", ["n1"], containers=[b.container("app", "a:1")])
    pending = b.pod_for(rs, 1, "", unschedulable="0/3 nodes are available: 3 Insufficient memory.")

    [finding] = found("KG-CAP-001", dep, rs, running, pending)

    assert (finding.kind, finding.name) == ("Deployment", "api")
    assert "1 pod(s) cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory." in finding.message
    assert found("KG-CAP-001", dep, rs, running) == []


def test_a_node_range_smaller_than_its_pod_capacity_is_found() -> None:
    [finding] = found("KG-CAP-002", b.node("n1", pod_cidr="10.244.1.0/26"), b.node("n2", pod_cidr="10.244.2.0/24"))

    assert finding.name == "n1"
    assert "holds 62 usable addresses but the node may run 110 pods" in finding.message
    assert finding.evidence["spec.podCIDR"] == "10.244.1.0/26"
