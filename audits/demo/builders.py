"""Small builders for Kubernetes objects as the API serves them (plain JSON dicts).

Used by the bundled demo clusters and by the tests, so both describe clusters
the same way. Each builder takes only what varies and fills in the rest the way
a real API server would.
"""

from __future__ import annotations

import hashlib
from typing import Any

Obj = dict[str, Any]


def _meta(name: str, namespace: str | None, labels: dict[str, str] | None, annotations: dict[str, str] | None) -> Obj:
    meta: Obj = {"name": name, "uid": hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:32]}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def container(
    name: str,
    image: str,
    *,
    memory_limit: str | None = "256Mi",
    memory_request: str | None = "128Mi",
    cpu_request: str | None = "100m",
    env: dict[str, str] | None = None,
    readiness: Obj | None = None,
    liveness: Obj | None = None,
    pre_stop_sleep: int | None = None,
    resources_extra: dict[str, str] | None = None,
) -> Obj:
    limits: dict[str, str] = {}
    requests: dict[str, str] = {}
    if memory_limit:
        limits["memory"] = memory_limit
    if memory_request:
        requests["memory"] = memory_request
    if cpu_request:
        requests["cpu"] = cpu_request
    for resource, amount in (resources_extra or {}).items():
        limits[resource] = amount
        requests[resource] = amount
    c: Obj = {"name": name, "image": image, "resources": {}}
    if limits:
        c["resources"]["limits"] = limits
    if requests:
        c["resources"]["requests"] = requests
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if pre_stop_sleep:
        c["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(pre_stop_sleep)]}}}
    return c


def http_probe(path: str = "/healthz", port: int = 8080) -> Obj:
    return {"httpGet": {"path": path, "port": port}, "periodSeconds": 10}


def node(
    name: str,
    *,
    zone: str = "zone-a",
    region: str = "region-1",
    os_image: str = "Ubuntu 22.04.4 LTS",
    kubelet: str = "v1.30.4",
    capacity: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    conditions: dict[str, str] | None = None,
) -> Obj:
    all_labels = {
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/zone": zone,
        "topology.kubernetes.io/region": region,
        **(labels or {}),
    }
    cap = {"cpu": "16", "memory": "64Gi", "pods": "110", **(capacity or {})}
    state = {"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False"}
    state.update(conditions or {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(name, None, all_labels, None),
        "spec": {},
        "status": {
            "capacity": cap,
            "allocatable": dict(cap),
            "conditions": [{"type": t, "status": s} for t, s in state.items()],
            "nodeInfo": {
                "osImage": os_image,
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kubelet,
                "kernelVersion": "6.5.0",
                "containerRuntimeVersion": "containerd://1.7.13",
            },
        },
    }


def namespace(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _meta(name, None, {"kubernetes.io/metadata.name": name}, None),
    }


def _pod_template(labels: dict[str, str], containers: list[Obj], extra_spec: Obj | None) -> Obj:
    return {"metadata": {"labels": dict(labels)}, "spec": {"containers": containers, **(extra_spec or {})}}


def workload(
    kind: str,
    name: str,
    namespace: str,
    *,
    replicas: int = 2,
    containers: list[Obj],
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    pod_spec: Obj | None = None,
) -> Obj:
    """A Deployment, StatefulSet or DaemonSet selecting pods labelled app=<name>."""
    pod_labels = {"app": name, **(labels or {})}
    api = "apps/v1"
    spec: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": _pod_template(pod_labels, containers, pod_spec),
    }
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    return {"apiVersion": api, "kind": kind, "metadata": _meta(name, namespace, pod_labels, annotations), "spec": spec}


def replicaset_for(deployment: Obj, suffix: str = "7d9f8b6c5") -> Obj:
    meta = deployment["metadata"]
    rs: Obj = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta(f"{meta['name']}-{suffix}", meta["namespace"], meta.get("labels"), None),
        "spec": {**deployment["spec"], "replicas": deployment["spec"].get("replicas", 1)},
    }
    rs["metadata"]["ownerReferences"] = [_owner_ref(deployment)]
    return rs


def pod_for(owner: Obj, index: int, node_name: str, *, ready: bool = True, phase: str = "Running") -> Obj:
    """A pod created by `owner` (a ReplicaSet, StatefulSet, DaemonSet or Job), placed on a node."""
    meta = owner["metadata"]
    template = owner["spec"].get("template") or owner["spec"]["jobTemplate"]["spec"]["template"]
    name = (
        f"{meta['name']}-{index}"
        if owner["kind"] == "StatefulSet"
        else f"{meta['name']}-{_suffix(meta['name'], index)}"
    )
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, meta["namespace"], template["metadata"].get("labels"), None),
        "spec": {**template["spec"], "nodeName": node_name},
        "status": {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "podIP": f"10.0.{index // 250}.{index % 250 + 1}",
        },
    }
    pod["metadata"]["ownerReferences"] = [_owner_ref(owner)]
    return pod


def pdb(
    name: str,
    namespace: str,
    match_labels: dict[str, str],
    *,
    max_unavailable: int | None = 1,
    min_available: int | None = None,
    disruptions_allowed: int = 1,
) -> Obj:
    spec: Obj = {"selector": {"matchLabels": dict(match_labels)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    elif max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _meta(name, namespace, None, None),
        "spec": spec,
        "status": {"disruptionsAllowed": disruptions_allowed},
    }


def service(
    name: str,
    namespace: str,
    selector: dict[str, str] | None,
    *,
    type_: str = "ClusterIP",
    external_traffic_policy: str | None = None,
    port: int = 80,
) -> Obj:
    spec: Obj = {"type": type_, "ports": [{"port": port, "protocol": "TCP"}]}
    if selector is not None:
        spec["selector"] = dict(selector)
    if external_traffic_policy:
        spec["externalTrafficPolicy"] = external_traffic_policy
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(name, namespace, None, None), "spec": spec}


def kube_list(items: list[Obj]) -> Obj:
    """What `kubectl get ... -o json` prints for several kinds at once."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _owner_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }


def _suffix(name: str, index: int) -> str:
    return hashlib.sha256(f"{name}-{index}".encode()).hexdigest()[:5]
