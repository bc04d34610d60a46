"""One pass over a snapshot that answers the questions checks keep asking.

Built once per audit: objects by kind and name, owner chains from pods up to
their workloads, each workload's pod template with its running pods, pods by
node and by label, nodes to zones, PDBs and Services by the labels they select.
Every answer is computed on first use and cached, so a check costs what it
reads, not a scan of 150,000 pods. Checks read this and never the raw snapshot.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml
from cryptography import x509

from audits.collect.snapshot import Obj, Snapshot

Key = tuple[str, str, str]  # kind, namespace, name

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")
# Workloads that serve traffic for as long as they run (batch kinds finish).
SERVING_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"})
REPLICATED_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
INGRESS_CONTROLLER_IMAGES = re.compile(
    r"ingress-nginx/controller|nginx-ingress|/traefik|^traefik|haproxy-ingress|haproxytech/kubernetes-ingress|"
    r"projectcontour/contour|/kong|^kong|envoyproxy/gateway|skipper",
    re.IGNORECASE,
)


# --- small readers of Kubernetes JSON -----------------------------------------------------------


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata", {})
    return (str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def labels_of(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def annotations_of(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("annotations") or {}


def name_of(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def namespace_of(obj: Obj) -> str:
    return str(obj.get("metadata", {}).get("namespace") or "")


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector against labels; an absent selector matches nothing."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def pod_is_ready(pod: Obj) -> bool:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def pod_is_active(pod: Obj) -> bool:
    """Placed on a node and not finished: the pods that occupy a failure domain."""
    return bool(pod.get("spec", {}).get("nodeName")) and pod.get("status", {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


def pod_containers(pod_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Regular containers; init containers run to completion and are judged apart."""
    yield from pod_spec.get("containers") or []


def pod_template_spec(workload: Obj) -> dict[str, Any]:
    """The pod spec a workload creates pods from (CronJob through its Job template)."""
    spec = workload.get("spec", {})
    if workload.get("kind") == "CronJob":
        spec = spec.get("jobTemplate", {}).get("spec", {})
    if workload.get("kind") == "Pod":
        return spec
    return spec.get("template", {}).get("spec", {})


def pod_template_metadata(workload: Obj) -> dict[str, Any]:
    spec = workload.get("spec", {})
    if workload.get("kind") == "CronJob":
        spec = spec.get("jobTemplate", {}).get("spec", {})
    if workload.get("kind") == "Pod":
        return workload.get("metadata", {})
    return spec.get("template", {}).get("metadata", {}) or {}


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def condition_status(obj: Obj, condition_type: str) -> str | None:
    for condition in obj.get("status", {}).get("conditions") or []:
        if condition.get("type") == condition_type:
            return str(condition.get("status"))
    return None


_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
    "Pi": 2.0**50,
    "Ei": 2.0**60,
}


def quantity(value: object) -> float | None:
    """A Kubernetes resource quantity ("256Mi", "100m", "1.5") as a number, or None if unreadable."""
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(2) not in _SUFFIX:
        return None
    try:
        return float(match.group(1)) * _SUFFIX[match.group(2)]
    except ValueError:
        return None


