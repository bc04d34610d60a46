"""Stateful data: volumes whose data is destroyed as soon as their claim goes away."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, name_of, namespace_of, sample
from audits.collect.snapshot import Obj
from audits.severity import Severity

RETENTION_EVENTS = {"whenDeleted": "when it is deleted", "whenScaled": "when it is scaled down"}


def _claims_of(index: SnapshotIndex, statefulset: Obj, template: str) -> list[Obj]:
    """The PVCs a StatefulSet made from one volumeClaimTemplate (named <template>-<set>-<ordinal>)."""
    namespace = namespace_of(statefulset)
    replicas = int(statefulset.get("spec", {}).get("replicas", 1))
    names = (f"{template}-{name_of(statefulset)}-{ordinal}" for ordinal in range(replicas))
    return [pvc for name in names if (pvc := index.get("PersistentVolumeClaim", namespace, name)) is not None]


def _storage_class(index: SnapshotIndex, claim_spec: dict[str, Any]) -> Obj | None:
    name = claim_spec.get("storageClassName")
    if name is None:
        return index.default_storage_class
    return index.get("StorageClass", "", str(name)) if name else None


@check(
    id="KG-STA-001",
    title="StatefulSet data lives on volumes that are deleted with their claim",
    area="stateful",
    severity=Severity.HIGH,
    needs=("StatefulSet", "StorageClass"),
    cases=("KC-109",),
    why=(
        "With reclaimPolicy: Delete (the default of most StorageClasses), the disk behind a volume is destroyed as "
        "soon as its claim is deleted or the controller believes it is: a mistaken cleanup, a namespace deletion "
        "or a controller bug erases the data with no way back. Users lost EBS volumes whose claims still existed "
        "this way."
    ),
    fix=(
        "Use a StorageClass with reclaimPolicy: Retain for stateful data, and patch existing volumes: kubectl patch "
        'pv <name> -p \'{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}\'. Keep backups regardless.'
    ),
)
def delete_reclaim_policy(index: SnapshotIndex) -> Iterator[Hit]:
    volumes = {name_of(pv): pv for pv in index.of_kind("PersistentVolume")}
    for sts in index.of_kind("StatefulSet"):
        for template in sts.get("spec", {}).get("volumeClaimTemplates") or []:
            claim_name = name_of(template)
            storage_class = _storage_class(index, template.get("spec", {}))
            bound = [
                volumes[volume]
                for pvc in _claims_of(index, sts, claim_name)
                if (volume := pvc.get("spec", {}).get("volumeName")) in volumes
            ]
            if bound:
                deleting = [pv for pv in bound if pv.get("spec", {}).get("persistentVolumeReclaimPolicy") == "Delete"]
                if not deleting:
                    continue
                evidence: dict[str, Any] = {
                    "volumeClaimTemplate": claim_name,
                    "PersistentVolumes with reclaimPolicy Delete": sample(name_of(pv) for pv in deleting),
                }
            elif storage_class is not None and storage_class.get("reclaimPolicy", "Delete") == "Delete":
                evidence = {"volumeClaimTemplate": claim_name}
            else:
                continue
            if storage_class is not None:
                evidence["storageClassName"] = name_of(storage_class)
                evidence["reclaimPolicy"] = storage_class.get("reclaimPolicy", "Delete")
            yield Hit(
                sts,
                f"Volumes of {claim_name!r} are deleted together with their claims (reclaimPolicy: Delete): one "
                "mistaken PVC or namespace deletion destroys the data.",
                evidence,
                detail=claim_name,
            )


@check(
    id="KG-STA-002",
    title="StatefulSet deletes its volume claims when deleted or scaled down",
    area="stateful",
    severity=Severity.MEDIUM,
    needs=("StatefulSet",),
    cases=("KC-109",),
    why=(
        "A persistentVolumeClaimRetentionPolicy of Delete removes the claims when the StatefulSet is deleted or "
        "scaled down; with the usual Delete reclaim policy the disks follow, so re-applying or scaling a manifest "
        "can erase data."
    ),
    fix="Set persistentVolumeClaimRetentionPolicy whenDeleted and whenScaled to Retain (the default) for data that "
    "matters.",
)
def claims_deleted_with_set(index: SnapshotIndex) -> Iterator[Hit]:
    for sts in index.of_kind("StatefulSet"):
        policy = sts.get("spec", {}).get("persistentVolumeClaimRetentionPolicy") or {}
        when = [moment for event, moment in RETENTION_EVENTS.items() if policy.get(event) == "Delete"]
        if not when or not sts.get("spec", {}).get("volumeClaimTemplates"):
            continue
        yield Hit(
            sts,
            f"StatefulSet deletes its PersistentVolumeClaims {' and '.join(when)}: deleting or scaling it can erase "
            "the data.",
            {"spec.persistentVolumeClaimRetentionPolicy": policy},
        )
