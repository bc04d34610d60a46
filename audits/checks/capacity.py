"""Capacity: pods the cluster cannot place, and node address ranges too small for the
pods a node may run."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, name_of, sample
from audits.collect.snapshot import Obj
from audits.severity import Severity


def _unschedulable(pod: Obj) -> str | None:
    """The scheduler's message for a pod it could not place, or None."""
    if pod.get("status", {}).get("phase") != "Pending":
        return None
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return str(condition.get("message") or "Unschedulable")
    return None


@check(
    id="KG-CAP-001",
    title="Pods cannot be scheduled",
    area="capacity",
    severity=Severity.HIGH,
    needs=("Pod",),
    cases=("KC-108", "KC-020", "KC-067"),
    why=(
        "Pods the scheduler cannot place mean the cluster is out of something (CPU, memory, pod IPs, matching "
        "nodes). Workloads stuck Pending for half an hour, an autoscaler stuck on an exhausted pod range, and "
        "subnets without free addresses all showed up first as unschedulable pods."
    ),
    fix="Read the scheduler's message in the evidence: add nodes or capacity, widen address ranges, or fix the "
    "constraint (selector, affinity, taint) that no node satisfies.",
)
def unschedulable_pods(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        stuck = [(pod, message) for pod in workload.pods if (message := _unschedulable(pod)) is not None]
        if not stuck:
            continue
        yield Hit(
            workload.obj,
            f"{len(stuck)} pod(s) cannot be scheduled: {stuck[0][1][:200]}",
            {"pending pods": sample(name_of(p) for p, _ in stuck), "scheduler message": stuck[0][1][:300]},
        )


def _usable_addresses(cidr: str) -> int | None:
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return None
    if network.version != 4:
        return None  # an IPv6 node range is never the limit
    return max(network.num_addresses - 2, 0)


@check(
    id="KG-CAP-002",
    title="Node's pod address range is smaller than the pods it may run",
    area="capacity",
    severity=Severity.MEDIUM,
    needs=("Node",),
    cases=("KC-020", "KC-067"),
    why=(
        "Each node hands pod IPs out of its own podCIDR. When the range holds fewer addresses than the node's pod "
        "capacity, pods fail to start with sandbox errors long before CPU or memory run out; address planning "
        "capped a cluster's growth and left an autoscaler stuck."
    ),
    fix="Lower the node's max pods to fit its range, or give nodes larger pod ranges (a bigger node CIDR mask size).",
)
def pod_cidr_too_small(index: SnapshotIndex) -> Iterator[Hit]:
    for node in index.of_kind("Node"):
        cidr = node.get("spec", {}).get("podCIDR")
        max_pods = (node.get("status", {}).get("capacity") or {}).get("pods")
        if not cidr or max_pods is None:
            continue
        usable = _usable_addresses(str(cidr))
        try:
            capacity = int(max_pods)
        except (TypeError, ValueError):
            continue
        if usable is None or usable >= capacity:
            continue
        yield Hit(
            node,
            f"Node's pod range {cidr} holds {usable} usable addresses but the node may run {capacity} pods: pods "
            "beyond that fail to get an IP.",
            {"spec.podCIDR": cidr, "usable addresses": usable, "status.capacity.pods": capacity},
        )