_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def minor_version(version: str) -> tuple[int, int] | None:
    """(1, 30) from "v1.30.4", "v1.30.4-eks-1234" or "1.30"."""
    match = _VERSION.search(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def image_tag(image: str) -> tuple[str, str, str]:
    """(repository, tag, digest) of an image reference; tag is "" when none is given."""
    digest = ""
    if "@" in image:
        image, digest = image.split("@", 1)
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        repository, tag = image.rsplit(":", 1)
        return repository, tag, digest
    return image, "", digest


def certificate_not_after(ca_bundle: str) -> list[dt.datetime]:
    """notAfter of every certificate in a base64 PEM bundle (a webhook's caBundle); [] if unreadable."""
    try:
        pem = base64.b64decode(ca_bundle, validate=False)
        return [cert.not_valid_after_utc for cert in x509.load_pem_x509_certificates(pem)]
    except (ValueError, TypeError):
        return []


def parse_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def cluster_object(name: str) -> Obj:
    """A stand-in for a finding about the cluster as a whole (its zones, its control plane)."""
    return {"kind": "Cluster", "metadata": {"name": name}}


def sample(names: Iterable[str], limit: int = 10) -> list[str]:
    """A sorted, bounded list of names for evidence, so one finding never carries thousands."""
    return sorted(names)[:limit]


# --- workload templates -------------------------------------------------------------------------


@dataclass
class Workload:
    """One workload as checks see it: the object findings name, its pod template, its running pods.

    `obj` is the workload object when the snapshot holds it, or a stand-in naming it
    when only its pods were collected (a dump without ReplicaSets still groups pods).
    """

    obj: Obj
    key: Key
    spec: dict[str, Any]
    labels: dict[str, str]
    annotations: dict[str, str]
    pods: list[Obj] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.key[0]

    @property
    def namespace(self) -> str:
        return self.key[1]

    @property
    def name(self) -> str:
        return self.key[2]

    @property
    def replicas(self) -> int | None:
        """Declared replicas for replicated kinds, else the number of pods running."""
        if self.obj.get("spec") is not None and self.kind in REPLICATED_KINDS:
            return int(self.obj["spec"].get("replicas", 1))
        return len(self.pods) if self.pods else None

    @property
    def containers(self) -> list[dict[str, Any]]:
        return list(pod_containers(self.spec))

    def active_pods(self) -> list[Obj]:
        return [pod for pod in self.pods if pod_is_active(pod)]

    def ready_pods(self) -> list[Obj]:
        return [pod for pod in self.pods if pod_is_ready(pod)]


# --- the index ----------------------------------------------------------------------------------


class SnapshotIndex:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    @property
    def captured_at(self) -> dt.datetime | None:
        captured = self.snapshot.captured_at
        if captured is not None and captured.tzinfo is None:
            return captured.replace(tzinfo=dt.UTC)
        return captured

    @property
    def server_version(self) -> str:
        return self.snapshot.server_version

    def collected(self, kind: str) -> bool:
        return kind in self.snapshot.collected

    def of_kind(self, kind: str) -> list[Obj]:
        return self.snapshot.objects.get(kind, [])

    @cached_property
    def by_key(self) -> dict[Key, Obj]:
        """Every object but pods by (kind, namespace, name); nothing owns through a pod."""
        return {key_of(obj): obj for kind, items in self.snapshot.objects.items() if kind != "Pod" for obj in items}

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.by_key.get((kind, namespace, name))

    def owner_of(self, obj: Obj) -> Obj | None:
        """The controlling owner of an object, when the snapshot holds it."""
        ref = controller_ref(obj)
        if ref is None:
            return None
        return self.get(str(ref.get("kind")), namespace_of(obj), str(ref.get("name")))

    def top_owner(self, obj: Obj) -> Obj:
        """Follow controlling owners up (Pod -> ReplicaSet -> Deployment, Job -> CronJob)."""
        seen = 0
        while (owner := self.owner_of(obj)) is not None and seen < 5:
            obj, seen = owner, seen + 1
        return obj

    def workload_key(self, obj: Obj) -> Key:
        """The key of the workload an object belongs to, even when the snapshot lacks
        that workload. A ReplicaSet's Deployment is recognised by the pod-template-hash
        suffix of its name, a Job's CronJob by its numeric suffix."""
        top = self.top_owner(obj)
        ref = controller_ref(top)
        if ref is None or ref.get("kind") not in WORKLOAD_KINDS:
            # Owned by a node (a static pod) or by an operator's custom resource: the
            # object itself is the workload checks can name and the team can change.
            return key_of(top)
        namespace = namespace_of(top)
        kind, name = str(ref.get("kind")), str(ref.get("name"))
        if kind == "ReplicaSet":
            template_hash = labels_of(top).get("pod-template-hash", "")
            if template_hash and name.endswith("-" + template_hash):
                return ("Deployment", namespace, name[: -len(template_hash) - 1])
        if kind == "Job" and (match := re.fullmatch(r"(.+)-\d+", name)) and self.get("CronJob", namespace, match[1]):
            return ("CronJob", namespace, match[1])
        return (kind, namespace, name)

    @cached_property
    def pods_by_workload(self) -> dict[Key, list[Obj]]:
        grouped: dict[Key, list[Obj]] = defaultdict(list)
        for pod in self.of_kind("Pod"):
            grouped[self.workload_key(pod)].append(pod)
        return grouped

    def object_or_stub(self, key: Key) -> Obj:
        """The object for a key, or a minimal stand-in naming it when it was not collected."""
        kind, namespace, name = key
        found = self.get(kind, namespace, name)
        if found is not None:
            return found
        metadata = {"name": name, "namespace": namespace} if namespace else {"name": name}
        return {"kind": kind, "metadata": metadata}

    @cached_property
    def workloads(self) -> list[Workload]:
        """Every workload once, with its pod template and pods.

        1. Top-level workload objects (a Deployment, not its ReplicaSets; a CronJob, not its Jobs).
        2. Workload objects whose owner was not collected, named after that owner.
        3. Groups of pods whose workload was not collected at all, judged on their first pod.
        Pods mirrored from a node's static manifests are not workloads: the API cannot change them.
        """
        found: dict[Key, Workload] = {}
        for kind in ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "ReplicaSet"):
            objects = self.of_kind(kind)
            if kind == "ReplicaSet":
                # Of a missing Deployment's ReplicaSets, judge the current one, not old revisions.
                objects = sorted(objects, key=lambda rs: -int(rs.get("spec", {}).get("replicas") or 0))
            for obj in objects:
                key = self.workload_key(obj)
                if key in found:
                    continue
                top = self.get(*key)
                if top is not None and top is not obj:
                    continue  # the owner is collected and judged in its own right
                metadata = pod_template_metadata(obj)
                found[key] = Workload(
                    obj=obj if top is obj else self.object_or_stub(key),
                    key=key,
                    spec=pod_template_spec(obj),
                    labels=metadata.get("labels") or {},
                    annotations=metadata.get("annotations") or {},
                )
        for key, pods in self.pods_by_workload.items():
            if key in found:
                found[key].pods = pods
                continue
            first = pods[0]
            if (controller_ref(first) or {}).get("kind") == "Node":
                continue  # a static pod: its node's manifest, not the API, defines it
            found[key] = Workload(
                obj=first if key == key_of(first) else self.object_or_stub(key),
                key=key,
                spec=first.get("spec", {}),
                labels=labels_of(first),
                annotations=annotations_of(first),
                pods=pods,
            )
        return list(found.values())

    def workloads_of_kind(self, *kinds: str) -> Iterator[Workload]:
        wanted = set(kinds)
        return (w for w in self.workloads if w.kind in wanted)

    @cached_property
    def hpa_targets(self) -> frozenset[Key]:
        """(kind, namespace, name) of every workload an autoscaler scales."""
        return frozenset(
            (str(ref.get("kind")), namespace_of(hpa), str(ref.get("name")))
            for hpa in self.of_kind("HorizontalPodAutoscaler")
            if (ref := hpa.get("spec", {}).get("scaleTargetRef"))
        )

    # --- nodes and topology ---------------------------------------------------------------------

    @cached_property
    def node_by_name(self) -> dict[str, Obj]:
        return {node["metadata"]["name"]: node for node in self.of_kind("Node")}

    def zone_of_node(self, node_name: str) -> str | None:
        node = self.node_by_name.get(node_name)
        return labels_of(node).get(ZONE_LABEL) if node else None

    @cached_property
    def zones(self) -> frozenset[str]:
        return frozenset(z for node in self.of_kind("Node") if (z := labels_of(node).get(ZONE_LABEL)))

    @cached_property
    def regions(self) -> frozenset[str]:
        return frozenset(r for node in self.of_kind("Node") if (r := labels_of(node).get(REGION_LABEL)))

    def placement(self, pods: Iterable[Obj]) -> tuple[set[str], set[str]]:
        """The nodes and the zones (where nodes are labelled) that the given pods run on."""
        nodes = {str(pod["spec"]["nodeName"]) for pod in pods if pod.get("spec", {}).get("nodeName")}
        zones = {zone for node in nodes if (zone := self.zone_of_node(node))}
        return nodes, zones

    def failure_domain(self, nodes: set[str], zones: set[str]) -> str | None:
        """ "node X" or "zone Y" when one node, or one zone of a multi-zone cluster, holds all of
        them: the single thing whose loss takes them all down. None when they are spread."""
        if len(nodes) == 1:
            return f"node {next(iter(nodes))}"
        if len(zones) == 1 and len(self.zones) >= 2:
            return f"zone {next(iter(zones))}"
        return None

    # --- pods by namespace and label ------------------------------------------------------------

    @cached_property
    def pods_by_namespace(self) -> dict[str, list[Obj]]:
        grouped: dict[str, list[Obj]] = defaultdict(list)
        for pod in self.of_kind("Pod"):
            grouped[namespace_of(pod)].append(pod)
        return grouped

    @cached_property
    def _pods_by_label(self) -> dict[tuple[str, str, str], list[Obj]]:
        grouped: dict[tuple[str, str, str], list[Obj]] = defaultdict(list)
        for pod in self.of_kind("Pod"):
            namespace = namespace_of(pod)
            for label, value in labels_of(pod).items():
                grouped[(namespace, label, value)].append(pod)
        return grouped

    def pods_selected(self, namespace: str, selector: dict[str, Any] | None) -> list[Obj]:
        """Pods in a namespace that a LabelSelector selects, starting from its rarest label."""
        if selector is None:
            return []
        match_labels = selector.get("matchLabels") or {}
        if match_labels:
            candidates = min(
                (self._pods_by_label.get((namespace, k, str(v)), []) for k, v in match_labels.items()), key=len
            )
        else:
            candidates = self.pods_by_namespace.get(namespace, [])
        return [pod for pod in candidates if selector_matches(selector, labels_of(pod))]

    # --- PodDisruptionBudgets -------------------------------------------------------------------

    @cached_property
    def _pdb_index(self) -> tuple[dict[tuple[str, str, str], list[Obj]], dict[str, list[Obj]]]:
        """PDBs filed under one label they require, and per namespace those that require none."""
        anchored: dict[tuple[str, str, str], list[Obj]] = defaultdict(list)
        loose: dict[str, list[Obj]] = defaultdict(list)
        for pdb in self.of_kind("PodDisruptionBudget"):
            match_labels = (pdb.get("spec", {}).get("selector") or {}).get("matchLabels") or {}
            if match_labels:
                label, value = min(match_labels.items())
                anchored[(namespace_of(pdb), label, str(value))].append(pdb)
            else:
                loose[namespace_of(pdb)].append(pdb)
        return anchored, loose

    def pdbs_covering(self, namespace: str, pod_labels: dict[str, str]) -> list[Obj]:
        anchored, loose = self._pdb_index
        candidates = [pdb for label, value in pod_labels.items() for pdb in anchored.get((namespace, label, value), [])]
        candidates += loose.get(namespace, [])
        return [pdb for pdb in candidates if selector_matches(pdb.get("spec", {}).get("selector"), pod_labels)]

    def workload_pdbs(self, workload: Workload) -> list[Obj]:
        labels = workload.labels or (labels_of(workload.pods[0]) if workload.pods else {})
        return self.pdbs_covering(workload.namespace, labels)

    # --- Services, their backends and what sits behind a load balancer --------------------------

    @cached_property
    def _services_by_anchor(self) -> dict[tuple[str, str, str], list[Obj]]:
        grouped: dict[tuple[str, str, str], list[Obj]] = defaultdict(list)
        for svc in self.of_kind("Service"):
            selector = svc.get("spec", {}).get("selector") or {}
            if selector:
                label, value = min(selector.items())
                grouped[(namespace_of(svc), label, str(value))].append(svc)
        return grouped

    def services_selecting(self, namespace: str, pod_labels: dict[str, str]) -> list[Obj]:
        """Services whose selector matches these pod labels (each Service is filed once)."""
        found = []
        for label, value in pod_labels.items():
            for svc in self._services_by_anchor.get((namespace, label, value), []):
                selector = svc["spec"]["selector"]
                if all(pod_labels.get(k) == v for k, v in selector.items()):
                    found.append(svc)
        return found

    def workload_services(self, workload: Workload) -> list[Obj]:
        labels = workload.labels or (labels_of(workload.pods[0]) if workload.pods else {})
        return self.services_selecting(workload.namespace, labels)

    @cached_property
    def _service_pods(self) -> dict[Key, list[Obj]]:
        return {
            key_of(svc): self.pods_selected(namespace_of(svc), {"matchLabels": svc["spec"]["selector"]})
            for svc in self.of_kind("Service")
            if svc.get("spec", {}).get("selector")
        }

    def service_pods(self, svc: Obj) -> list[Obj]:
        """The pods a Service's selector picks (its would-be endpoints)."""
        return self._service_pods.get(key_of(svc), [])

    @cached_property
    def endpoint_slices_by_service(self) -> dict[tuple[str, str], list[Obj]]:
        grouped: dict[tuple[str, str], list[Obj]] = defaultdict(list)
        for eps in self.of_kind("EndpointSlice"):
            service = labels_of(eps).get(SERVICE_NAME_LABEL)
            if service:
                grouped[(namespace_of(eps), service)].append(eps)
        return grouped

    @cached_property
    def ingress_backend_services(self) -> frozenset[tuple[str, str]]:
        """(namespace, name) of every Service an Ingress routes to."""
        found: set[tuple[str, str]] = set()
        for ingress in self.of_kind("Ingress"):
            namespace, spec = namespace_of(ingress), ingress.get("spec", {})
            backends = [spec.get("defaultBackend") or {}]
            for rule in spec.get("rules") or []:
                backends += [path.get("backend") or {} for path in (rule.get("http") or {}).get("paths") or []]
            found |= {(namespace, name) for b in backends if (name := (b.get("service") or {}).get("name"))}
        return frozenset(found)

    def is_load_balanced(self, svc: Obj) -> bool:
        """Traffic reaches this Service through a cloud load balancer, a node port or an Ingress."""
        kind = svc.get("spec", {}).get("type", "ClusterIP")
        return (
            kind in ("LoadBalancer", "NodePort") or (namespace_of(svc), name_of(svc)) in self.ingress_backend_services
        )

    # --- well-known components ------------------------------------------------------------------

    @cached_property
    def ingress_controllers(self) -> list[Workload]:
        return [
            w
            for w in self.workloads
            if w.kind in SERVING_KINDS
            and any(INGRESS_CONTROLLER_IMAGES.search(str(c.get("image", ""))) for c in w.containers)
        ]

    @cached_property
    def cluster_dns(self) -> list[Workload]:
        """CoreDNS (or kube-dns) in kube-system."""
        return [
            w
            for w in self.workloads
            if w.namespace == "kube-system"
            and w.kind in ("Deployment", "ReplicaSet")
            and (w.name in ("coredns", "kube-dns") or w.labels.get("k8s-app") == "kube-dns")
        ]

    def configmap_data(self, namespace: str, name: str) -> dict[str, str]:
        found = self.get("ConfigMap", namespace, name)
        return dict(found.get("data") or {}) if found else {}

    @cached_property
    def kube_proxy_config(self) -> tuple[Obj, dict[str, Any]] | None:
        """kube-proxy's ConfigMap and its parsed KubeProxyConfiguration (kubeadm or EKS layout)."""
        for name, data_key in (("kube-proxy", "config.conf"), ("kube-proxy-config", "config")):
            configmap = self.get("ConfigMap", "kube-system", name)
            text = (configmap or {}).get("data", {}).get(data_key) if configmap else None
            if configmap is None or not text:
                continue
            try:
                parsed = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(parsed, dict):
                return configmap, parsed
        return None

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """A namespace's labels; the API server always sets kubernetes.io/metadata.name."""
        found = self.get("Namespace", "", namespace)
        labels = dict(labels_of(found)) if found else {}
        labels.setdefault("kubernetes.io/metadata.name", namespace)
        return labels

    @cached_property
    def webhooks(self) -> list[tuple[Obj, dict[str, Any]]]:
        """Every admission webhook with the configuration object that holds it."""
        return [
            (config, hook)
            for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
            for config in self.of_kind(kind)
            for hook in config.get("webhooks") or []
        ]

    @cached_property
    def priority_values(self) -> dict[str, int]:
        return {name_of(pc): int(pc.get("value", 0)) for pc in self.of_kind("PriorityClass")}

    @cached_property
    def default_priority(self) -> int:
        for pc in self.of_kind("PriorityClass"):
            if pc.get("globalDefault"):
                return int(pc.get("value", 0))
        return 0

    def workload_priority(self, workload: Workload) -> int:
        class_name = workload.spec.get("priorityClassName")
        if class_name:
            return self.priority_values.get(str(class_name), self.default_priority)
        return self.default_priority

    @cached_property
    def default_storage_class(self) -> Obj | None:
        for sc in self.of_kind("StorageClass"):
            if annotations_of(sc).get("storageclass.kubernetes.io/is-default-class") == "true":
                return sc
        return None
