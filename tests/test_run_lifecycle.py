"""Claiming runs, recovering runs of dead workers, refusing a second "Run now"."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.contrib.auth.models import Group, User
from django.test import Client

from audits import services
from audits.models import AuditRun, Cluster, RunStatus, RunTrigger, SourceKind
from audits.schedule import ScheduleError

NOW = dt.datetime(2026, 11, 30, 3, 0, tzinfo=dt.UTC)


@pytest.fixture
def cluster(team: Group) -> Cluster:
    return Cluster.objects.create(team=team, name="prod", slug="prod", source_kind=SourceKind.SNAPSHOT)


def queued(cluster: Cluster, **fields: object) -> AuditRun:
    return AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.MANUAL, **{"heartbeat_at": NOW, **fields})


def test_a_queued_run_is_claimed_exactly_once(cluster: Cluster) -> None:
    run = queued(cluster)

    first = services.audit_run_claim(run.pk, now=NOW)
    second = services.audit_run_claim(run.pk, now=NOW)

    assert first is not None and second is None
    assert (first.status, first.attempts) == (RunStatus.RUNNING, 1)


def test_a_run_whose_worker_died_can_be_claimed_once_more(cluster: Cluster, settings) -> None:
    settings.RUN_STALE_AFTER = 60
    run = queued(cluster, status=RunStatus.RUNNING, attempts=1)

    assert services.audit_run_claim(run.pk, now=NOW + dt.timedelta(seconds=30)) is None
    retried = services.audit_run_claim(run.pk, now=NOW + dt.timedelta(seconds=61))
    assert retried is not None and retried.attempts == 2
    assert services.audit_run_claim(run.pk, now=NOW + dt.timedelta(seconds=200)) is None


def test_stale_runs_are_requeued_once_then_failed_with_the_reason(
    cluster: Cluster, settings, django_capture_on_commit_callbacks
) -> None:
    settings.RUN_STALE_AFTER = 60
    first_try = queued(cluster, status=RunStatus.RUNNING, attempts=1, worker="node-7:4242")
    last_try = queued(cluster, status=RunStatus.RUNNING, attempts=2, worker="node-7:4242")
    healthy = queued(cluster, status=RunStatus.RUNNING, attempts=1, heartbeat_at=NOW + dt.timedelta(seconds=50))

    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert services.runs_recover_stale(now=NOW + dt.timedelta(seconds=70)) == (1, 1)

    for run in (first_try, last_try, healthy):
        run.refresh_from_db()
    assert first_try.status == RunStatus.QUEUED and len(sent) == 1
    assert last_try.status == RunStatus.FAILED
    assert "worker running this audit (node-7:4242) stopped responding" in last_try.error
    assert healthy.status == RunStatus.RUNNING


def test_run_now_is_refused_while_a_run_is_active(
    cluster: Cluster, owner: User, client: Client, django_capture_on_commit_callbacks
) -> None:
    queued(cluster, status=RunStatus.RUNNING)
    client.force_login(owner)

    with django_capture_on_commit_callbacks(execute=False):
        page = client.post("/clusters/prod/run/", follow=True).content.decode()

    assert "Not started: an audit of prod is already running" in page
    assert AuditRun.objects.filter(cluster=cluster).count() == 1


def test_a_schedule_change_moves_the_next_slot(cluster: Cluster) -> None:
    with time_machine.travel(NOW):
        services.cluster_schedule_update(
            cluster=cluster, cron="30 4 * * 1-5", timezone_name="Europe/Berlin", enabled=True
        )

    cluster.refresh_from_db()
    assert cluster.next_audit_at == dt.datetime(2026, 11, 30, 3, 30, tzinfo=dt.UTC)


def test_a_wrong_cron_expression_changes_nothing(cluster: Cluster) -> None:
    before = (cluster.schedule_cron, cluster.next_audit_at)

    with pytest.raises(ScheduleError, match="not a cron expression of five fields"):
        services.cluster_schedule_update(cluster=cluster, cron="0 2 * *", timezone_name="UTC", enabled=True)

    cluster.refresh_from_db()
    assert (cluster.schedule_cron, cluster.next_audit_at) == before


def test_an_operator_edits_the_schedule_and_a_wrong_cron_is_explained(
    cluster: Cluster, owner: User, client: Client
) -> None:
    client.force_login(owner)

    bad = client.post("/clusters/prod/schedule/", {"schedule_cron": "0 2 * *", "schedule_timezone": "UTC"})
    good = client.post(
        "/clusters/prod/schedule/",
        {"schedule_cron": "15 3 * * *", "schedule_timezone": "Asia/Tokyo", "schedule_enabled": "on"},
    )

    assert bad.status_code == 400
    assert "is not a cron expression of five fields" in bad.content.decode()
    assert good.status_code == 302
    cluster.refresh_from_db()
    assert (cluster.schedule_cron, cluster.schedule_timezone, cluster.schedule_enabled) == (
        "15 3 * * *",
        "Asia/Tokyo",
        True,
    )


def test_a_viewer_may_neither_edit_the_schedule_nor_start_a_run(
    cluster: Cluster, teammate: User, client: Client
) -> None:
    client.force_login(teammate)

    assert (
        client.post("/clusters/prod/schedule/", {"schedule_cron": "* * * * *", "schedule_timezone": "UTC"}).status_code
        == 403
    )
    assert client.post("/clusters/prod/run/").status_code == 403
    assert "Save schedule" not in client.get("/clusters/prod/").content.decode()
