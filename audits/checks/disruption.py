"""Disruption: workloads that a single node drain or rollout takes offline."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, key_of, labels_of
from audits.severity import Severity


def _hpa_min_replicas(index: SnapshotIndex, workload_key: tuple[str, str, str]) -> int | None:
    kind, namespace, name = workload_key
    for hpa in index.of_kind("HorizontalPodAutoscaler"):
        target = hpa.get("spec", {}).get("scaleTargetRef", {})
        if hpa["metadata"].get("namespace") == namespace and target.get("kind") == kind and target.get("name") == name:
            return int(hpa["spec"].get("minReplicas", 1))
    return None


@check(
    id="KG-DIS-001",
    title="Workload runs a single replica",
    area="disruption",
    severity=Severity.HIGH,
    needs=("Deployment",),
    cases=("KC-079", "KC-080", "KC-021"),
    why=(
        "With one replica, every node drain, eviction, upgrade or crash takes the workload offline until a new pod "
        "is scheduled, pulled and ready. Surge node upgrades and rerolls routinely do exactly that."
    ),
    fix="Run at least two replicas (or an HPA with minReplicas of 2 or more) and give them a PodDisruptionBudget.",
)
def single_replica(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads("Deployment", "StatefulSet"):
        replicas = workload.get("spec", {}).get("replicas", 1)
        if replicas != 1:
            continue
        hpa_min = _hpa_min_replicas(index, key_of(workload))
        if hpa_min is not None and hpa_min >= 2:
            continue
        yield Hit(
            workload,
            f"{workload['kind']} runs a single replica: any drain, eviction or crash takes it offline.",
            {"spec.replicas": replicas, "hpa.minReplicas": hpa_min},
        )


@check(
    id="KG-DIS-002",
    title="Replicated workload has no PodDisruptionBudget",
    area="disruption",
    severity=Severity.MEDIUM,
    needs=("Deployment", "PodDisruptionBudget"),
    cases=("KC-079", "KC-021"),
    why=(
        "Without a PodDisruptionBudget, a node drain or cluster upgrade may evict every replica at once; the "
        "replicas protect against crashes but not against voluntary disruption."
    ),
    fix=(
        "Add a policy/v1 PodDisruptionBudget selecting the pods, with maxUnavailable: 1 or a minAvailable below "
        "replicas."
    ),
)
def replicated_without_pdb(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads("Deployment", "StatefulSet"):
        replicas = workload.get("spec", {}).get("replicas", 1)
        if replicas < 2:
            continue
        namespace = workload["metadata"].get("namespace") or ""
        template_labels = labels_of(workload.get("spec", {}).get("template", {}))
        if index.pdbs_covering(namespace, template_labels):
            continue
        yield Hit(
            workload,
            f"{workload['kind']} has {replicas} replicas but no PodDisruptionBudget: a drain may evict them all "
            "at once.",
            {"spec.replicas": replicas, "template.labels": template_labels, "matching PodDisruptionBudgets": []},
        )
