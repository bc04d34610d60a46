"""Small builders for Kubernetes objects as the API serves them (plain JSON dicts).

Used by the bundled demo clusters and by the tests, so both describe clusters
the same way. Each builder takes only what varies and fills in the rest the way
a real API server would.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Obj = dict[str, Any]


def _uid(namespace: str | None, name: str) -> str:
    return hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:32]


def _meta(name: str, namespace: str | None, labels: dict[str, str] | None, annotations: dict[str, str] | None) -> Obj:
    meta: Obj = {"name": name, "uid": _uid(namespace, name)}
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
    cpu_limit: str | None = None,
    image_pull_policy: str | None = None,
    env_from_config_map: dict[str, tuple[str, str]] | None = None,
) -> Obj:
    limits: dict[str, str] = {}
    requests: dict[str, str] = {}
    if memory_limit:
        limits["memory"] = memory_limit
    if memory_request:
        requests["memory"] = memory_request
    if cpu_request:
        requests["cpu"] = cpu_request
    if cpu_limit:
        limits["cpu"] = cpu_limit
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
    for var, (config_map, key) in (env_from_config_map or {}).items():
        c.setdefault("env", []).append(
            {"name": var, "valueFrom": {"configMapKeyRef": {"name": config_map, "key": key}}}
        )
    if image_pull_policy:
        c["imagePullPolicy"] = image_pull_policy
    if readiness:
        c["readinessProbe"] = readiness
    if liveness:
        c["livenessProbe"] = liveness
    if pre_stop_sleep:
        c["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(pre_stop_sleep)]}}}
    return c


def http_probe(path: str = "/healthz", port: int = 8080, *, failure_threshold: int | None = None) -> Obj:
    probe: Obj = {"httpGet": {"path": path, "port": port}, "periodSeconds": 10}
    if failure_threshold is not None:
        probe["failureThreshold"] = failure_threshold
    return probe


def spread(*topology_keys: str, labels: dict[str, str]) -> Obj:
    """Pod spec fields that spread pods with these labels over the given topology keys."""
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": dict(labels)},
            }
            for key in topology_keys or ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
        ]
    }


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
    unschedulable: bool = False,
    pod_cidr: str | None = None,
    kube_proxy: str | None = None,
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
    spec: Obj = {}
    if unschedulable:
        spec["unschedulable"] = True
    if pod_cidr:
        spec["podCIDR"] = pod_cidr
        spec["podCIDRs"] = [pod_cidr]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": _meta(name, None, all_labels, None),
        "spec": spec,
        "status": {
            "capacity": cap,
            "allocatable": dict(cap),
            "conditions": [{"type": t, "status": s} for t, s in state.items()],
            "nodeInfo": {
                "osImage": os_image,
                "kubeletVersion": kubelet,
                "kubeProxyVersion": kube_proxy or kubelet,
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
    template_annotations: dict[str, str] | None = None,
    volume_claim_templates: list[Obj] | None = None,
    claim_retention: dict[str, str] | None = None,
) -> Obj:
    """A Deployment, StatefulSet or DaemonSet selecting pods labelled app=<name>."""
    pod_labels = {"app": name, **(labels or {})}
    api = "apps/v1"
    spec: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": _pod_template(pod_labels, containers, pod_spec),
    }
    if template_annotations:
        spec["template"]["metadata"]["annotations"] = dict(template_annotations)
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    if volume_claim_templates:
        spec["volumeClaimTemplates"] = volume_claim_templates
    if claim_retention:
        spec["persistentVolumeClaimRetentionPolicy"] = dict(claim_retention)
    return {"apiVersion": api, "kind": kind, "metadata": _meta(name, namespace, pod_labels, annotations), "spec": spec}


def claim_template(name: str, storage_class: str | None, size: str = "10Gi") -> Obj:
    """A StatefulSet volumeClaimTemplate."""
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {"metadata": {"name": name}, "spec": spec}


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


def pod_for(
    owner: Obj,
    index: int,
    node_name: str,
    *,
    ready: bool = True,
    phase: str = "Running",
    oom_killed: tuple[str, ...] = (),
    unschedulable: str | None = None,
) -> Obj:
    """A pod created by `owner` (a ReplicaSet, StatefulSet, DaemonSet or Job), placed on a node.

    `oom_killed` names containers whose last run ended in an OOM kill; `unschedulable` makes the
    pod Pending with that scheduler message, on no node."""
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
    if oom_killed:
        pod["status"]["containerStatuses"] = [
            {
                "name": c["name"],
                "ready": ready,
                "restartCount": 3 if c["name"] in oom_killed else 0,
                "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
                if c["name"] in oom_killed
                else {},
            }
            for c in template["spec"]["containers"]
        ]
    if unschedulable:
        del pod["spec"]["nodeName"]
        pod["status"] = {
            "phase": "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable}
            ],
        }
    return pod


def static_pod(name: str, node_name: str, containers: list[Obj], *, labels: dict[str, str]) -> Obj:
    """A control-plane static pod in kube-system, mirrored by its node (etcd, kube-apiserver)."""
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(f"{name}-{node_name}", "kube-system", labels, {"kubernetes.io/config.mirror": "x"}),
        "spec": {"containers": containers, "nodeName": node_name, "priorityClassName": "system-node-critical"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": _uid(None, node_name), "controller": True}
    ]
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
    annotations: dict[str, str] | None = None,
    source_ranges: list[str] | None = None,
    external_name: str | None = None,
) -> Obj:
    spec: Obj = {"type": type_, "ports": [{"port": port, "protocol": "TCP"}]}
    if selector is not None:
        spec["selector"] = dict(selector)
    if external_traffic_policy:
        spec["externalTrafficPolicy"] = external_traffic_policy
    if source_ranges:
        spec["loadBalancerSourceRanges"] = list(source_ranges)
    if external_name:
        spec["externalName"] = external_name
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(name, namespace, None, annotations), "spec": spec}


def endpoint_slice(
    service_name: str, namespace: str, addresses: list[str], *, managed_by: str = "endpointslice-controller.k8s.io"
) -> Obj:
    """An EndpointSlice of a Service; a managed_by other than the controller's marks a hand-made one."""
    labels = {"kubernetes.io/service-name": service_name, "endpointslice.kubernetes.io/managed-by": managed_by}
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": _meta(f"{service_name}-{_suffix(service_name, 0)}", namespace, labels, None),
        "addressType": "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}} for address in addresses],
    }


