"""One pass over a snapshot that answers the questions checks keep asking.

Built once per audit: objects by kind and name, owner chains from pods up to
their workloads, pods by node, nodes to zones, PDBs by namespace, Services to
their EndpointSlices. Checks read it and never scan the snapshot themselves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from functools import cached_property
from typing import Any

from audits.collect.snapshot import Obj, Snapshot

Key = tuple[str, str, str]  # kind, namespace, name

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata", {})
    return (str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def labels_of(obj: Obj) -> dict[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


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


class SnapshotIndex:
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def of_kind(self, kind: str) -> list[Obj]:
        return self.snapshot.objects.get(kind, [])

    @cached_property
    def by_key(self) -> dict[Key, Obj]:
        return {key_of(obj): obj for items in self.snapshot.objects.values() for obj in items}

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.by_key.get((kind, namespace, name))

    def owner_of(self, obj: Obj) -> Obj | None:
        """The controlling owner of an object, when the snapshot holds it."""
        namespace = obj.get("metadata", {}).get("namespace") or ""
        for ref in obj.get("metadata", {}).get("ownerReferences") or []:
            if ref.get("controller"):
                return self.get(str(ref.get("kind")), namespace, str(ref.get("name")))
        return None

    def top_owner(self, obj: Obj) -> Obj:
        """Follow controlling owners up (Pod -> ReplicaSet -> Deployment, Job -> CronJob)."""
        seen = 0
        while (owner := self.owner_of(obj)) is not None and seen < 5:
            obj, seen = owner, seen + 1
        return obj

    def workload_key(self, obj: Obj) -> Key:
        """The key of the workload an object belongs to, even when the snapshot
        lacks that workload (a dump without ReplicaSets still groups pods)."""
        top = self.top_owner(obj)
        namespace = top.get("metadata", {}).get("namespace") or ""
        for ref in top.get("metadata", {}).get("ownerReferences") or []:
            if ref.get("controller"):
                return (str(ref.get("kind")), namespace, str(ref.get("name")))
        return key_of(top)

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

    def pods_of(self, workload: Obj) -> list[Obj]:
        return self.pods_by_workload.get(key_of(workload), [])

    @cached_property
    def node_by_name(self) -> dict[str, Obj]:
        return {node["metadata"]["name"]: node for node in self.of_kind("Node")}

    def zone_of_node(self, node_name: str) -> str | None:
        node = self.node_by_name.get(node_name)
        return labels_of(node).get(ZONE_LABEL) if node else None

    @cached_property
    def pods_by_namespace(self) -> dict[str, list[Obj]]:
        grouped: dict[str, list[Obj]] = defaultdict(list)
        for pod in self.of_kind("Pod"):
            grouped[pod["metadata"].get("namespace") or ""].append(pod)
        return grouped

    def pods_selected(self, namespace: str, selector: dict[str, Any] | None) -> list[Obj]:
        return [pod for pod in self.pods_by_namespace.get(namespace, []) if selector_matches(selector, labels_of(pod))]

    @cached_property
    def pdbs_by_namespace(self) -> dict[str, list[Obj]]:
        grouped: dict[str, list[Obj]] = defaultdict(list)
        for pdb in self.of_kind("PodDisruptionBudget"):
            grouped[pdb["metadata"].get("namespace") or ""].append(pdb)
        return grouped

    def pdbs_covering(self, namespace: str, pod_labels: dict[str, str]) -> list[Obj]:
        return [
            pdb
            for pdb in self.pdbs_by_namespace.get(namespace, [])
            if selector_matches(pdb.get("spec", {}).get("selector"), pod_labels)
        ]

    def workloads(self, *kinds: str) -> Iterator[Obj]:
        for kind in kinds or WORKLOAD_KINDS:
            yield from self.of_kind(kind)
