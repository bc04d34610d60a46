from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.files.base import ContentFile

from audits import services
from audits.checks.engine import Finding as Found
from audits.models import AuditRun, Cluster, Finding, RunStatus, RunTrigger, SourceKind
from audits.severity import Severity

NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


@pytest.fixture
def cluster(db: None) -> Cluster:
    return Cluster.objects.create(
        team=Group.objects.create(name="t"), name="c", slug="c", source_kind=SourceKind.SNAPSHOT
    )


def run_on(cluster: Cluster, days_ago: int, *names: str) -> AuditRun:
    at = NOW - dt.timedelta(days=days_ago)
    run = AuditRun.objects.create(
        cluster=cluster, trigger=RunTrigger.SCHEDULE, status=RunStatus.SUCCEEDED, captured_at=at
    )
    run.snapshot_file.save(f"run-{run.pk}.json.gz", ContentFile(b"snapshot"), save=True)
    AuditRun.objects.filter(pk=run.pk).update(created_at=at)
    found = [
        Found("KG-DIS-001", Severity.HIGH, "Deployment", "ns", n, "", "one replica", {}, ("KC-079",)) for n in names
    ]
    services.findings_reconcile(run=run, findings=found, at=at)
    return run


def open_at(cluster: Cluster, moment: dt.datetime) -> list[str]:
    intervals = Finding.objects.filter(cluster=cluster, opened_at__lte=moment).exclude(closed_at__lte=moment)
    return sorted(intervals.values_list("object_name", flat=True))


def test_old_runs_and_snapshots_go_while_the_history_of_findings_stays_exact(cluster: Cluster, settings) -> None:
    settings.RETENTION_DAYS, settings.SNAPSHOT_RETENTION_DAYS = 100, 10
    ancient = run_on(cluster, 200, "api", "web")
    run_on(cluster, 150, "web")
    month_old = run_on(cluster, 30, "web", "db")
    recent = run_on(cluster, 1, "db")
    before = open_at(cluster, NOW - dt.timedelta(days=175))
    ancient_file = Path(ancient.snapshot_file.path)

    deleted, snapshots = services.history_prune(now=NOW)

    assert (deleted, snapshots) == (2, 3)
    assert list(AuditRun.objects.order_by("captured_at").values_list("pk", flat=True)) == [month_old.pk, recent.pk]
    assert not ancient_file.exists()
    month_old.refresh_from_db()
    recent.refresh_from_db()
    assert not month_old.snapshot_file and recent.snapshot_file
    assert open_at(cluster, NOW - dt.timedelta(days=175)) == before == ["api", "web"]
    assert Finding.objects.filter(cluster=cluster).count() == 3
