"""Findings become intervals: extended while present, closed when gone, a reopen is a regression."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group

from audits import services
from audits.checks.engine import Finding as Found
from audits.models import AuditRun, Cluster, Finding, RunTrigger, SourceKind
from audits.severity import Severity

T0 = dt.datetime(2026, 9, 1, 2, 0, tzinfo=dt.UTC)


def found(name: str) -> Found:
    return Found(
        "KG-DIS-001", Severity.HIGH, "Deployment", "shop", name, "", f"{name} has one replica", {}, ("KC-079",)
    )


@pytest.fixture
def cluster(db: None) -> Cluster:
    team = Group.objects.create(name="shop")
    return Cluster.objects.create(team=team, name="prod", slug="prod", source_kind=SourceKind.SNAPSHOT)


def reconcile(cluster: Cluster, day: int, *names: str) -> tuple[AuditRun, services.ReconcileResult]:
    at = T0 + dt.timedelta(days=day)
    run = AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.SCHEDULE, captured_at=at)
    return run, services.findings_reconcile(run=run, findings=[found(n) for n in names], at=at)


def test_a_gap_seen_again_extends_its_interval(cluster: Cluster) -> None:
    first, _ = reconcile(cluster, 0, "api")
    second, result = reconcile(cluster, 1, "api")

    [interval] = Finding.objects.filter(cluster=cluster)
    assert (interval.opened_by_run, interval.last_seen_run, interval.closed_at) == (first, second, None)
    assert (result.new, result.resolved, result.regressed) == (0, 0, 0)


def test_a_gap_gone_closes_its_interval(cluster: Cluster) -> None:
    reconcile(cluster, 0, "api", "web")
    second, result = reconcile(cluster, 1, "web")

    api = Finding.objects.get(object_name="api")
    assert api.closed_by_run == second
    assert api.closed_at == T0 + dt.timedelta(days=1)
    assert (result.new, result.resolved) == (0, 1)


def test_a_gap_that_returns_opens_a_regression_interval(cluster: Cluster) -> None:
    reconcile(cluster, 0, "api")
    reconcile(cluster, 1)
    third, result = reconcile(cluster, 2, "api")

    intervals = list(Finding.objects.filter(object_name="api").order_by("opened_at"))
    assert [(i.is_regression, i.closed_at is None) for i in intervals] == [(False, False), (True, True)]
    assert intervals[1].opened_by_run == third
    assert (result.new, result.regressed) == (1, 1)


def test_open_at_a_past_moment_is_exact(cluster: Cluster) -> None:
    reconcile(cluster, 0, "api", "web")
    reconcile(cluster, 2, "web")
    reconcile(cluster, 4, "web", "api")
    moment = T0 + dt.timedelta(days=3)

    open_then = Finding.objects.filter(cluster=cluster, opened_at__lte=moment).exclude(closed_at__lte=moment)

    assert sorted(f.object_name for f in open_then) == ["web"]
