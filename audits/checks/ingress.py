"""Load balancing and ingress: the front door must survive losing one of anything."""

from __future__ import annotations

import re
from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, pod_containers, pod_is_ready
from audits.collect.snapshot import Obj
from audits.severity import Severity

CONTROLLER_IMAGES = re.compile(
    r"ingress-nginx/controller|nginx-ingress|/traefik|^traefik|haproxy-ingress|haproxytech/kubernetes-ingress|"
    r"projectcontour/contour|/kong|^kong|envoyproxy/gateway|skipper",
    re.IGNORECASE,
)


def ingress_controller_pods(index: SnapshotIndex) -> Iterator[tuple[Obj, list[Obj]]]:
    """Each ingress controller workload with its pods, judged from the pods that run."""
    for key, pods in index.pods_by_workload.items():
        containers = [c for pod in pods for c in pod_containers(pod.get("spec", {}))]
        if any(CONTROLLER_IMAGES.search(str(c.get("image", ""))) for c in containers):
            yield index.object_or_stub(key), pods


@check(
    id="KG-ING-001",
    title="Ingress controller has fewer than two ready replicas",
    area="ingress",
    severity=Severity.CRITICAL,
    needs=("Pod",),
    cases=("IL-0256", "KC-022", "KC-021"),
    why=(
        "Every request to the cluster's services passes through the ingress controller. With one ready replica, "
        "its crash, eviction or the node under it failing is a full outage of everything behind it, and failover "
        "to a replacement is exactly the step that tends to go wrong under pressure."
    ),
    fix="Run at least two ready controller replicas on different nodes and zones, with a PodDisruptionBudget.",
)
def controller_ready_replicas(index: SnapshotIndex) -> Iterator[Hit]:
    for controller, pods in ingress_controller_pods(index):
        ready = sorted(p["metadata"]["name"] for p in pods if pod_is_ready(p))
        if len(ready) >= 2:
            continue
        yield Hit(
            controller,
            f"Ingress controller has {len(ready)} ready replica(s) of {len(pods)}: losing one pod or node stops all "
            "ingress traffic.",
            {"ready pods": ready, "pods": len(pods), "spec.replicas": controller.get("spec", {}).get("replicas")},
        )
