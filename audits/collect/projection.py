"""Projection: the parts of each Kubernetes object that checks may read.

Every object passes through here on its way into a snapshot, from a live LIST
page, a file or an artifact, so this module is the single contract between
collection and checks. What is not kept here no check can see, and memory stays
bounded on clusters with 150,000 pods.

Each kind has a SHAPE: a whitelist of the fields checks read, written as nested
dicts (keep these keys), `KEEP` (keep the value, stored once when equal values
recur), `[shape]` (a list whose items have that shape) or a function (a filter,
or `_unique` for values no other object shares). Metadata is the same for every
kind. Kinds without a shape keep their metadata only; Secrets are never kept.

Pods of one workload are nearly identical, so equal parts (the containers, the
labels, the tolerations, the conditions) are stored once and shared between
objects. Shared parts must never be mutated; checks only read them.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from typing import Any

import orjson

from audits.collect.kinds import FORBIDDEN_KINDS

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# The only ConfigMaps checks read; every other ConfigMap is dropped unread.
WANTED_CONFIGMAPS = frozenset(
    {("kube-system", "kube-proxy"), ("kube-system", "kube-proxy-config"), ("kube-system", "coredns")}
)
# Annotations longer than this are bulk (embedded configs, status blobs), except the ones checks read.
MAX_ANNOTATION = 2048
READ_ANNOTATIONS = ("kubegap.io/", "k8s.v1.cni.cncf.io/networks")
MAX_MESSAGE = 300


class _Keep:
    """Keep the value as it is."""


KEEP = _Keep()
Shape = Any  # dict[str, Shape] | list[Shape] | _Keep | Callable[[Any], Any]


def _unique(value: Any) -> Any:
    """Keep a value no other object shares (a name, a uid): sharing it would only cost memory."""
    return value


# --- sharing equal parts ------------------------------------------------------------------------

# Digest of a value's canonical JSON -> the stored copy. Bounded, and simply emptied
# when full: an equal value seen later is then stored again, which is only memory.
_SHARED: dict[bytes, Any] = {}
_SHARED_LIMIT = 100_000


def _digest(value: Any, salt: bytes = b"") -> bytes | None:
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return None  # not plain JSON (never from the API); keep it unshared
    return hashlib.blake2b(encoded, digest_size=16, salt=salt).digest()


def _stored(key: bytes, value: Any) -> Any:
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        _SHARED[key] = found = value
    return found


def _share(value: Any) -> Any:
    """The one stored copy of an equal value (strings interned, containers deduplicated)."""
    if isinstance(value, str):
        return sys.intern(value) if len(value) <= 256 else value
    if not isinstance(value, dict | list) or not value:
        return value
    key = _digest(value)
    return value if key is None else _stored(key, value)


def _apply(value: Any, shape: Shape) -> Any:
    if shape is KEEP:
        return _share(value)
    if callable(shape):
        return shape(value)
    if isinstance(shape, list):
        return [_apply(item, shape[0]) for item in value] if isinstance(value, list) else None
    if not isinstance(value, dict):
        return None
    kept = {key: _apply(value[key], sub) for key, sub in shape.items() if key in value and value[key] is not None}
    return {key: v for key, v in kept.items() if v is not None}


def _shared(shape: Shape, salt: bytes) -> Callable[[Any], Any]:
    """Apply a shape and store the result once for all objects that have the same.

    The input is recognised by its own digest (salted per shape), so the pods of one
    workload pay for the shape once and afterwards only for hashing their raw value.
    """

    def apply(value: Any) -> Any:
        key = _digest(value, salt)
        if key is not None and (found := _SHARED.get(key)) is not None:
            return found
        kept = _share(_apply(value, shape))
        return kept if key is None or kept is None else _stored(key, kept)

    return apply


# --- metadata -----------------------------------------------------------------------------------


def _annotations(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    kept = {
        k: v
        for k, v in value.items()
        if k != LAST_APPLIED and (len(str(v)) <= MAX_ANNOTATION or k.startswith(READ_ANNOTATIONS))
    }
    return _share(kept) if kept else None


def _read_annotations(value: Any) -> Any:
    """Only the annotations checks read: pods and nodes carry many, mostly per-object, ones."""
    if not isinstance(value, dict):
        return None
    kept = {k: v for k, v in value.items() if k.startswith(READ_ANNOTATIONS)}
    return _share(kept) if kept else None


OWNER = {"kind": KEEP, "name": KEEP, "uid": KEEP, "controller": KEEP}
METADATA: dict[str, Shape] = {
    "name": _unique,
    "namespace": KEEP,
    "uid": _unique,
    "creationTimestamp": _unique,
    "labels": KEEP,
    "annotations": _annotations,
    "ownerReferences": _shared([OWNER], b"owners"),
}
LEAN_METADATA = {**METADATA, "annotations": _read_annotations}

# --- pod specs ----------------------------------------------------------------------------------


def _nccl_env(value: Any) -> Any:
    """Only the NCCL settings of a container's environment (the RDMA checks read them)."""
    if not isinstance(value, list):
        return None
    kept = [
        {k: e[k] for k in ("name", "value", "valueFrom") if k in e}
        for e in value
        if isinstance(e, dict) and str(e.get("name", "")).startswith("NCCL_")
    ]
    return kept or None


