"""A well-configured cluster: the whole catalog finds nothing and evaluates everything."""

from __future__ import annotations

from audits.checks import CATALOG, evaluate
from tests.checks.good_cluster import good_snapshot


def test_the_whole_catalog_finds_nothing_on_the_good_cluster() -> None:
    evaluation = evaluate(good_snapshot())

    assert [(f.check_id, f.kind, f.namespace, f.name, f.message) for f in evaluation.findings] == []
    assert evaluation.not_evaluated == {}


def test_the_good_cluster_is_not_trivially_empty() -> None:
    snap = good_snapshot()

    assert len(snap.objects["Pod"]) >= 30
    assert set(snap.objects) >= {kind for chk in CATALOG.values() for kind in chk.needs}


def test_removing_the_ingress_budget_is_found_by_every_check_it_affects() -> None:
    evaluation = evaluate(good_snapshot(without=("PodDisruptionBudget/ingress-nginx/ingress-nginx-controller",)))

    assert sorted((f.check_id, f.name) for f in evaluation.findings) == [
        ("KG-DIS-002", "ingress-nginx-controller"),
        ("KG-ING-003", "ingress-nginx-controller"),
        # The high-priority training pods may now preempt the unprotected controller.
        ("KG-PRI-001", "llm-pretrain"),
    ]
