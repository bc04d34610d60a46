"""Services: names that route to nothing, and routes to addresses kept by hand outside
the cluster's view."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, name_of, namespace_of, pod_is_ready, sample
from audits.severity import Severity

# EndpointSlices the API server and the endpoints controller maintain themselves.
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLERS = frozenset({"endpointslice-controller.k8s.io"})


def _ready_endpoints(index: SnapshotIndex, namespace: str, service: str) -> int | None:
    slices = index.endpoint_slices_by_service.get((namespace, service))
    if not index.collected("EndpointSlice"):
        return None
    return sum(
        1
        for eps in slices or []
        for endpoint in eps.get("endpoints") or []
        if (endpoint.get("conditions") or {}).get("ready", True)
    )


@check(
    id="KG-SVC-001",
    title="Service selects no ready pod",
    area="services",
    severity=Severity.HIGH,
    needs=("Service", "Pod"),
    cases=("KC-008",),
    why=(
        "A Service whose selector matches no ready pod has empty EndpointSlices: every connection to it fails, and "
        "clients that cache endpoints may keep sending traffic to pods that are gone. A service scaled to zero "
        "while its Service remained was part of a payments outage."
    ),
    fix="Fix the selector so it matches the pods' labels, bring the pods back to Ready, or delete the unused Service.",
)
def service_without_ready_pods(index: SnapshotIndex) -> Iterator[Hit]:
    for svc in index.of_kind("Service"):
        spec = svc.get("spec", {})
        if not spec.get("selector") or spec.get("type") == "ExternalName":
            continue
        pods = index.service_pods(svc)
        ready = [p for p in pods if pod_is_ready(p)]
        if ready:
            continue
        state = f"its {len(pods)} matching pod(s) are not ready" if pods else "no pod matches its selector"
        evidence = {"spec.selector": spec["selector"], "pods selected": sample(name_of(p) for p in pods), "ready": 0}
        endpoints = _ready_endpoints(index, namespace_of(svc), name_of(svc))
        if endpoints is not None:
            evidence["ready endpoints in EndpointSlices"] = endpoints
        yield Hit(svc, f"Service has no ready endpoint ({state}): every connection to it fails.", evidence)


@check(
    id="KG-SVC-002",
    title="Service routes to addresses maintained by hand",
    area="services",
    severity=Severity.LOW,
    needs=("Service", "EndpointSlice"),
    cases=("IL-0256", "KC-075"),
    why=(
        "A Service without a selector (manual endpoints) or of type ExternalName sends traffic to addresses the "
        "cluster does not manage, often another site. When that site fails or its addresses move, nothing in the "
        "cluster notices or fails over: hidden cross-site dependencies are how redundant setups went down together."
    ),
    fix="Document and monitor the dependency, and give it a failover path (several sites' addresses, or a health-"
    "checked external load balancer) instead of a single hand-kept address.",
)
def hand_kept_endpoints(index: SnapshotIndex) -> Iterator[Hit]:
    for svc in index.of_kind("Service"):
        spec = svc.get("spec", {})
        namespace, name = namespace_of(svc), name_of(svc)
        if (namespace, name) == ("default", "kubernetes"):
            continue  # the API server's own Service
        if spec.get("type") == "ExternalName":
            yield Hit(
                svc,
                f"Service is an alias for the external name {spec.get('externalName')}: the cluster cannot see or "
                "fail over that dependency.",
                {"spec.type": "ExternalName", "spec.externalName": spec.get("externalName")},
            )
            continue
        if spec.get("selector"):
            continue
        addresses = [
            address
            for eps in index.endpoint_slices_by_service.get((namespace, name), [])
            if eps.get("metadata", {}).get("labels", {}).get(MANAGED_BY) not in CONTROLLERS
            for endpoint in eps.get("endpoints") or []
            for address in endpoint.get("addresses") or []
        ]
        if not addresses:
            continue
        yield Hit(
            svc,
            f"Service has no selector and routes to {len(addresses)} address(es) kept by hand: if they fail or move, "
            "nothing in the cluster notices.",
            {"spec.selector": None, "endpoint addresses": sample(addresses)},
        )
