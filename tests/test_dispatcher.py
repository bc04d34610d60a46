from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group

from audits import services
from audits.models import AuditRun, Cluster, RunTrigger, SourceKind
from audits.schedule import ScheduleError, next_slot, validate_schedule

NOW = dt.datetime(2026, 11, 30, 2, 0, 30, tzinfo=dt.UTC)


@pytest.fixture
def due_cluster(db: None) -> Cluster:
    team = Group.objects.create(name="shop")
    return Cluster.objects.create(
        team=team,
        name="prod",
        slug="prod",
        source_kind=SourceKind.SNAPSHOT,
        schedule_cron="0 2 * * *",
        next_audit_at=NOW - dt.timedelta(seconds=30),
    )


def test_it_claims_a_due_slot_once_and_moves_to_the_next(
    due_cluster: Cluster, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        first = services.dispatch_due_audits(now=NOW)
        second = services.dispatch_due_audits(now=NOW)

    assert [(r.trigger, r.scheduled_for) for r in first] == [(RunTrigger.SCHEDULE, NOW - dt.timedelta(seconds=30))]
    assert second == []
    due_cluster.refresh_from_db()
    assert due_cluster.next_audit_at == dt.datetime(2026, 12, 1, 2, 0, tzinfo=dt.UTC)


def test_a_paused_cluster_is_not_dispatched(due_cluster: Cluster, django_capture_on_commit_callbacks) -> None:
    Cluster.objects.filter(pk=due_cluster.pk).update(schedule_enabled=False)

    with django_capture_on_commit_callbacks(execute=False):
        assert services.dispatch_due_audits(now=NOW) == []
    assert AuditRun.objects.count() == 0


def test_the_schedule_follows_the_cluster_timezone() -> None:
    after = dt.datetime(2026, 7, 1, 12, 0, tzinfo=dt.UTC)

    assert next_slot("0 2 * * *", "Europe/Berlin", after) == dt.datetime(2026, 7, 2, 0, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("cron", "tz", "message"),
    [
        ("0 25 * * *", "UTC", "is not a cron expression of five fields"),
        ("every night", "UTC", "for example '0 2 * * *'"),
        ("0 2 * * *", "Mars/Olympus", "is not a known timezone"),
    ],
)
def test_a_wrong_schedule_says_what_to_fix(cron: str, tz: str, message: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        validate_schedule(cron, tz)

    assert message in str(raised.value)
