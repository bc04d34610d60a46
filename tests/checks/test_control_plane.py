"""KG-CP: control-plane nodes and etcd members."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

CONTROL_PLANE = {"node-role.kubernetes.io/control-plane": ""}


def etcd(node: str) -> b.Obj:
    return b.static_pod(
        "etcd", node, [b.container("etcd", "registry.k8s.io/etcd:3.5.15-0")], labels={"component": "etcd"}
    )


def test_a_single_control_plane_node_is_found() -> None:
    [finding] = found("KG-CP-001", b.node("master", labels=CONTROL_PLANE), b.node("w1"))

    assert (finding.kind, finding.name) == ("Cluster", "control-plane")
    assert "The control plane runs on 1 node(s): losing it stops" in finding.message
    assert finding.evidence["control-plane nodes"] == ["master"]


def test_three_or_no_control_plane_nodes_pass() -> None:
    assert found("KG-CP-001", *(b.node(f"cp{i}", labels=CONTROL_PLANE) for i in range(3))) == []
    assert found("KG-CP-001", b.node("w1"), b.node("w2")) == []  # a managed control plane


def test_one_or_an_even_number_of_etcd_members_is_found() -> None:
    [single] = found("KG-CP-002", etcd("cp1"))
    [even] = found("KG-CP-002", *(etcd(f"cp{i}") for i in range(4)))

    assert (single.kind, single.name) == ("Cluster", "etcd")
    assert single.message == "etcd runs 1 member(s), which tolerate 0 failure(s): one member failing stops all writes."
    assert even.evidence["failures tolerated"] == 1
    assert found("KG-CP-002", *(etcd(f"cp{i}") for i in range(3))) == []


def test_static_pods_are_not_workloads_to_judge() -> None:
    assert found("KG-RES-001", etcd("cp1")) == []