CONTAINER = {
    "name": KEEP,
    "image": KEEP,
    "imagePullPolicy": KEEP,
    "resources": {"limits": KEEP, "requests": KEEP},
    "env": _nccl_env,
    "readinessProbe": KEEP,
    "livenessProbe": KEEP,
    "lifecycle": {"preStop": KEEP},
}
POD_SPEC = {
    "containers": _shared([CONTAINER], b"containers"),
    "nodeName": KEEP,
    "nodeSelector": KEEP,
    "affinity": KEEP,
    "tolerations": KEEP,
    "topologySpreadConstraints": KEEP,
    "priorityClassName": KEEP,
    "terminationGracePeriodSeconds": KEEP,
    "dnsPolicy": KEEP,
    "dnsConfig": KEEP,
    "hostNetwork": KEEP,
}
TEMPLATE = {"metadata": {"labels": KEEP, "annotations": _read_annotations}, "spec": POD_SPEC}


def _condition(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    kept = {k: value[k] for k in ("type", "status", "reason") if k in value}
    if value.get("status") != "True" and value.get("message"):
        kept["message"] = str(value["message"])[:MAX_MESSAGE]
    return _share(kept)


def _pod_conditions(value: Any) -> Any:
    if not isinstance(value, list):
        return None
    return _share([_condition(c) for c in value if isinstance(c, dict) and c.get("type") in ("Ready", "PodScheduled")])


def _last_terminations(value: Any) -> Any:
    """Container statuses only where the container was terminated before (OOM kills and the like)."""
    if not isinstance(value, list):
        return None
    kept = [
        {"name": s.get("name"), "lastState": {"terminated": {"reason": reason}}}
        for s in value
        if isinstance(s, dict) and (reason := ((s.get("lastState") or {}).get("terminated") or {}).get("reason"))
    ]
    return _share(kept) if kept else None


CONDITIONS = [_condition]
JOB_SPEC = {
    "backoffLimit": KEEP,
    "activeDeadlineSeconds": KEEP,
    "completions": KEEP,
    "parallelism": KEEP,
    "suspend": KEEP,
    "template": TEMPLATE,
}
WORKLOAD_SPEC = {"replicas": KEEP, "selector": KEEP, "template": TEMPLATE}

# --- every kind checks read ---------------------------------------------------------------------

SHAPES: dict[str, dict[str, Shape]] = {
    "Pod": {
        "metadata": LEAN_METADATA,
        "spec": POD_SPEC,
        "status": {"phase": KEEP, "conditions": _pod_conditions, "containerStatuses": _last_terminations},
    },
    "Node": {
        "metadata": LEAN_METADATA,
        "spec": {"unschedulable": KEEP, "podCIDR": _unique, "podCIDRs": _unique, "taints": KEEP},
        "status": {
            "capacity": KEEP,
            "allocatable": KEEP,
            "conditions": CONDITIONS,
            "nodeInfo": _shared(
                {"osImage": KEEP, "kubeletVersion": KEEP, "kubeProxyVersion": KEEP, "kernelVersion": KEEP}, b"nodeInfo"
            ),
        },
    },
    "Deployment": {"spec": WORKLOAD_SPEC},
    "ReplicaSet": {"spec": WORKLOAD_SPEC},
    "DaemonSet": {"spec": WORKLOAD_SPEC},
    "StatefulSet": {
        "spec": {
            **WORKLOAD_SPEC,
            "volumeClaimTemplates": [{"metadata": {"name": KEEP}, "spec": {"storageClassName": KEEP}}],
            "persistentVolumeClaimRetentionPolicy": KEEP,
        }
    },
    "Job": {"spec": JOB_SPEC, "status": {"conditions": CONDITIONS}},
    "CronJob": {
        "spec": {
            "schedule": KEEP,
            "concurrencyPolicy": KEEP,
            "startingDeadlineSeconds": KEEP,
            "suspend": KEEP,
            "jobTemplate": {"spec": JOB_SPEC},
        }
    },
    "Service": {
        "spec": {
            "type": KEEP,
            "selector": KEEP,
            "externalTrafficPolicy": KEEP,
            "loadBalancerSourceRanges": KEEP,
            "externalName": KEEP,
            "ports": [{"name": KEEP, "port": KEEP, "protocol": KEEP}],
        }
    },
    # Endpoints are filled in by _endpoints, which needs to know who manages the slice.
    "EndpointSlice": {},
    "PodDisruptionBudget": {
        "spec": {"selector": KEEP, "minAvailable": KEEP, "maxUnavailable": KEEP},
        "status": {"disruptionsAllowed": KEEP, "expectedPods": KEEP, "currentHealthy": KEEP, "desiredHealthy": KEEP},
    },
    "HorizontalPodAutoscaler": {"spec": {"scaleTargetRef": KEEP, "minReplicas": KEEP, "maxReplicas": KEEP}},
    "Ingress": {
        "spec": {
            "ingressClassName": KEEP,
            "defaultBackend": KEEP,
            "rules": [{"host": KEEP, "http": {"paths": [{"path": KEEP, "backend": KEEP}]}}],
        }
    },
    "IngressClass": {"spec": {"controller": KEEP}},
    "ValidatingWebhookConfiguration": {"webhooks": [{}]},  # filled in below
    "PriorityClass": {"value": KEEP, "globalDefault": KEEP, "preemptionPolicy": KEEP},
    "StorageClass": {"provisioner": KEEP, "reclaimPolicy": KEEP},
    "PersistentVolume": {
        "spec": {
            "persistentVolumeReclaimPolicy": KEEP,
            "storageClassName": KEEP,
            "claimRef": {"namespace": KEEP, "name": KEEP},
        },
        "status": {"phase": KEEP},
    },
    "PersistentVolumeClaim": {"spec": {"storageClassName": KEEP, "volumeName": KEEP}, "status": {"phase": KEEP}},
    "APIService": {
        "spec": {"service": KEEP, "caBundle": KEEP, "insecureSkipTLSVerify": KEEP},
        "status": {"conditions": CONDITIONS},
    },
    "ConfigMap": {"data": KEEP},
    "SriovNetworkNodePolicy": {"spec": {"nodeSelector": KEEP, "isRdma": KEEP, "resourceName": KEEP}},
    "Certificate": {
        "spec": {"secretName": KEEP},
        "status": {"notAfter": KEEP, "renewalTime": KEEP, "conditions": CONDITIONS},
    },
    "Application": {"spec": {"syncPolicy": KEEP, "destination": KEEP}},
    "Kustomization": {"spec": {"prune": KEEP, "suspend": KEEP, "path": KEEP, "sourceRef": KEEP}},
}
WEBHOOK = {
    "name": KEEP,
    "failurePolicy": KEEP,
    "namespaceSelector": KEEP,
    "objectSelector": KEEP,
    "rules": KEEP,
    "timeoutSeconds": KEEP,
    "clientConfig": {"service": KEEP, "caBundle": KEEP},
}
SHAPES["ValidatingWebhookConfiguration"] = {"webhooks": [WEBHOOK]}
SHAPES["MutatingWebhookConfiguration"] = {"webhooks": [WEBHOOK]}

_READY = {"conditions": {"ready": True}}
_NOT_READY = {"conditions": {"ready": False}}
SLICE_CONTROLLER = "endpointslice-controller.k8s.io"


def _endpoints(value: Any, *, hand_made: bool) -> list[Obj]:
    """Readiness of each endpoint; hand-made slices also keep their addresses (where traffic goes)."""
    kept: list[Obj] = []
    for endpoint in value if isinstance(value, list) else []:
        if not isinstance(endpoint, dict):
            continue
        ready = _READY if (endpoint.get("conditions") or {}).get("ready", True) else _NOT_READY
        kept.append(
            {**ready, "addresses": _share(endpoint["addresses"])} if hand_made and endpoint.get("addresses") else ready
        )
    return kept


def project(kind: str, obj: Obj) -> Obj | None:
    """The parts of an object checks may read, or None for an object never kept."""
    if not kind or kind in FORBIDDEN_KINDS:
        return None
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        return None
    if kind == "ConfigMap" and (metadata.get("namespace"), metadata.get("name")) not in WANTED_CONFIGMAPS:
        return None
    shape = SHAPES.get(kind, {})
    projected: Obj = {"kind": _share(kind), "metadata": _apply(metadata, shape.get("metadata", METADATA))}
    for key, sub in shape.items():
        if key != "metadata" and obj.get(key) is not None:
            kept = _apply(obj[key], sub)
            if kept is not None:
                projected[key] = kept
    if kind == "EndpointSlice":
        managed_by = (metadata.get("labels") or {}).get("endpointslice.kubernetes.io/managed-by")
        projected["endpoints"] = _endpoints(obj.get("endpoints"), hand_made=managed_by != SLICE_CONTROLLER)
    return projected
