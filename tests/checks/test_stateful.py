"""KG-STA: StatefulSet data on volumes that are deleted with their claims."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

DB = [b.container("postgres", "postgres:16.4")]


def database(storage_class: str | None, **kw: object) -> b.Obj:
    return b.workload(
        "StatefulSet",
        "db",
        "shop",
        replicas=2,
        containers=DB,
        volume_claim_templates=[b.claim_template("data", storage_class)],
        **kw,  # type: ignore[arg-type]
    )


def test_volumes_on_a_delete_storage_class_are_found() -> None:
    [finding] = found("KG-STA-001", database("gp3"), b.storage_class("gp3", reclaim_policy="Delete"))

    assert (finding.kind, finding.name, finding.detail) == ("StatefulSet", "db", "data")
    assert "Volumes of 'data' are deleted together with their claims" in finding.message
    assert finding.evidence == {"volumeClaimTemplate": "data", "storageClassName": "gp3", "reclaimPolicy": "Delete"}


def test_the_default_storage_class_counts_when_none_is_named() -> None:
    [finding] = found("KG-STA-001", database(None), b.storage_class("standard", reclaim_policy=None, default=True))

    assert finding.evidence["storageClassName"] == "standard"


def test_retain_classes_or_retained_volumes_pass() -> None:
    retained_volumes = [
        obj
        for i in range(2)
        for obj in b.volume_for(f"data-db-{i}", "shop", storage_class="gp3", reclaim_policy="Retain")
    ]

    assert found("KG-STA-001", database("safe"), b.storage_class("safe", reclaim_policy="Retain")) == []
    assert found("KG-STA-001", database("gp3"), b.storage_class("gp3"), *retained_volumes) == []


def test_bound_volumes_with_delete_are_named() -> None:
    volumes = [
        obj
        for i in range(2)
        for obj in b.volume_for(f"data-db-{i}", "shop", storage_class="gp3", reclaim_policy="Delete")
    ]

    [finding] = found("KG-STA-001", database("gp3"), b.storage_class("gp3", reclaim_policy="Retain"), *volumes)

    assert len(finding.evidence["PersistentVolumes with reclaimPolicy Delete"]) == 2


def test_a_statefulset_that_deletes_its_claims_on_scale_down_is_found() -> None:
    [finding] = found("KG-STA-002", database("gp3", claim_retention={"whenDeleted": "Retain", "whenScaled": "Delete"}))

    assert "deletes its PersistentVolumeClaims when it is scaled down" in finding.message
    assert found("KG-STA-002", database("gp3", claim_retention={"whenDeleted": "Retain", "whenScaled": "Retain"})) == []
