"""Kubernetes objects as the API server lists them, for the synthetic cluster generator.

Each builder fills in what a real object carries, including what no check reads
(managedFields, last-applied annotations, node image lists, container
statuses), so parsing and projection are measured on realistic bytes.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CREATED = "2025-01-06T09:14:07Z"
SERVER_VERSION = "v1.30.4"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
TEAMS = ("payments", "search", "checkout", "identity", "catalog", "ml", "data", "platform")
IMAGES = ("api", "worker", "web", "gateway", "cache", "indexer", "scheduler", "ingest", "export", "notifier")

# Every node runs one pod of each.
DAEMONSETS = (
    ("kube-system", "kube-proxy"),
    ("kube-system", "cilium"),
    ("kube-system", "ebs-csi-node"),
    ("monitoring", "node-exporter"),
    ("logging", "fluent-bit"),
)


@dataclass
class Workload:
    kind: str  # Deployment, StatefulSet, CronJob or Job
    namespace: str
    name: str
    replicas: int
    team: str
    image: str
    sidecar: bool
    probes: bool
    limits: bool
    pdb: str  # "", "ok" or "blocking" (maxUnavailable 0)
    hpa: bool
    service: bool
    # The node index of each pod, in order.
    nodes: array[int] = field(default_factory=lambda: array("I"))


def uid(*parts: object) -> str:
    h = hashlib.md5("/".join(map(str, parts)).encode(), usedforsecurity=False).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def meta(kind: str, name: str, namespace: str | None, **extra: Any) -> Obj:
    m: Obj = {"name": name}
    if namespace is not None:
        m["namespace"] = namespace
    m.update(
        {
            "uid": uid(kind, namespace, name),
            "resourceVersion": str(int(uid(kind, name)[:6], 16)),
            "generation": 1,
            "creationTimestamp": CREATED,
        }
    )
    m.update(extra)
    return m


def managed(manager: str, operation: str, fields: Obj, subresource: str | None = None) -> Obj:
    entry: Obj = {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": CREATED,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def applied(obj: Obj) -> dict[str, str]:
    """The last-applied annotation `kubectl apply` leaves: the whole manifest again, as a string."""
    return {LAST_APPLIED: orjson.dumps(obj).decode()}


def namespace_obj(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta("Namespace", name, None, labels={"kubernetes.io/metadata.name": name}),
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def node_obj(name: str, index: int) -> Obj:
    zone = ZONES[index % len(ZONES)]
    pool = "gpu" if index % 50 == 49 else "general"
    capacity = {"cpu": "16", "memory": "64960132Ki", "pods": "110", "ephemeral-storage": "104845292Ki"}
    if pool == "gpu":
        capacity["nvidia.com/gpu"] = "8"
    images = [
        {
            "names": [f"registry.example.com/{team}/{image}@sha256:{uid(team, image, index % 7) * 2}"[:120]],
            "sizeBytes": 10_000_000 + 7919 * i,
        }
        for i, (team, image) in enumerate((t, im) for t in TEAMS[:4] for im in IMAGES[:6])
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            "Node",
            name,
            None,
            labels={
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/instance-type": "m6i.4xlarge" if pool == "general" else "p4d.24xlarge",
                "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": "eu-west-1",
                "eks.amazonaws.com/nodegroup": pool,
            },
            annotations={
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            managedFields=[
                managed("kubelet", "Update", {"f:metadata": {"f:labels": {".": {}}}, "f:status": {"f:images": {}}})
            ],
        ),
        "spec": {"providerID": f"aws:///{zone}/i-{uid(name)[:17].replace('-', '')}"}
        | ({"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]} if pool == "gpu" else {}),
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity, cpu="15890m", memory="61179780Ki"),
            "conditions": [
                {
                    "type": t,
                    "status": "True" if t == "Ready" else "False",
                    "lastHeartbeatTime": CREATED,
                    "lastTransitionTime": CREATED,
                    "reason": f"Kubelet{'Ready' if t == 'Ready' else 'Has' + t}",
                    "message": "kubelet is posting ready status" if t == "Ready" else f"kubelet has no {t}",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.{index // 250}.{index % 250}.10"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": uid("machine", name).replace("-", ""),
                "systemUUID": uid("system", name),
                "bootID": uid("boot", name),
                "kernelVersion": "6.1.102-111.182.amzn2023.x86_64",
                "osImage": "Amazon Linux 2023.5.20240819",
                "containerRuntimeVersion": "containerd://1.7.20",
                "kubeletVersion": SERVER_VERSION if index % 20 else "v1.29.6",
                "kubeProxyVersion": SERVER_VERSION,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": images,
        },
    }


def cluster_configmaps() -> list[Obj]:
    corefile = (
        ".:53 {\n    errors\n    health\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n"
        "    forward . /etc/resolv.conf\n    cache 30\n}\n"
    )
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("ConfigMap", "coredns", "kube-system"),
            "data": {"Corefile": corefile},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("ConfigMap", "kube-proxy", "kube-system"),
            "data": {"config": "mode: iptables\nconntrack:\n  maxPerCore: 32768\n"},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta("ConfigMap", "kube-root-ca.crt", "default"),
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\n" + "A" * 1200},
        },
    ]


def priority_classes() -> list[Obj]:
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": meta("PriorityClass", name, None),
            "value": value,
            "globalDefault": False,
        }
        for name, value in (
            ("system-node-critical", 2000001000),
            ("system-cluster-critical", 2000000000),
            ("high", 100000),
        )
    ]


def storage_classes() -> list[Obj]:
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": meta(
                "StorageClass", "gp3", None, annotations={"storageclass.kubernetes.io/is-default-class": "true"}
            ),
            "provisioner": "ebs.csi.aws.com",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    ]


def containers(w: Workload) -> list[Obj]:
    app: Obj = {
        "name": w.image,
        "image": f"registry.example.com/{w.team}/{w.image}:1.{len(w.name) % 9}.{sum(map(ord, w.name)) % 40}",
        "imagePullPolicy": "IfNotPresent",
        "ports": [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        "env": [{"name": f"{w.image.upper()}_SETTING_{k}", "value": f"value-{k}"} for k in range(6)]
        + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}}
        | ({"limits": {"memory": "1Gi"}} if w.limits else {}),
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if w.probes:
        app["readinessProbe"] = {
            "httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        }
        app["livenessProbe"] = {
            "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
            "initialDelaySeconds": 10,
            "periodSeconds": 10,
            "timeoutSeconds": 1,
            "successThreshold": 1,
            "failureThreshold": 3,
        }
    result = [app]
    if w.sidecar:
        result.append(
            {
                "name": "envoy",
                "image": "docker.io/envoyproxy/envoy:v1.30.2",
                "args": ["--config-path", "/etc/envoy/envoy.yaml", "--log-level", "warn"],
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
            }
        )
    return result


def pod_template(w: Workload, labels: dict[str, str]) -> Obj:
    return {
        "metadata": {"labels": labels, "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
        "spec": {
            "containers": containers(w),
            "volumes": [{"name": "config", "configMap": {"name": f"{w.name}-config", "defaultMode": 420}}],
            "restartPolicy": "OnFailure" if w.kind in ("CronJob", "Job") else "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": w.image,
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "schedulerName": "default-scheduler",
        },
    }


def labels_of(w: Workload) -> dict[str, str]:
    return {"app.kubernetes.io/name": w.name, "app.kubernetes.io/part-of": w.team, "team": w.team}


def deployment_obj(w: Workload) -> Obj:
    labels = labels_of(w)
    spec = {
        "replicas": w.replicas,
        "selector": {"matchLabels": {"app.kubernetes.io/name": w.name}},
        "template": pod_template(w, labels),
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": w.name, "namespace": w.namespace, "labels": labels},
        "spec": spec,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(
            "Deployment",
            w.name,
            w.namespace,
            labels=labels,
            annotations={"deployment.kubernetes.io/revision": "2", **applied(manifest)},
            managedFields=[
                managed(
                    "kubectl-client-side-apply",
                    "Update",
                    {
                        "f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}}},
                        "f:spec": {"f:replicas": {}, "f:template": {}},
                    },
                ),
                managed(
                    "kube-controller-manager",
                    "Update",
                    {"f:status": {"f:availableReplicas": {}, "f:conditions": {}}},
                    "status",
                ),
            ],
        ),
        "spec": spec,
        "status": {
            "observedGeneration": 1,
            "replicas": w.replicas,
            "updatedReplicas": w.replicas,
            "readyReplicas": w.replicas,
            "availableReplicas": w.replicas,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": CREATED,
                    "lastTransitionTime": CREATED,
                    "reason": "MinimumReplicasAvailable",
                    "message": "Deployment has minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "lastUpdateTime": CREATED,
                    "lastTransitionTime": CREATED,
                    "reason": "NewReplicaSetAvailable",
                    "message": f'ReplicaSet "{w.name}-{rs_hash(w, 2)}" has successfully progressed.',
                },
            ],
        },
    }


def rs_hash(w: Workload, revision: int) -> str:
    return uid("rs", w.namespace, w.name, revision).replace("-", "")[:10]


def owner(kind: str, api_version: str, name: str, namespace: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": uid(kind, namespace, name),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def replicaset_objs(w: Workload) -> list[Obj]:
    """The current ReplicaSet and the one of the previous rollout, scaled to zero."""
    result = []
    for revision, replicas in ((1, 0), (2, w.replicas)):
        name = f"{w.name}-{rs_hash(w, revision)}"
        labels = labels_of(w) | {"pod-template-hash": rs_hash(w, revision)}
        result.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": meta(
                    "ReplicaSet",
                    name,
                    w.namespace,
                    labels=labels,
                    annotations={
                        "deployment.kubernetes.io/revision": str(revision),
                        "deployment.kubernetes.io/desired-replicas": str(w.replicas),
                    },
                    ownerReferences=[owner("Deployment", "apps/v1", w.name, w.namespace)],
                    managedFields=[
                        managed(
                            "kube-controller-manager",
                            "Update",
                            {"f:metadata": {"f:ownerReferences": {}}, "f:spec": {"f:replicas": {}}},
                        )
                    ],
                ),
                "spec": {
                    "replicas": replicas,
                    "selector": {
                        "matchLabels": {"app.kubernetes.io/name": w.name, "pod-template-hash": rs_hash(w, revision)}
                    },
                    "template": pod_template(w, labels),
                },
                "status": {
                    "replicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "observedGeneration": 1,
                },
            }
        )
    return result


def statefulset_obj(w: Workload) -> Obj:
    labels = labels_of(w)
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta("StatefulSet", w.name, w.namespace, labels=labels),
        "spec": {
            "replicas": w.replicas,
            "serviceName": w.name,
            "selector": {"matchLabels": {"app.kubernetes.io/name": w.name}},
            "template": pod_template(w, labels),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "gp3",
                        "resources": {"requests": {"storage": "50Gi"}},
                    },
                }
            ],
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        },
        "status": {
            "replicas": w.replicas,
            "readyReplicas": w.replicas,
            "currentReplicas": w.replicas,
            "updatedReplicas": w.replicas,
        },
    }


def daemon_spec(namespace: str, name: str) -> Obj:
    w = Workload("DaemonSet", namespace, name, 1, "platform", name, False, True, True, "", False, False)
    spec: Obj = pod_template(w, {})["spec"]
    return spec | {"priorityClassName": "system-node-critical", "tolerations": [{"operator": "Exists"}]}


def daemonset_obj(namespace: str, name: str, nodes: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta("DaemonSet", name, namespace, labels={"k8s-app": name}),
        "spec": {
            "selector": {"matchLabels": {"k8s-app": name}},
            "template": {"metadata": {"labels": {"k8s-app": name}}, "spec": daemon_spec(namespace, name)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        },
        "status": {
            "desiredNumberScheduled": nodes,
            "currentNumberScheduled": nodes,
            "numberReady": nodes,
            "numberAvailable": nodes,
        },
    }


def cronjob_obj(w: Workload) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": meta("CronJob", w.name, w.namespace, labels=labels_of(w)),
        "spec": {
            "schedule": f"{len(w.name) % 60} * * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"backoffLimit": 6, "template": pod_template(w, labels_of(w))}},
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
        },
        "status": {"lastScheduleTime": CREATED},
    }


def job_name(w: Workload) -> str:
    return f"{w.name}-28945620" if w.kind == "CronJob" else w.name


def job_obj(w: Workload) -> Obj:
    extra = {"ownerReferences": [owner("CronJob", "batch/v1", w.name, w.namespace)]} if w.kind == "CronJob" else {}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta("Job", job_name(w), w.namespace, labels=labels_of(w), **extra),
        "spec": {
            "parallelism": w.replicas,
            "completions": w.replicas,
            "backoffLimit": 6,
            "template": pod_template(w, labels_of(w)),
        },
        "status": {"active": w.replicas, "startTime": CREATED},
    }


POD_MANAGED_FIELDS = [
    managed(
        "kube-controller-manager",
        "Update",
        {
            "f:metadata": {
                "f:generateName": {},
                "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:pod-template-hash": {}},
                "f:ownerReferences": {".": {}, 'k:{"uid":"..."}': {}},
            },
            "f:spec": {
                "f:containers": {
                    'k:{"name":"app"}': {
                        ".": {},
                        "f:env": {},
                        "f:image": {},
                        "f:imagePullPolicy": {},
                        "f:name": {},
                        "f:ports": {},
                        "f:resources": {},
                    }
                },
                "f:dnsPolicy": {},
                "f:restartPolicy": {},
                "f:schedulerName": {},
            },
        },
    ),
    managed(
        "kubelet",
        "Update",
        {
            "f:status": {
                "f:conditions": {
                    'k:{"type":"ContainersReady"}': {".": {}, "f:status": {}},
                    'k:{"type":"Ready"}': {".": {}, "f:status": {}},
                },
                "f:containerStatuses": {},
                "f:hostIP": {},
                "f:phase": {},
                "f:podIP": {},
                "f:podIPs": {},
                "f:startTime": {},
            }
        },
        "status",
    ),
]


def _pod(namespace: str, name: str, labels: dict[str, str], owner_ref: Obj, spec: Obj, node: str, ip: str) -> Obj:
    statuses = [
        {
            "name": c["name"],
            "state": {"running": {"startedAt": CREATED}},
            "lastState": {},
            "ready": True,
            "restartCount": len(name) % 3,
            "image": c["image"],
            "imageID": f"{c['image'].split(':')[0]}@sha256:{uid(c['image']).replace('-', '') * 2}",
            "containerID": f"containerd://{uid(name, c['name']).replace('-', '') * 2}",
            "started": True,
        }
        for c in spec["containers"]
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            "Pod",
            name,
            namespace,
            generateName=name.rsplit("-", 1)[0] + "-",
            labels=labels,
            annotations={
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
                "kubectl.kubernetes.io/restartedAt": CREATED,
            },
            ownerReferences=[owner_ref],
            managedFields=POD_MANAGED_FIELDS,
        ),
        "spec": spec
        | {
            "nodeName": node,
            "serviceAccount": spec["serviceAccountName"],
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "tolerations": spec.get("tolerations")
            or [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": CREATED}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": "10.0.0.10",
            "hostIPs": [{"ip": "10.0.0.10"}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": CREATED,
            "containerStatuses": statuses,
            "qosClass": "Burstable",
        },
    }


def pod_name(w: Workload, index: int) -> str:
    if w.kind == "Deployment":
        return f"{w.name}-{rs_hash(w, 2)}-{uid(w.name, index)[:5]}"
    if w.kind == "StatefulSet":
        return f"{w.name}-{index}"
    return f"{job_name(w)}-{uid(w.name, index)[:5]}"


def pod_objs(w: Workload, nodes: list[str]) -> Iterator[Obj]:
    template = pod_template(w, labels_of(w))
    labels = dict(template["metadata"]["labels"])
    if w.kind == "Deployment":
        labels["pod-template-hash"] = rs_hash(w, 2)
        owner_ref = owner("ReplicaSet", "apps/v1", f"{w.name}-{rs_hash(w, 2)}", w.namespace)
    elif w.kind == "StatefulSet":
        owner_ref = owner("StatefulSet", "apps/v1", w.name, w.namespace)
    else:
        owner_ref = owner("Job", "batch/v1", job_name(w), w.namespace)
    for index, node_index in enumerate(w.nodes):
        yield _pod(
            w.namespace,
            pod_name(w, index),
            labels,
            owner_ref,
            template["spec"],
            nodes[node_index],
            pod_ip(w.name, index),
        )


def daemon_pod_objs(namespace: str, name: str, nodes: list[str]) -> Iterator[Obj]:
    spec = daemon_spec(namespace, name)
    owner_ref = owner("DaemonSet", "apps/v1", name, namespace)
    for index, node in enumerate(nodes):
        yield _pod(
            namespace, f"{name}-{uid(name, index)[:5]}", {"k8s-app": name}, owner_ref, spec, node, pod_ip(name, index)
        )


def pod_ip(name: str, index: int) -> str:
    h = int(uid(name, index)[:6], 16)
    return f"10.{100 + h % 100}.{(h >> 8) % 256}.{h % 254 + 1}"


def service_obj(w: Workload) -> Obj:
    spec = {
        "type": "ClusterIP",
        "selector": {"app.kubernetes.io/name": w.name},
        "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}],
        "clusterIP": pod_ip(w.name, -1).replace("10.", "172.", 1),
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }
    manifest = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": w.name, "namespace": w.namespace},
        "spec": {k: spec[k] for k in ("type", "selector", "ports")},
    }
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta("Service", w.name, w.namespace, labels=labels_of(w), annotations=applied(manifest)),
        "spec": spec,
        "status": {"loadBalancer": {}},
    }


def endpointslice_obj(w: Workload, nodes: list[str]) -> Obj:
    name = f"{w.name}-{uid('eps', w.name)[:5]}"
    endpoints = [
        {
            "addresses": [pod_ip(w.name, i)],
            "conditions": {"ready": True, "serving": True, "terminating": False},
            "nodeName": nodes[node_index],
            "zone": ZONES[node_index % len(ZONES)],
            "targetRef": {"kind": "Pod", "namespace": w.namespace, "name": pod_name(w, i)},
        }
        for i, node_index in enumerate(w.nodes)
    ]
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": meta(
            "EndpointSlice",
            name,
            w.namespace,
            labels={
                "kubernetes.io/service-name": w.name,
                "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
            },
            ownerReferences=[owner("Service", "v1", w.name, w.namespace)],
        ),
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
    }


def pdb_obj(w: Workload) -> Obj:
    spec: Obj = {"selector": {"matchLabels": {"app.kubernetes.io/name": w.name}}}
    spec["maxUnavailable"] = 0 if w.pdb == "blocking" else 1
    allowed = 0 if w.pdb == "blocking" else min(1, w.replicas)
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta("PodDisruptionBudget", w.name, w.namespace, labels=labels_of(w)),
        "spec": spec,
        "status": {
            "currentHealthy": w.replicas,
            "desiredHealthy": w.replicas - allowed,
            "disruptionsAllowed": allowed,
            "expectedPods": w.replicas,
            "observedGeneration": 1,
        },
    }


def hpa_obj(w: Workload) -> Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta("HorizontalPodAutoscaler", w.name, w.namespace),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name},
            "minReplicas": max(1, w.replicas // 2),
            "maxReplicas": w.replicas * 3,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                }
            ],
        },
        "status": {"currentReplicas": w.replicas, "desiredReplicas": w.replicas},
    }


def pvc_objs(w: Workload) -> Iterator[Obj]:
    for i in range(w.replicas):
        name = f"data-{w.name}-{i}"
        yield {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": meta("PersistentVolumeClaim", name, w.namespace, labels={"app.kubernetes.io/name": w.name}),
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "gp3",
                "resources": {"requests": {"storage": "50Gi"}},
                "volumeName": f"pvc-{uid(name)}",
            },
            "status": {"phase": "Bound", "capacity": {"storage": "50Gi"}},
        }


def pv_objs(w: Workload) -> Iterator[Obj]:
    for i in range(w.replicas):
        claim = f"data-{w.name}-{i}"
        name = f"pvc-{uid(claim)}"
        yield {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": meta("PersistentVolume", name, None, finalizers=["kubernetes.io/pv-protection"]),
            "spec": {
                "capacity": {"storage": "50Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "gp3",
                "claimRef": {"kind": "PersistentVolumeClaim", "namespace": w.namespace, "name": claim},
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{uid(name)[:17].replace('-', '')}"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": [ZONES[w.nodes[i] % len(ZONES)]],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
            "status": {"phase": "Bound"},
        }


def ingress_class_obj() -> Obj:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": meta(
            "IngressClass", "nginx", None, annotations={"ingressclass.kubernetes.io/is-default-class": "true"}
        ),
        "spec": {"controller": "k8s.io/ingress-nginx"},
    }


def ingress_obj(w: Workload) -> Obj:
    host = f"{w.name}.{w.team}.example.com"
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta("Ingress", w.name, w.namespace, annotations={"cert-manager.io/cluster-issuer": "letsencrypt"}),
        "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": [host], "secretName": f"{w.name}-tls"}],
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": w.name, "port": {"number": 80}}},
                            }
                        ]
                    },
                }
            ],
        },
        "status": {"loadBalancer": {"ingress": [{"hostname": "lb.eu-west-1.elb.amazonaws.com"}]}},
    }


def certificate_obj(w: Workload) -> Obj:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": meta("Certificate", f"{w.name}-tls", w.namespace),
        "spec": {
            "secretName": f"{w.name}-tls",
            "dnsNames": [f"{w.name}.{w.team}.example.com"],
            "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": CREATED}],
            "notAfter": "2025-04-06T09:14:07Z",
            "renewalTime": "2025-03-07T09:14:07Z",
        },
    }


def network_policy_obj(namespace: str) -> Obj:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta("NetworkPolicy", "default-deny-ingress", namespace),
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress"}}}]}],
        },
    }


def webhook_objs(kind: str) -> list[Obj]:
    names = ("gatekeeper", "kyverno") if kind == "Validating" else ("istio-sidecar-injector",)
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": f"{kind}WebhookConfiguration",
            "metadata": meta(f"{kind}WebhookConfiguration", name, None),
            "webhooks": [
                {
                    "name": f"{name}.example.com",
                    "clientConfig": {
                        "service": {"namespace": name, "name": f"{name}-webhook", "path": "/validate", "port": 443},
                        "caBundle": "LS0tLS1CRUdJTi" + "A" * 600,
                    },
                    "rules": [
                        {
                            "apiGroups": ["*"],
                            "apiVersions": ["*"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["*"],
                            "scope": "*",
                        }
                    ],
                    "failurePolicy": "Fail" if name == "kyverno" else "Ignore",
                    "sideEffects": "None",
                    "timeoutSeconds": 10,
                    "admissionReviewVersions": ["v1"],
                    "namespaceSelector": {},
                }
            ],
        }
        for name in names
    ]


def api_service_objs() -> list[Obj]:
    local = [("v1", ""), ("v1", "apps"), ("v1", "batch"), ("v1", "policy"), ("v2", "autoscaling")]
    result = [
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": meta("APIService", f"{version}.{group}" if group else version, None),
            "spec": {"group": group, "version": version, "groupPriorityMinimum": 17800, "versionPriority": 15},
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]},
        }
        for version, group in local
    ]
    result.append(
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": meta("APIService", "v1beta1.metrics.k8s.io", None),
            "spec": {
                "group": "metrics.k8s.io",
                "version": "v1beta1",
                "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
                "insecureSkipTLSVerify": True,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed"}]},
        }
    )
    return result
