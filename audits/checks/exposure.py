"""Exposure: services reachable from the internet that were never meant to be."""

from __future__ import annotations

import re
from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import INGRESS_CONTROLLER_IMAGES, SnapshotIndex, annotations_of, labels_of, sample
from audits.collect.snapshot import Obj
from audits.severity import Severity

SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
# Data planes of gateways and ingress controllers: the intended public entry to a cluster.
GATEWAY_IMAGES = re.compile(r"envoyproxy/envoy|/proxyv2|gateway", re.IGNORECASE)
# Annotations that make a cloud load balancer internal-only, with the value that does so ("" = any value).
INTERNAL_ANNOTATIONS = {
    "service.beta.kubernetes.io/aws-load-balancer-internal": "",
    "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    "networking.gke.io/load-balancer-type": "Internal",
    "cloud.google.com/load-balancer-type": "Internal",
    "service.beta.kubernetes.io/azure-load-balancer-internal": "true",
    "service.beta.kubernetes.io/oci-load-balancer-internal": "true",
    "service.kubernetes.io/ibm-load-balancer-cloud-provider-ip-type": "private",
    "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type": "intranet",
    "service.beta.kubernetes.io/openstack-internal-load-balancer": "true",
}


def _internal(annotations: dict[str, str]) -> bool:
    for key, wanted in INTERNAL_ANNOTATIONS.items():
        if key in annotations and (not wanted or annotations[key].lower() in (wanted.lower(), "true")):
            return True
    return False


def _is_gateway(pod: Obj) -> bool:
    """An ingress controller or gateway pod: every container is the proxy (a mesh sidecar beside an
    application container does not make the application a gateway)."""
    images = [str(c.get("image", "")) for c in pod.get("spec", {}).get("containers") or []]
    return labels_of(pod).get("istio") == "ingressgateway" or (
        bool(images) and all(INGRESS_CONTROLLER_IMAGES.search(i) or GATEWAY_IMAGES.search(i) for i in images)
    )


@check(
    id="KG-EXP-001",
    title="Public LoadBalancer accepts traffic from anywhere",
    area="exposure",
    severity=Severity.HIGH,
    needs=("Service", "Pod"),
    cases=("KC-045",),
    why=(
        "A LoadBalancer Service without source ranges or an internal-only annotation is reachable from the whole "
        "internet. A cluster dashboard exposed this way let an attacker run a cryptocurrency miner inside the "
        "cluster. Ingress controllers are the intended public entry and are not reported."
    ),
    fix="Restrict spec.loadBalancerSourceRanges to the networks that need access, make the load balancer internal, "
    "or publish the service through the ingress controller with authentication.",
)
def open_load_balancer(index: SnapshotIndex) -> Iterator[Hit]:
    for svc in index.of_kind("Service"):
        spec = svc.get("spec", {})
        annotations = annotations_of(svc)
        if spec.get("type") != "LoadBalancer" or spec.get("loadBalancerSourceRanges"):
            continue
        if SOURCE_RANGES_ANNOTATION in annotations or _internal(annotations):
            continue
        pods = index.service_pods(svc)
        if any(_is_gateway(pod) for pod in pods[:5]):
            continue
        ports = [p.get("port") for p in spec.get("ports") or []]
        yield Hit(
            svc,
            f"LoadBalancer Service is open to the whole internet on port(s) {', '.join(map(str, ports))}: no "
            "loadBalancerSourceRanges and no internal-only annotation.",
            {
                "spec.type": "LoadBalancer",
                "spec.loadBalancerSourceRanges": None,
                "ports": ports,
                "backend pods": sample(p["metadata"]["name"] for p in pods),
            },
        )
