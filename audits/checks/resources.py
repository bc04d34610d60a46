"""Resources: containers that can starve or OOM the node they share, and nodes that
are already under pressure."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SERVING_KINDS, SnapshotIndex, name_of, sample
from audits.severity import Severity

PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")


@check(
    id="KG-RES-001",
    title="Container has no memory limit",
    area="resources",
    severity=Severity.MEDIUM,
    needs=("Deployment",),
    cases=("KC-013", "KC-014", "KC-001"),
    why=(
        "A container without a memory limit can grow until the node runs out of memory; the kernel then kills "
        "whatever it picks, often system components, and the node goes NotReady with everything on it."
    ),
    fix="Set resources.limits.memory (and a matching request) from the container's observed peak plus headroom.",
)
def missing_memory_limit(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            limits = (container.get("resources") or {}).get("limits") or {}
            if "memory" in limits:
                continue
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} has no memory limit and can exhaust its node's memory.",
                {"container": container.get("name"), "resources": container.get("resources") or {}},
                detail=str(container.get("name")),
            )


@check(
    id="KG-RES-002",
    title="Container requests no CPU or no memory",
    area="resources",
    severity=Severity.MEDIUM,
    needs=("Deployment",),
    cases=("KC-013", "KC-039", "KC-011"),
    why=(
        "The scheduler places pods by their requests. A container that requests nothing is counted as free, so "
        "nodes are overcommitted until they hit real limits: log shippers and releases without requests pushed "
        "nodes into OOM and NotReady."
    ),
    fix="Set resources.requests.cpu and resources.requests.memory to the container's typical usage.",
)
def missing_requests(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            # A limit without a request makes the request equal to the limit.
            missing = [r for r in ("cpu", "memory") if r not in requests and r not in limits]
            if not missing:
                continue
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} requests no {' and no '.join(missing)}: the scheduler treats "
                "it as free and may overcommit its node.",
                {"container": container.get("name"), "resources.requests": requests, "missing": missing},
                detail=str(container.get("name")),
            )


@check(
    id="KG-RES-003",
    title="Node is under memory, disk or PID pressure",
    area="resources",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("KC-013", "KC-014", "KC-108"),
    why=(
        "A node under pressure is already evicting pods and refusing new ones; left alone it tends to go NotReady "
        "and take everything on it down, as repeated SystemOOM and starved nodes did."
    ),
    fix=(
        "Find the pods using the resource (kubectl top pods on the node), set their limits, and reserve capacity for "
        "system daemons (kubeReserved/systemReserved)."
    ),
)
def node_pressure(index: SnapshotIndex) -> Iterator[Hit]:
    for node in index.of_kind("Node"):
        for condition in node.get("status", {}).get("conditions") or []:
            if condition.get("type") in PRESSURE_CONDITIONS and condition.get("status") == "True":
                yield Hit(
                    node,
                    f"Node reports {condition['type']}: it is evicting pods and will not accept new ones.",
                    {f"status.conditions[{condition['type']}]": "True", "reason": condition.get("reason")},
                    detail=str(condition["type"]),
                )


@check(
    id="KG-RES-004",
    title="Node is not Ready",
    area="resources",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("KC-108", "KC-028", "KC-014"),
    why=(
        "A NotReady node runs nothing new and its pods are evicted after a timeout; several at once cut capacity "
        "below what workloads need, which is how starved and disconnected nodes turned into outages."
    ),
    fix="Inspect the kubelet and container runtime on the node; drain and replace it if it does not recover.",
)
def node_not_ready(index: SnapshotIndex) -> Iterator[Hit]:
    for node in index.of_kind("Node"):
        for condition in node.get("status", {}).get("conditions") or []:
            if condition.get("type") == "Ready" and condition.get("status") != "True":
                yield Hit(
                    node,
                    f"Node is not Ready (status {condition.get('status')}): its pods will be evicted and nothing new "
                    "runs on it.",
                    {"status.conditions[Ready]": condition.get("status"), "reason": condition.get("reason")},
                )


@check(
    id="KG-RES-005",
    title="Service-backed container has a CPU limit",
    area="resources",
    severity=Severity.LOW,
    needs=("Deployment", "Service"),
    cases=("KC-016", "KC-017", "KC-051"),
    why=(
        "CPU limits are enforced by throttling in short periods: a burst uses up the quota and the container is "
        "paused for the rest of the period, even when the node has idle CPU. Throttled services stalled, failed "
        "health checks and got faster once limits were removed."
    ),
    fix="Remove limits.cpu from latency-sensitive containers and size requests.cpu to their real usage instead.",
)
def cpu_limit_on_service(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        if workload.kind not in SERVING_KINDS:
            continue
        limited = [c for c in workload.containers if ((c.get("resources") or {}).get("limits") or {}).get("cpu")]
        if not limited:
            continue
        services = index.workload_services(workload)
        if not services:
            continue
        for container in limited:
            limit = container["resources"]["limits"]["cpu"]
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} serves traffic with limits.cpu {limit}: bursts are throttled "
                "even when the node has idle CPU, adding latency and failed health checks.",
                {
                    "container": container.get("name"),
                    "resources.limits.cpu": limit,
                    "services": sample(name_of(s) for s in services),
                },
                detail=str(container.get("name")),
            )


@check(
    id="KG-RES-006",
    title="Container was OOM-killed",
    area="resources",
    severity=Severity.MEDIUM,
    needs=("Pod",),
    cases=("KC-001", "KC-107", "KC-013"),
    why=(
        "An OOM kill means the container's memory limit is below what it really uses; under more load every replica "
        "hits it together, as CoreDNS and an ingress proxy did, and the service fails all at once."
    ),
    fix="Raise the container's memory limit above its observed peak, or find the leak, before load rises further.",
)
def oom_killed(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        killed: dict[str, list[str]] = {}
        for pod in workload.pods:
            for status in pod.get("status", {}).get("containerStatuses") or []:
                terminated = (status.get("lastState") or {}).get("terminated") or {}
                if terminated.get("reason") == "OOMKilled":
                    killed.setdefault(str(status.get("name")), []).append(name_of(pod))
        for container, pods in sorted(killed.items()):
            yield Hit(
                workload.obj,
                f"Container {container!r} was OOM-killed in {len(pods)} pod(s): its memory limit is below what it "
                "uses.",
                {"container": container, "lastState.terminated.reason": "OOMKilled", "pods": sample(pods)},
                detail=container,
            )
