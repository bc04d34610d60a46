"""Resources: containers that can starve or OOM the node they share."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, pod_containers, pod_template_spec
from audits.severity import Severity


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
    for workload in index.workloads("Deployment", "StatefulSet", "DaemonSet"):
        for container in pod_containers(pod_template_spec(workload)):
            limits = (container.get("resources") or {}).get("limits") or {}
            if "memory" in limits:
                continue
            yield Hit(
                workload,
                f"Container {container.get('name')!r} has no memory limit and can exhaust its node's memory.",
                {"container": container.get("name"), "resources": container.get("resources") or {}},
                detail=str(container.get("name")),
            )
