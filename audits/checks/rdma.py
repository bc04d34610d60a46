"""RDMA and RoCE fabric: GPU training that breaks when the RDMA GID table changes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, Workload, labels_of, name_of, sample, selector_matches
from audits.severity import Severity

GID_ENV = "NCCL_IB_GID_INDEX"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RDMA_RESOURCE = re.compile(r"(^rdma/|/rdma|/roce|/hca|^mellanox\.com/|/sriov_rdma|/mlnx)", re.IGNORECASE)
RDMA_LABELS = ("feature.node.kubernetes.io/rdma.capable", "feature.node.kubernetes.io/rdma.available")
# Distributions whose servers configure interfaces with NetworkManager by default.
NETWORKMANAGER_OS = re.compile(
    r"red hat|rhel|rocky|almalinux|centos|oracle linux|fedora|coreos|openeuler|anolis", re.IGNORECASE
)


def _rdma_resources(resources: dict[str, object]) -> list[str]:
    return sorted(name for name in resources if RDMA_RESOURCE.search(name))


def rdma_signals(workload: Workload) -> dict[str, Any]:
    """What marks a workload as using the RDMA fabric: device resources, secondary networks, NCCL IB settings."""
    resources = {
        name
        for c in workload.containers
        for section in ("limits", "requests")
        for name in ((c.get("resources") or {}).get(section) or {})
        if RDMA_RESOURCE.search(name)
    }
    nccl = {
        e.get("name")
        for c in workload.containers
        for e in c.get("env") or []
        if str(e.get("name")).startswith("NCCL_IB")
    }
    signals: dict[str, Any] = {}
    if resources:
        signals["rdma resources"] = sorted(resources)
    if workload.annotations.get(NETWORKS_ANNOTATION):
        signals[NETWORKS_ANNOTATION] = workload.annotations[NETWORKS_ANNOTATION]
    if nccl:
        signals["NCCL IB settings"] = sorted(str(n) for n in nccl)
    return signals


def _env(container: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((e for e in container.get("env") or [] if e.get("name") == name), None)


@check(
    id="KG-RDMA-001",
    title="RDMA workload hard-codes NCCL_IB_GID_INDEX",
    area="rdma",
    severity=Severity.HIGH,
    needs=("Pod",),
    cases=("IL-0481", "KC-086"),
    why=(
        "A RoCE port's GID table can change at runtime: after a link flap the same IP address may come back at "
        "another index. A job pinned to a fixed NCCL_IB_GID_INDEX then talks on a GID that no longer exists and its "
        "collectives collapse, hours into training."
    ),
    fix=(
        "Remove NCCL_IB_GID_INDEX and let NCCL (2.21 or later) select the RoCEv2 GID itself, and keep the RDMA "
        "interfaces' addresses stable across link flaps (see KG-RDMA-002)."
    ),
)
def hardcoded_gid_index(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            pinned = _env(container, GID_ENV)
            disabled = _env(container, "NCCL_IB_DISABLE")
            if pinned is None or (disabled is not None and str(disabled.get("value")) == "1"):
                continue
            value = pinned["value"] if "value" in pinned else {"valueFrom": pinned.get("valueFrom")}
            shown = value if "value" in pinned else f"(from {_source(pinned)})"
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} pins {GID_ENV}={shown}; a GID change after a RoCE port flap "
                "breaks the job's communicator.",
                {"container": container.get("name"), f"env.{GID_ENV}": value, "rdma signals": rdma_signals(workload)},
                detail=str(container.get("name")),
            )


def _source(env: dict[str, Any]) -> str:
    ref = env.get("valueFrom") or {}
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if kind in ref:
            return f"{kind.removesuffix('KeyRef')} {ref[kind].get('name')}/{ref[kind].get('key')}"
    return "a reference"


def _sriov_rdma_nodes(index: SnapshotIndex) -> dict[str, list[str]]:
    """Nodes an SR-IOV network policy marks as RDMA, with the policies that do."""
    found: dict[str, list[str]] = {}
    for policy in index.of_kind("SriovNetworkNodePolicy"):
        spec = policy.get("spec", {})
        if not spec.get("isRdma"):
            continue
        selector = {"matchLabels": spec.get("nodeSelector") or {}}
        for name, node in index.node_by_name.items():
            if selector_matches(selector, labels_of(node)):
                found.setdefault(name, []).append(name_of(policy))
    return found


def _rdma_pods_by_node(index: SnapshotIndex) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for workload in index.workloads:
        signals = rdma_signals(workload)
        if "rdma resources" not in signals and NETWORKS_ANNOTATION not in signals:
            continue
        for pod in workload.active_pods():
            found.setdefault(str(pod["spec"]["nodeName"]), []).append(name_of(pod))
    return found


@check(
    id="KG-RDMA-002",
    title="RDMA node runs an OS that manages interfaces with NetworkManager",
    area="rdma",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("IL-0481",),
    why=(
        "NetworkManager removes an interface's IP address while its link is down. On a RoCE NIC that also removes "
        "the GID built from the address, and when the address returns it can land at a different GID index, "
        "crashing NCCL jobs that cached the old one."
    ),
    fix=(
        "Configure the RDMA interfaces with a method that keeps the address through a link flap (for example "
        "systemd-networkd or the distribution's static networking), or mark them unmanaged in NetworkManager."
    ),
)
def rdma_node_networkmanager(index: SnapshotIndex) -> Iterator[Hit]:
    sriov = _sriov_rdma_nodes(index)
    rdma_pods = _rdma_pods_by_node(index)
    for node in index.of_kind("Node"):
        status = node.get("status", {})
        os_image = str(status.get("nodeInfo", {}).get("osImage", ""))
        if not NETWORKMANAGER_OS.search(os_image):
            continue
        name = name_of(node)
        resources = _rdma_resources({**(status.get("capacity") or {}), **(status.get("allocatable") or {})})
        labels = {k: v for k, v in labels_of(node).items() if k in RDMA_LABELS and v == "true"}
        if not (resources or labels or name in sriov or name in rdma_pods):
            continue
        evidence: dict[str, Any] = {
            "status.nodeInfo.osImage": os_image,
            "rdma resources": resources,
            "rdma labels": labels,
        }
        if name in sriov:
            evidence["SR-IOV RDMA policies"] = sorted(sriov[name])
        if name in rdma_pods:
            evidence["RDMA pods on node"] = sample(rdma_pods[name], 5)
        yield Hit(
            node,
            f"Node has RDMA devices and runs {os_image!r}, whose default NetworkManager drops the address (and the "
            "RoCE GID) when a port flaps.",
            evidence,
        )
