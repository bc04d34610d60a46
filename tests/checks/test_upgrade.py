"""KG-UPG: version skew between nodes, kube-proxy and the API server; the removed master label."""

from __future__ import annotations

from audits.checks import CATALOG, evaluate
from audits.demo import builders as b
from tests.checks.helpers import daemonset, found, snapshot_of

APP = [b.container("app", "shop/api:1.2.3")]


def test_a_kubelet_two_minors_behind_the_newest_is_found() -> None:
    [finding] = found("KG-UPG-001", b.node("new", kubelet="v1.30.4"), b.node("old", kubelet="v1.28.9"))

    assert (finding.kind, finding.name) == ("Node", "old")
    assert "kubelet v1.28.9 is 2 minor versions behind the newest kubelet (1.30)" in finding.message
    assert found("KG-UPG-001", b.node("new", kubelet="v1.30.4"), b.node("old", kubelet="v1.29.8-eks-a737599")) == []


def test_kube_proxy_on_another_minor_than_the_kubelet_is_found() -> None:
    node = b.node("n1", kubelet="v1.30.4")
    old_proxy = daemonset(
        "kube-proxy",
        "kube-system",
        ["n1"],
        containers=[b.container("kube-proxy", "registry.k8s.io/kube-proxy:v1.29.3")],
    )
    same = daemonset(
        "kube-proxy",
        "kube-system",
        ["n1"],
        containers=[b.container("kube-proxy", "registry.k8s.io/kube-proxy:v1.30.4")],
    )

    [finding] = found("KG-UPG-002", node, *old_proxy)

    assert (finding.kind, finding.name) == ("Node", "n1")
    assert "kube-proxy v1.29.3 runs beside kubelet v1.30.4" in finding.message
    assert finding.evidence["kube-proxy image"] == "registry.k8s.io/kube-proxy:v1.29.3"
    assert found("KG-UPG-002", node, *same) == []


def test_a_node_selector_on_the_removed_master_label_is_found() -> None:
    reflector = b.workload(
        "DaemonSet",
        "route-reflector",
        "kube-system",
        containers=APP,
        pod_spec={"nodeSelector": {"node-role.kubernetes.io/master": ""}},
    )

    [finding] = found("KG-UPG-003", reflector)

    assert (finding.kind, finding.name) == ("DaemonSet", "route-reflector")
    assert finding.evidence["references"] == ["nodeSelector node-role.kubernetes.io/master"]


def test_tolerating_only_the_old_master_taint_is_found_and_both_pass() -> None:
    old = {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"}
    new = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
    only_old = b.workload("DaemonSet", "agent", "ops", containers=APP, pod_spec={"tolerations": [old]})
    both = b.workload("DaemonSet", "agent", "ops", containers=APP, pod_spec={"tolerations": [old, new]})

    [finding] = found("KG-UPG-003", only_old)

    assert "toleration for node-role.kubernetes.io/master without one for" in finding.message
    assert found("KG-UPG-003", both) == []


def test_a_kubelet_outside_the_api_server_skew_is_found() -> None:
    snap = snapshot_of(
        b.node("ancient", kubelet="v1.26.1"), b.node("ahead", kubelet="v1.31.0"), b.node("ok", kubelet="v1.27.2")
    )

    findings = evaluate(snap, [CATALOG["KG-UPG-004"]]).findings

    assert {f.name: f.message for f in findings} == {
        "ancient": (
            "Node's kubelet v1.26.1 is 4 minor versions older than the API server v1.30.4: outside the supported skew."
        ),
        "ahead": "Node's kubelet v1.31.0 is newer than the API server v1.30.4: outside the supported skew.",
    }


def test_kubelet_skew_is_not_evaluated_without_the_server_version() -> None:
    snap = snapshot_of(b.node("n1"))
    snap.server_version = ""

    assert evaluate(snap, [CATALOG["KG-UPG-004"]]).not_evaluated == {
        "KG-UPG-004": "the snapshot does not record the API server's version"
    }


def test_a_kube_proxy_tag_that_is_no_kubernetes_version_is_not_compared() -> None:
    private = daemonset(
        "kube-proxy", "kube-system", ["n1"], containers=[b.container("kube-proxy", "corp/kube-proxy:1.1.6")]
    )

    assert found("KG-UPG-002", b.node("n1", kubelet="v1.30.4"), *private) == []
