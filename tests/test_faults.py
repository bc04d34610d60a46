"""Scheduled audits under faults, with real Redis, worker and beat processes.

These processes use their own Redis database, so nothing else in the session
consumes their tasks; runs are created by the beat's dispatcher, as in
production. Each test reports the runs per slot it observed.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.utils import timezone

from audits import services
from audits.models import AuditRun, Cluster, Finding, RunStatus
from tests.conftest import CeleryProcess, LiveCluster, spawn, wait_until
from tests.services import servers

pytestmark = [pytest.mark.worker, pytest.mark.faults, pytest.mark.django_db(transaction=True)]

SLOW_AUDIT = {"COLLECT_PAGE_SIZE": "2", "COLLECT_CONCURRENCY": "1"}


def live_cluster_due(live: LiveCluster, name: str, cron: str = "0 2 * * *") -> Cluster:
    team, _ = Group.objects.get_or_create(name="platform")
    cluster = services.cluster_register_kubeconfig(
        team=team, name=name, kubeconfig_text=live.readonly_kubeconfig_text, context="readonly", schedule_cron=cron
    )
    Cluster.objects.filter(pk=cluster.pk).update(next_audit_at=timezone.now() - dt.timedelta(seconds=1))
    return cluster


def runs_per_slot(cluster: Cluster) -> Counter[dt.datetime | None]:
    return Counter(AuditRun.objects.filter(cluster=cluster).values_list("scheduled_for", flat=True))


def assert_no_duplicate_open_findings(cluster: Cluster) -> None:
    fingerprints = Finding.objects.filter(cluster=cluster, closed_at__isnull=True).values_list("fingerprint", flat=True)
    assert len(fingerprints) == len(set(fingerprints))


def test_a_worker_killed_mid_audit_leaves_one_run_that_is_retried_not_stuck(
    live_cluster: LiveCluster, tmp_path: Path, isolated_env: dict[str, str], processes: list[CeleryProcess]
) -> None:
    env = {**isolated_env, **SLOW_AUDIT}
    doomed = spawn("worker", tmp_path, **env)
    processes += [doomed, spawn("beat", tmp_path, **env)]
    cluster = live_cluster_due(live_cluster, "killed")

    def collecting() -> AuditRun | None:
        run = AuditRun.objects.filter(cluster=cluster, status=RunStatus.RUNNING).first()
        return run if run and run.progress.get("kinds_done", 0) >= 1 else None

    wait_until(collecting, 60, "the audit to be collecting")
    doomed.kill()
    processes.append(spawn("worker", tmp_path, **env))
    run = wait_until(
        lambda: AuditRun.objects.filter(cluster=cluster, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]).first(),
        180,
        "the run to finish after the kill",
    )

    assert isinstance(run, AuditRun)
    print(f"kill -9: runs per slot {dict(runs_per_slot(cluster))}; attempts {run.attempts}; status {run.status}")
    assert list(runs_per_slot(cluster).values()) == [1]
    assert run.attempts == 2
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.collection_stats["Pod"]["objects"] == live_cluster.seeded["Pod"]
    assert_no_duplicate_open_findings(cluster)


def test_two_schedulers_for_three_minutes_start_exactly_one_run_per_slot(
    tmp_path: Path, isolated_env: dict[str, str], processes: list[CeleryProcess], snapshot_file: Path
) -> None:
    processes.append(spawn("worker", tmp_path, **isolated_env))
    beats = [spawn("beat", tmp_path, **isolated_env), spawn("beat", tmp_path, **isolated_env)]
    processes += beats
    team = Group.objects.create(name="platform")
    cluster = services.cluster_register_snapshot(
        team=team, name="every-minute", snapshot_path=snapshot_file, schedule_cron="* * * * *"
    )
    started = timezone.now()

    time.sleep(180)
    for beat in beats:
        beat.stop()
    wait_until(
        lambda: not AuditRun.objects.filter(cluster=cluster, status__in=["queued", "running"]).exists(), 60, "runs"
    )

    per_slot = runs_per_slot(cluster)
    print(f"two beats, 180 s from {started:%H:%M:%S}: runs per slot {[(f'{s:%H:%M}', n) for s, n in per_slot.items()]}")
    assert len(per_slot) >= 2
    assert set(per_slot.values()) == {1}
    assert all(slot is not None and slot.second == 0 for slot in per_slot)
    assert set(AuditRun.objects.filter(cluster=cluster).values_list("status", flat=True)) == {RunStatus.SUCCEEDED}
    for beat in beats:
        assert beat.log.read_text().count("Sending due task dispatch-due-audits") >= 30


def test_a_redis_restart_during_a_run_loses_nothing_and_the_schedule_goes_on(
    live_cluster: LiveCluster, tmp_path: Path, isolated_env: dict[str, str], processes: list[CeleryProcess]
) -> None:
    env = {**isolated_env, **SLOW_AUDIT}
    processes += [spawn("worker", tmp_path, **env), spawn("beat", tmp_path, **env)]
    cluster = live_cluster_due(live_cluster, "redis-restart", cron="* * * * *")
    first = wait_until(lambda: AuditRun.objects.filter(cluster=cluster, status=RunStatus.RUNNING).first(), 60, "a run")
    assert isinstance(first, AuditRun)

    broker = servers()["redis"]
    broker.stop()
    time.sleep(2)
    broker.start_again()

    first = wait_until(
        lambda: AuditRun.objects.filter(pk=first.pk, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]).first(),
        120,
        "the interrupted run to finish",
    )
    later = wait_until(
        lambda: AuditRun.objects.filter(
            cluster=cluster, scheduled_for__gt=first.scheduled_for, status=RunStatus.SUCCEEDED
        ).first(),
        150,
        "a run of a later slot",
    )
    per_slot = runs_per_slot(cluster)
    print(f"redis restart: runs per slot {[(f'{s:%H:%M}', n) for s, n in per_slot.items()]}")
    assert first.status == RunStatus.SUCCEEDED, first.error
    assert later is not None
    assert set(per_slot.values()) == {1}
    assert_no_duplicate_open_findings(cluster)


def test_the_worker_recovers_by_itself_when_the_database_comes_back(
    tmp_path: Path, isolated_env: dict[str, str], processes: list[CeleryProcess], snapshot_file: Path
) -> None:
    processes += [spawn("worker", tmp_path, **isolated_env), spawn("beat", tmp_path, **isolated_env)]
    team = Group.objects.create(name="platform")
    warmup = services.cluster_register_snapshot(team=team, name="warm-up", snapshot_path=snapshot_file)
    Cluster.objects.filter(pk=warmup.pk).update(next_audit_at=timezone.now())
    wait_until(lambda: AuditRun.objects.filter(cluster=warmup, status=RunStatus.SUCCEEDED).exists(), 60, "warm-up run")
    cluster = services.cluster_register_snapshot(team=team, name="after-outage", snapshot_path=snapshot_file)
    connection.close()

    database = servers()["postgres"]
    database.stop()
    time.sleep(8)  # the beat fires several times into a dead database meanwhile
    database.start_again()
    Cluster.objects.filter(pk=cluster.pk).update(next_audit_at=timezone.now())

    run = wait_until(lambda: AuditRun.objects.filter(cluster=cluster, status=RunStatus.SUCCEEDED).first(), 120, "a run")
    print(f"database outage: runs per slot {dict(runs_per_slot(cluster))}")
    assert list(runs_per_slot(cluster).values()) == [1]
    assert isinstance(run, AuditRun) and run.findings_open > 0
