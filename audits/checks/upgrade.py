"""Upgrades and version skew: node components on versions that do not work together,
and configuration that the next upgrade silently breaks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, NotEvaluated, check
from audits.checks.index import SnapshotIndex, image_tag, minor_version
from audits.severity import Severity

REMOVED_MASTER_LABEL = "node-role.kubernetes.io/master"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
# kubelets may be up to three minor versions older than the API server, never newer.
KUBELET_SKEW = 3
# A kube-proxy tag further than this from the kubelet is not a Kubernetes version at all.
MAX_PLAUSIBLE_SKEW = 8


def _kubelet(node: dict[str, Any]) -> str:
    return str(node.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", ""))


def _fmt(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


@check(
    id="KG-UPG-001",
    title="Kubelet versions are more than one minor version apart",
    area="upgrade",
    severity=Severity.MEDIUM,
    needs=("Node",),
    cases=("KC-003", "KC-021", "KC-007"),
    why=(
        "Nodes left several minor versions behind mean the next upgrade has to jump them, and components that "
        "depend on node behaviour see two clusters at once. Upgrades that skipped or stalled between versions "
        "stretched a two-hour window to seven and left kubelet and kube-proxy mismatched."
    ),
    fix="Upgrade the lagging node pools one minor version at a time until every kubelet is within one minor version.",
)
def kubelet_spread(index: SnapshotIndex) -> Iterator[Hit]:
    versions = {name: v for name, node in index.node_by_name.items() if (v := minor_version(_kubelet(node)))}
    if not versions:
        return
    newest = max(versions.values())
    for name, version in sorted(versions.items()):
        if version[0] == newest[0] and newest[1] - version[1] <= 1:
            continue
        node = index.node_by_name[name]
        yield Hit(
            node,
            f"Node's kubelet {_kubelet(node)} is {newest[1] - version[1]} minor versions behind the newest kubelet "
            f"({_fmt(newest)}) in the cluster.",
            {"status.nodeInfo.kubeletVersion": _kubelet(node), "newest kubelet minor": _fmt(newest)},
        )


@check(
    id="KG-UPG-002",
    title="kube-proxy version differs from the node's kubelet",
    area="upgrade",
    severity=Severity.MEDIUM,
    needs=("Pod", "Node"),
    cases=("KC-007", "KC-081"),
    why=(
        "kube-proxy programs each node's service rules; a staged upgrade that left it on another version than the "
        "kubelet made iptables-restore fail and corrupted service routing on the affected nodes."
    ),
    fix="Upgrade kube-proxy together with the node's kubelet (the kube-proxy DaemonSet image tag must match the "
    "kubelet's minor version).",
)
def kube_proxy_skew(index: SnapshotIndex) -> Iterator[Hit]:
    for pod in index.pods_by_namespace.get("kube-system", []):
        node_name = pod.get("spec", {}).get("nodeName")
        node = index.node_by_name.get(str(node_name)) if node_name else None
        if node is None:
            continue
        for container in pod.get("spec", {}).get("containers") or []:
            repository, tag, _ = image_tag(str(container.get("image", "")))
            if not repository.endswith("kube-proxy"):
                continue
            proxy, kubelet = minor_version(tag), minor_version(_kubelet(node))
            if proxy is None or kubelet is None or proxy == kubelet:
                continue
            if proxy[0] != kubelet[0] or abs(proxy[1] - kubelet[1]) > MAX_PLAUSIBLE_SKEW:
                continue  # a private build number, not a Kubernetes release: nothing to compare
            yield Hit(
                node,
                f"kube-proxy {tag} runs beside kubelet {_kubelet(node)} on this node: mismatched versions can "
                "corrupt its service rules.",
                {
                    "kube-proxy pod": pod["metadata"]["name"],
                    "kube-proxy image": container.get("image"),
                    "status.nodeInfo.kubeletVersion": _kubelet(node),
                },
            )


def _master_references(spec: dict[str, Any]) -> list[str]:
    """Where a pod spec still relies on the label Kubernetes 1.24 stopped setting."""
    found = []
    if REMOVED_MASTER_LABEL in (spec.get("nodeSelector") or {}):
        found.append(f"nodeSelector {REMOVED_MASTER_LABEL}")
    node_affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = (node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    preferred = [
        p.get("preference") or {} for p in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    ]
    for kind, terms in (("required", required or []), ("preferred", preferred)):
        for term in terms:
            if any(e.get("key") == REMOVED_MASTER_LABEL for e in term.get("matchExpressions") or []):
                found.append(f"{kind} nodeAffinity on {REMOVED_MASTER_LABEL}")
    tolerated = {t.get("key") for t in spec.get("tolerations") or []}
    # Tolerating only the old taint keeps the pod off control-plane nodes of upgraded clusters.
    if REMOVED_MASTER_LABEL in tolerated and CONTROL_PLANE_LABEL not in tolerated and None not in tolerated:
        found.append(f"toleration for {REMOVED_MASTER_LABEL} without one for {CONTROL_PLANE_LABEL}")
    return found


@check(
    id="KG-UPG-003",
    title="Scheduling still relies on the removed node-role.kubernetes.io/master label",
    area="upgrade",
    severity=Severity.HIGH,
    needs=("Deployment",),
    cases=("KC-003",),
    why=(
        "Kubernetes 1.24 no longer puts node-role.kubernetes.io/master on control-plane nodes (and 1.25 dropped the "
        "matching taint). Pods selected by that label silently lose every eligible node on upgrade: Calico route "
        "reflectors chosen this way vanished and routing collapsed for over five hours."
    ),
    fix="Select and tolerate node-role.kubernetes.io/control-plane instead (keep both during the transition).",
)
def removed_master_label(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        found = _master_references(workload.spec)
        if not found:
            continue
        yield Hit(
            workload.obj,
            f"Pod template relies on {REMOVED_MASTER_LABEL}, which upgraded control-plane nodes no longer carry: "
            f"{'; '.join(found)}.",
            {"references": found},
        )


@check(
    id="KG-UPG-004",
    title="Kubelet is outside the supported skew of the API server",
    area="upgrade",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("KC-021", "KC-007"),
    why=(
        "A kubelet newer than the API server, or more than three minor versions older, is outside Kubernetes' "
        "supported skew: the next control-plane upgrade can break it, and upgrades that jumped versions were the "
        "ones that went wrong."
    ),
    fix="Upgrade (or replace) the node so its kubelet is no newer than the API server and at most three minor "
    "versions older.",
)
def kubelet_server_skew(index: SnapshotIndex) -> Iterator[Hit]:
    server = minor_version(index.server_version)
    if server is None:
        raise NotEvaluated("the snapshot does not record the API server's version")
    for node in index.of_kind("Node"):
        kubelet = minor_version(_kubelet(node))
        if kubelet is None or kubelet[0] != server[0]:
            continue
        behind = server[1] - kubelet[1]
        if 0 <= behind <= KUBELET_SKEW:
            continue
        relation = "newer than" if behind < 0 else f"{behind} minor versions older than"
        yield Hit(
            node,
            f"Node's kubelet {_kubelet(node)} is {relation} the API server {index.server_version}: outside the "
            "supported skew.",
            {"status.nodeInfo.kubeletVersion": _kubelet(node), "server version": index.server_version},
        )