def hpa(name: str, namespace: str, target: Obj, *, min_replicas: int | None = 2, max_replicas: int = 10) -> Obj:
    spec: Obj = {
        "scaleTargetRef": {
            "apiVersion": target["apiVersion"],
            "kind": target["kind"],
            "name": target["metadata"]["name"],
        },
        "maxReplicas": max_replicas,
    }
    if min_replicas is not None:
        spec["minReplicas"] = min_replicas
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(name, namespace, None, None),
        "spec": spec,
    }


def ingress(
    name: str, namespace: str, service_name: str, *, class_name: str = "nginx", host: str = "shop.example"
) -> Obj:
    backend = {"service": {"name": service_name, "port": {"number": 80}}}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": _meta(name, namespace, None, None),
        "spec": {
            "ingressClassName": class_name,
            "rules": [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]}}],
        },
    }


def ingress_class(name: str = "nginx", controller: str = "k8s.io/ingress-nginx") -> Obj:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": _meta(name, None, None, {"ingressclass.kubernetes.io/is-default-class": "true"}),
        "spec": {"controller": controller},
    }


def webhook(
    name: str,
    *,
    service: tuple[str, str] | None,
    failure_policy: str | None = "Fail",
    exclude_namespaces: list[str] | None = None,
    rules: list[Obj] | None = None,
    ca_bundle: str | None = None,
) -> Obj:
    """One admission webhook; exclude_namespaces becomes a namespaceSelector on the namespace name."""
    hook: Obj = {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "rules": rules
        or [
            {
                "apiGroups": ["apps"],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["deployments"],
            }
        ],
        "clientConfig": {},
    }
    if failure_policy is not None:
        hook["failurePolicy"] = failure_policy
    if service is not None:
        hook["clientConfig"]["service"] = {"namespace": service[0], "name": service[1], "port": 443}
    if ca_bundle:
        hook["clientConfig"]["caBundle"] = ca_bundle
    if exclude_namespaces:
        hook["namespaceSelector"] = {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(exclude_namespaces)}
            ]
        }
    return hook


def webhook_configuration(name: str, webhooks: list[Obj], *, mutating: bool = False) -> Obj:
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": _meta(name, None, None, None),
        "webhooks": webhooks,
    }


