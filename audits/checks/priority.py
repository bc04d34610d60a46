"""Priority and preemption: who may evict whom when the cluster is full."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import REPLICATED_KINDS, SnapshotIndex, Workload, quantity, sample
from audits.severity import Severity

# A pod this large cannot fit without evicting several ordinary pods.
LARGE_CPU = 2.0
LARGE_MEMORY = 8 * 2**30
NODE_CRITICAL_CLASSES = ("system-node-critical", "system-cluster-critical")


def pod_requests(workload: Workload) -> tuple[float, float]:
    """CPU cores and memory bytes one pod of the workload requests."""
    cpu = memory = 0.0
    for container in workload.containers:
        resources = container.get("resources") or {}
        requests = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        cpu += quantity(requests.get("cpu", 0)) or 0.0
        memory += quantity(requests.get("memory", 0)) or 0.0
    return cpu, memory


@check(
    id="KG-PRI-001",
    title="Large pods with a preempting high priority can evict unprotected workloads",
    area="priority",
    severity=Severity.HIGH,
    needs=("PriorityClass", "PodDisruptionBudget", "Deployment", "StatefulSet"),
    cases=("KC-012",),
    why=(
        "A high PriorityClass lets the scheduler evict lower-priority pods to make room. Large pods need many "
        "victims each, and victims without a PodDisruptionBudget can all be taken at once: giving big ingesters a "
        "high priority set off a preemption cascade that took a hosted service down."
    ),
    fix=(
        "Give the lower-priority workloads PodDisruptionBudgets, set preemptionPolicy: Never on classes that only "
        "need to queue first, or keep the high class for pods that are small or few."
    ),
)
def preempting_large_pods(index: SnapshotIndex) -> Iterator[Hit]:
    classes = {
        pc["metadata"]["name"]: pc
        for pc in index.of_kind("PriorityClass")
        if not pc["metadata"]["name"].startswith("system-")
        and pc.get("preemptionPolicy", "PreemptLowerPriority") != "Never"
        and int(pc.get("value", 0)) > index.default_priority
    }
    if not classes:
        return
    unprotected = [
        w
        for w in index.workloads
        if w.kind in REPLICATED_KINDS and (w.replicas or 0) > 0 and not index.workload_pdbs(w)
    ]
    for workload in index.workloads:
        class_name = workload.spec.get("priorityClassName")
        if class_name not in classes:
            continue
        cpu, memory = pod_requests(workload)
        if cpu < LARGE_CPU and memory < LARGE_MEMORY:
            continue
        value = int(classes[class_name].get("value", 0))
        victims = [w for w in unprotected if w is not workload and index.workload_priority(w) < value]
        if not victims:
            continue
        yield Hit(
            workload.obj,
            f"Pods of priority {class_name} ({value}) request {cpu:g} CPU and {memory / 2**30:.1f}Gi each and may "
            f"preempt {len(victims)} lower-priority workload(s) that have no PodDisruptionBudget.",
            {
                "priorityClassName": class_name,
                "value": value,
                "preemptionPolicy": classes[class_name].get("preemptionPolicy", "PreemptLowerPriority"),
                "pod requests": {"cpu": cpu, "memory GiB": round(memory / 2**30, 1)},
                "unprotected lower-priority workloads": sample(f"{w.kind}/{w.namespace}/{w.name}" for w in victims),
            },
        )


@check(
    id="KG-PRI-002",
    title="Node-level DaemonSet in kube-system has no system priority",
    area="priority",
    severity=Severity.MEDIUM,
    needs=("DaemonSet",),
    cases=("KC-104",),
    why=(
        "Networking, DNS cache, storage and proxy agents must run on every node. Without system-node-critical "
        "priority they queue behind ordinary pods on a full node and can be preempted; during a burst of "
        "scheduling, DaemonSets that had no priority class could not be placed."
    ),
    fix="Set priorityClassName: system-node-critical on DaemonSets every node depends on.",
)
def daemonset_without_priority(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads_of_kind("DaemonSet"):
        if workload.namespace != "kube-system":
            continue
        class_name = workload.spec.get("priorityClassName")
        if class_name in NODE_CRITICAL_CLASSES:
            continue
        yield Hit(
            workload.obj,
            f"DaemonSet runs with priority {class_name or 'none'}: on a full node it waits behind ordinary pods "
            "and can be preempted.",
            {"template.spec.priorityClassName": class_name},
        )
