"""Disruption: workloads that a single node drain, eviction or rollout takes offline,
and disruption budgets that protect nothing or block every drain."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, key_of, namespace_of
from audits.severity import Severity


@check(
    id="KG-DIS-001",
    title="Workload runs a single replica",
    area="disruption",
    severity=Severity.HIGH,
    needs=("Deployment",),
    cases=("KC-079", "KC-080", "KC-021", "KC-105"),
    why=(
        "With one replica, every node drain, eviction, upgrade or crash takes the workload offline until a new pod "
        "is scheduled, pulled and ready. Surge node upgrades and node image rollovers did exactly that to "
        "single-replica production Deployments."
    ),
    fix="Run at least two replicas (or an HPA with minReplicas of 2 or more) and give them a PodDisruptionBudget.",
)
def single_replica(index: SnapshotIndex) -> Iterator[Hit]:
    scaled = index.hpa_targets
    for workload in index.of_kind("Deployment") + index.of_kind("StatefulSet"):
        replicas = workload.get("spec", {}).get("replicas", 1)
        # An autoscaled workload's floor is judged on its HPA (KG-DIS-005).
        if replicas != 1 or key_of(workload) in scaled:
            continue
        yield Hit(
            workload,
            f"{workload['kind']} runs a single replica: any drain, eviction or crash takes it offline.",
            {"spec.replicas": replicas},
        )


@check(
    id="KG-DIS-002",
    title="Replicated workload has no PodDisruptionBudget",
    area="disruption",
    severity=Severity.MEDIUM,
    needs=("Deployment", "PodDisruptionBudget"),
    cases=("KC-079", "KC-021", "KC-074"),
    why=(
        "Without a PodDisruptionBudget, a node drain or cluster upgrade may evict every replica at once; the "
        "replicas protect against crashes but not against voluntary disruption. A surge upgrade evicted both "
        "replicas of unprotected Deployments together."
    ),
    fix=(
        "Add a policy/v1 PodDisruptionBudget selecting the pods, with maxUnavailable: 1 or a minAvailable below "
        "replicas."
    ),
)
def replicated_without_pdb(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads_of_kind("Deployment", "StatefulSet"):
        replicas = workload.replicas or 0
        if replicas < 2 or index.workload_pdbs(workload):
            continue
        yield Hit(
            workload.obj,
            f"{workload.kind} has {replicas} replicas but no PodDisruptionBudget: a drain may evict them all at once.",
            {"spec.replicas": replicas, "template.labels": workload.labels, "matching PodDisruptionBudgets": []},
        )


def _blocks_every_drain(pdb: dict[str, object], expected: object) -> str:
    """Why a PDB's spec can never allow an eviction, or "" when it can."""
    max_unavailable, min_available = pdb.get("maxUnavailable"), pdb.get("minAvailable")
    if max_unavailable in (0, "0", "0%"):
        return f"maxUnavailable is {max_unavailable!r}"
    if min_available == "100%":
        return "minAvailable is 100%"
    if isinstance(min_available, int) and isinstance(expected, int) and 0 < expected <= min_available:
        return f"minAvailable {min_available} is as many as the {expected} pods it selects"
    return ""


@check(
    id="KG-DIS-003",
    title="PodDisruptionBudget allows no disruption and blocks every drain",
    area="disruption",
    severity=Severity.MEDIUM,
    needs=("PodDisruptionBudget",),
    cases=("KC-021", "KC-085"),
    why=(
        "A budget that never allows an eviction turns every node drain into a stall: upgrades and node rollovers "
        "wait on it, time out, and operators end up forcing drains or rebooting nodes all at once, which is how "
        "routine maintenance became long outages."
    ),
    fix=(
        "Allow at least one disruption: maxUnavailable: 1, or a minAvailable below the replica count (and run "
        "enough replicas for that to be safe)."
    ),
)
def pdb_blocks_drains(index: SnapshotIndex) -> Iterator[Hit]:
    for pdb in index.of_kind("PodDisruptionBudget"):
        spec, status = pdb.get("spec", {}), pdb.get("status", {})
        if (status.get("disruptionsAllowed") or 0) > 0:
            continue
        reason = _blocks_every_drain(spec, status.get("expectedPods"))
        if not reason:
            continue
        yield Hit(
            pdb,
            f"PodDisruptionBudget can never allow an eviction ({reason}): every node drain and upgrade will stall "
            "on the pods it selects.",
            {
                "spec.maxUnavailable": spec.get("maxUnavailable"),
                "spec.minAvailable": spec.get("minAvailable"),
                "status.disruptionsAllowed": status.get("disruptionsAllowed"),
                "status.expectedPods": status.get("expectedPods"),
            },
        )


@check(
    id="KG-DIS-004",
    title="PodDisruptionBudget selects no pods",
    area="disruption",
    severity=Severity.MEDIUM,
    needs=("PodDisruptionBudget", "Pod"),
    cases=("KC-079", "KC-021"),
    why=(
        "A budget whose selector matches no pod protects nothing: the workload it was written for is drained as "
        "if it had no budget at all, while the budget's presence suggests it is safe."
    ),
    fix="Make the budget's selector match the pod template labels of the workload it protects, or delete it.",
)
def pdb_selects_nothing(index: SnapshotIndex) -> Iterator[Hit]:
    for pdb in index.of_kind("PodDisruptionBudget"):
        selector = pdb.get("spec", {}).get("selector")
        if index.pods_selected(namespace_of(pdb), selector):
            continue
        yield Hit(
            pdb,
            "PodDisruptionBudget selects no pod in its namespace: the workload it was meant for has no protection.",
            {"spec.selector": selector, "pods in namespace": len(index.pods_by_namespace.get(namespace_of(pdb), []))},
        )


@check(
    id="KG-DIS-005",
    title="HorizontalPodAutoscaler may scale down to one replica",
    area="disruption",
    severity=Severity.MEDIUM,
    needs=("HorizontalPodAutoscaler",),
    cases=("KC-079", "KC-105"),
    why=(
        "An autoscaler with minReplicas: 1 shrinks the workload to a single pod whenever load is low, which is "
        "exactly when maintenance runs: one drain then takes the service offline."
    ),
    fix="Set minReplicas to 2 or more, and protect the pods with a PodDisruptionBudget.",
)
def hpa_min_one(index: SnapshotIndex) -> Iterator[Hit]:
    for hpa in index.of_kind("HorizontalPodAutoscaler"):
        spec = hpa.get("spec", {})
        minimum = int(spec.get("minReplicas", 1))
        if minimum >= 2:
            continue
        target = spec.get("scaleTargetRef", {})
        yield Hit(
            hpa,
            f"HorizontalPodAutoscaler may scale {target.get('kind')} {target.get('name')} down to {minimum} "
            "replica: at quiet times one drain or crash takes it offline.",
            {"spec.minReplicas": spec.get("minReplicas"), "spec.scaleTargetRef": target},
        )