def ca_bundle(not_after: dt.datetime) -> str:
    """A base64 PEM bundle holding one self-signed CA certificate valid until not_after."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubegap test CA")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_after - dt.timedelta(days=365))
        .not_valid_after(not_after)
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(certificate.public_bytes(serialization.Encoding.PEM)).decode()


def api_service(name: str, service: tuple[str, str], *, ca: str | None = None, available: bool = True) -> Obj:
    spec: Obj = {
        "service": {"namespace": service[0], "name": service[1], "port": 443},
        "group": name.split(".", 1)[1],
        "version": name.split(".", 1)[0],
        "groupPriorityMinimum": 100,
        "versionPriority": 100,
    }
    if ca:
        spec["caBundle"] = ca
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": _meta(name, None, None, None),
        "spec": spec,
        "status": {"conditions": [{"type": "Available", "status": "True" if available else "False"}]},
    }


def priority_class(name: str, value: int, *, preemption_policy: str | None = None, global_default: bool = False) -> Obj:
    pc: Obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": _meta(name, None, None, None),
        "value": value,
        "globalDefault": global_default,
    }
    if preemption_policy:
        pc["preemptionPolicy"] = preemption_policy
    return pc


def storage_class(name: str, *, reclaim_policy: str | None = "Delete", default: bool = False) -> Obj:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else None
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": _meta(name, None, None, annotations),
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if reclaim_policy:
        sc["reclaimPolicy"] = reclaim_policy
    return sc


def volume_for(claim_name: str, namespace: str, *, storage_class: str, reclaim_policy: str) -> list[Obj]:
    """A bound PersistentVolumeClaim and the PersistentVolume behind it."""
    volume = f"pvc-{_uid(namespace, claim_name)[:12]}"
    pvc: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _meta(claim_name, namespace, None, None),
        "spec": {"storageClassName": storage_class, "volumeName": volume},
        "status": {"phase": "Bound"},
    }
    pv: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": _meta(volume, None, None, None),
        "spec": {
            "persistentVolumeReclaimPolicy": reclaim_policy,
            "storageClassName": storage_class,
            "claimRef": {"namespace": namespace, "name": claim_name},
        },
        "status": {"phase": "Bound"},
    }
    return [pvc, pv]


def _job_spec(containers: list[Obj], backoff_limit: int | None, active_deadline: int | None) -> Obj:
    spec: Obj = {"template": {"metadata": {"labels": {}}, "spec": {"containers": containers, "restartPolicy": "Never"}}}
    if backoff_limit is not None:
        spec["backoffLimit"] = backoff_limit
    if active_deadline is not None:
        spec["activeDeadlineSeconds"] = active_deadline
    return spec


def job(
    name: str,
    namespace: str,
    containers: list[Obj],
    *,
    backoff_limit: int | None = 6,
    active_deadline: int | None = None,
    complete: bool = False,
) -> Obj:
    """A Job as the API serves it (backoffLimit defaulted to 6 unless given)."""
    spec = _job_spec(containers, backoff_limit, active_deadline)
    spec["template"]["metadata"]["labels"] = {"job-name": name}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(name, namespace, {"job-name": name}, None),
        "spec": spec,
        "status": {"conditions": [{"type": "Complete", "status": "True"}]} if complete else {"active": 1},
    }


def cronjob(
    name: str,
    namespace: str,
    containers: list[Obj],
    *,
    schedule: str = "*/10 * * * *",
    concurrency_policy: str | None = None,
    starting_deadline: int | None = None,
    backoff_limit: int | None = 6,
    active_deadline: int | None = None,
) -> Obj:
    spec: Obj = {"schedule": schedule, "jobTemplate": {"spec": _job_spec(containers, backoff_limit, active_deadline)}}
    if concurrency_policy:
        spec["concurrencyPolicy"] = concurrency_policy
    if starting_deadline is not None:
        spec["startingDeadlineSeconds"] = starting_deadline
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": _meta(name, namespace, None, None), "spec": spec}


def config_map(name: str, namespace: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, namespace, None, None), "data": dict(data)}


def certificate(
    name: str, namespace: str, *, not_after: dt.datetime, renewal_time: dt.datetime, ready: bool = True
) -> Obj:
    """A cert-manager Certificate with its status."""
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": _meta(name, namespace, None, None),
        "spec": {"secretName": f"{name}-tls", "dnsNames": [f"{name}.example"], "issuerRef": {"name": "letsencrypt"}},
        "status": {
            "notAfter": not_after.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "renewalTime": renewal_time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def argo_application(name: str, *, prune: bool, allow_empty: bool = False, namespace: str = "argocd") -> Obj:
    automated: Obj = {"prune": prune, "selfHeal": True}
    if allow_empty:
        automated["allowEmpty"] = True
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": _meta(name, namespace, None, None),
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example/deploy.git", "path": name, "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": name},
            "syncPolicy": {"automated": automated},
        },
    }


def flux_kustomization(name: str, *, prune: bool, namespace: str = "flux-system") -> Obj:
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": _meta(name, namespace, None, None),
        "spec": {
            "interval": "10m",
            "path": f"./{name}",
            "prune": prune,
            "sourceRef": {"kind": "GitRepository", "name": "fleet"},
        },
    }


def sriov_policy(name: str, node_selector: dict[str, str], *, is_rdma: bool = True) -> Obj:
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": "SriovNetworkNodePolicy",
        "metadata": _meta(name, "sriov-network-operator", None, None),
        "spec": {
            "nodeSelector": dict(node_selector),
            "isRdma": is_rdma,
            "resourceName": "mlnx_rdma",
            "numVfs": 8,
            "nicSelector": {"vendor": "15b3"},
        },
    }


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
