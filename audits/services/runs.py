"""Audit runs: queued, claimed by exactly one worker, run, finished or failed.

A run is claimed with a conditional UPDATE (a lease): only a queued run, or a
running one whose heartbeat has gone stale because its worker died, can be
claimed. A redelivered or duplicated message therefore never runs an audit
twice, and a sweeper puts runs of dead workers back in the queue once before
failing them, so no run stays "running" forever.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import os
import socket
import tempfile
import threading
import traceback
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from audits import checks
from audits.collect.files import snapshot_dump, snapshot_load
from audits.collect.kubeconfig import KubeconfigError
from audits.collect.live import CollectError
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.collect.sources import snapshot_for_run
from audits.models import ACTIVE_STATUSES, AuditRun, Cluster, RunStatus, RunTrigger
from audits.schedule import ScheduleError, next_slot
from audits.services.findings import findings_reconcile, run_aggregates
from audits.services.notifications import notifications_for_run

logger = logging.getLogger(__name__)


class AuditError(Exception):
    """A problem a user can fix, reported as-is."""


# Failures with a message for the user and no traceback: bad data, bad
# configuration, an unreachable or forbidding cluster.
USER_ERRORS = (AuditError, SnapshotError, ScheduleError, KubeconfigError, CollectError)


def audit_run_enqueue(
    *,
    cluster: Cluster,
    trigger: RunTrigger = RunTrigger.MANUAL,
    requested_by: User | None = None,
    scheduled_for: dt.datetime | None = None,
) -> AuditRun:
    """Create a queued run and hand it to a worker once the transaction commits."""
    run = AuditRun.objects.create(
        cluster=cluster,
        trigger=trigger,
        requested_by=requested_by,
        scheduled_for=scheduled_for,
        status=RunStatus.QUEUED,
        heartbeat_at=timezone.now(),
    )
    _send_on_commit(run.pk)
    return run


def audit_run_request(*, cluster: Cluster, requested_by: User | None) -> AuditRun:
    """ "Run now": a manual run, refused while the cluster already has one queued or running."""
    with transaction.atomic():
        _lock_idle(cluster, then="wait for it to finish")
        return audit_run_enqueue(cluster=cluster, trigger=RunTrigger.MANUAL, requested_by=requested_by)


def _lock_idle(cluster: Cluster, *, then: str) -> None:
    """Inside a transaction: lock the cluster's row and refuse if it has a run queued or running.

    The lock keeps two requests (two clicks, an import beside "Run now") from
    both seeing no active run.
    """
    Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
    active = cluster.runs.filter(status__in=ACTIVE_STATUSES).first()
    if active is not None:
        raise AuditError(f"an audit of {cluster.name} is already {active.status} (run {active.pk}); {then}.")


def audit_runs_import(*, cluster: Cluster, snapshots: list[tuple[Path, dt.datetime]]) -> list[AuditRun]:
    """Audit snapshots of one cluster taken at known times, oldest first, in order.

    Each file is validated before anything is stored. The runs are chained so a
    worker reconciles them in capture order, which is what makes the history
    (opened, closed, regressed) true.
    """
    from celery import chain

    from audits.tasks import run_audit

    for path, _ in snapshots:
        snapshot_load(path, max_bytes=settings.SNAPSHOT_MAX_BYTES)
    runs = []
    for path, captured_at in sorted(snapshots, key=lambda item: item[1]):
        run = AuditRun(cluster=cluster, trigger=RunTrigger.IMPORT, captured_at=captured_at, heartbeat_at=timezone.now())
        with path.open("rb") as fh:
            name = f"{cluster.slug}-{captured_at:%Y%m%dT%H%M%S}{''.join(path.suffixes)}"
            run.snapshot_file.save(name, File(fh), save=False)
        run.save()
        runs.append(run)
    ids = [run.pk for run in runs]
    transaction.on_commit(lambda: chain(*(run_audit.si(pk) for pk in ids)).delay())
    return runs


def audit_run_add_artifact(
    *,
    cluster: Cluster,
    snapshot_path: Path,
    display_name: str | None = None,
    captured_at: dt.datetime | None = None,
    snapshot: Snapshot | None = None,
    requested_by: User | None = None,
) -> AuditRun:
    """Add the audit of an artifact to an existing cluster's history, at the moment it was captured.

    History is reconciled in capture order, so the artifact must be newer than
    every run of the cluster, and no run may be waiting; an older artifact is
    refused with what to do instead (register it as a cluster of its own).
    Like a registration, what is stored is kubegap-web's export of what was
    read, never the artifact itself. `snapshot` is the input already parsed.
    """
    name = display_name or snapshot_path.name
    if snapshot is None:
        snapshot = snapshot_load(
            snapshot_path, max_bytes=settings.SNAPSHOT_MAX_BYTES, display_name=display_name, captured_at=captured_at
        )
    moment = snapshot.captured_at
    if moment is None:
        raise AuditError(f"{name}: when it was captured is unknown; give the time it was captured.")
    with transaction.atomic():
        _lock_idle(cluster, then="add the artifact once it has finished")
        latest = cluster.runs.exclude(captured_at=None).order_by("-captured_at").first()
        if latest is not None and latest.captured_at is not None and moment <= latest.captured_at:
            raise AuditError(
                f"{name} was captured at {moment:%Y-%m-%d %H:%M} UTC, before the latest run of {cluster.name} "
                f"(run {latest.pk}, captured {latest.captured_at:%Y-%m-%d %H:%M} UTC). A cluster's history is "
                "reconciled in capture order, so an earlier moment cannot be added to it; register the artifact "
                "as a cluster of its own to audit that moment."
            )
        with tempfile.TemporaryDirectory() as scratch:
            export = Path(scratch) / "artifact.json.gz"
            with export.open("wb") as fh:
                snapshot_dump(snapshot, fh)
            [run] = audit_runs_import(cluster=cluster, snapshots=[(export, moment)])
        if requested_by is not None:
            run.requested_by = requested_by
            run.save(update_fields=["requested_by"])
    return run


def dispatch_due_audits(*, now: dt.datetime | None = None) -> list[AuditRun]:
    """Start one run for every cluster whose scheduled slot has come.

    1. Find enabled clusters whose next_audit_at has passed.
    2. Claim each with a conditional UPDATE moving next_audit_at to the
       following slot; if another dispatcher got there first, no row changes
       and this one moves on. The move also guards against crash loops: a
       cluster whose audit crashes is not retried before its next slot.
    3. Create the run with its (cluster, slot) key and enqueue it on commit.
    """
    now = now or timezone.now()
    started: list[AuditRun] = []
    due = Cluster.objects.filter(schedule_enabled=True, next_audit_at__lte=now).values_list(
        "pk", "next_audit_at", "schedule_cron", "schedule_timezone"
    )
    for pk, slot, cron, tz in due:
        if slot is None:  # excluded by the filter; narrows the type
            continue
        following = next_slot(cron, tz, max(slot, now))
        with transaction.atomic():
            claimed = Cluster.objects.filter(pk=pk, next_audit_at=slot).update(next_audit_at=following)
            if claimed != 1:
                continue
            if AuditRun.objects.filter(cluster_id=pk, scheduled_for=slot).exists():
                continue
            cluster = Cluster.objects.get(pk=pk)
            started.append(audit_run_enqueue(cluster=cluster, trigger=RunTrigger.SCHEDULE, scheduled_for=slot))
    return started


def audit_run_claim(run_id: int, *, now: dt.datetime | None = None) -> AuditRun | None:
    """Take the lease on a run for this worker, or None if it is not ours to run.

    Claimable: a queued run, or a running one whose heartbeat is older than
    RUN_STALE_AFTER (its worker died) and which has attempts left.
    """
    now = now or timezone.now()
    stale = now - dt.timedelta(seconds=settings.RUN_STALE_AFTER)
    claimable = Q(status=RunStatus.QUEUED) | Q(
        status=RunStatus.RUNNING, heartbeat_at__lt=stale, attempts__lt=settings.RUN_MAX_ATTEMPTS
    )
    claimed = AuditRun.objects.filter(claimable, pk=run_id).update(
        status=RunStatus.RUNNING,
        attempts=F("attempts") + 1,
        heartbeat_at=now,
        started_at=now,
        finished_at=None,
        error="",
        worker=f"{socket.gethostname()}:{os.getpid()}",
        progress={"phase": "collecting"},
    )
    if claimed != 1:
        return None
    return AuditRun.objects.select_related("cluster").get(pk=run_id)


def audit_run_execute(run_id: int) -> AuditRun | None:
    """The runner: every audit goes through here, and every failure is recorded on the run."""
    run = audit_run_claim(run_id)
    if run is None:
        logger.info("run %s is not claimable (finished, or running elsewhere); nothing to do", run_id)
        return None
    try:
        with _Heartbeat(run.pk):
            snapshot = snapshot_for_run(run, progress=lambda p: _run_update(run, progress=p))
            if not run.snapshot_file:
                _keep_snapshot(run, snapshot)
            _audit_snapshot(run, snapshot)
    except USER_ERRORS as exc:
        # Something the user can fix: say what, keep everything stored before.
        _run_fail(run, str(exc))
    except Exception as exc:
        logger.exception("run %s of %s failed", run.pk, run.cluster)
        _run_fail(run, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
        raise
    return run


def runs_recover_stale(*, now: dt.datetime | None = None) -> tuple[int, int]:
    """Find runs whose worker died and retry them once, or fail them with the reason.

    Returns (requeued, failed). Re-sending a queued run whose message may have
    been lost is safe for the same reason: the claim lets only one worker run it.
    """
    now = now or timezone.now()
    stale = now - dt.timedelta(seconds=settings.RUN_STALE_AFTER)
    requeued = failed = 0
    for run in AuditRun.objects.filter(status__in=ACTIVE_STATUSES, heartbeat_at__lt=stale).select_related("cluster"):
        seen = run.heartbeat_at
        if run.status == RunStatus.RUNNING and run.attempts >= settings.RUN_MAX_ATTEMPTS:
            message = (
                f"the worker running this audit ({run.worker or 'unknown'}) stopped responding; last heartbeat at "
                f"{seen:%Y-%m-%d %H:%M:%S} UTC, after {run.attempts} attempts"
            )
            changed = AuditRun.objects.filter(pk=run.pk, heartbeat_at=seen).update(
                status=RunStatus.FAILED, finished_at=now, error=message
            )
            failed += changed
        else:
            with transaction.atomic():
                changed = AuditRun.objects.filter(pk=run.pk, heartbeat_at=seen).update(
                    status=RunStatus.QUEUED, heartbeat_at=now
                )
                if changed:
                    _send_on_commit(run.pk)
            requeued += changed
    return requeued, failed


class _Heartbeat:
    """Renews the run's lease from a thread while the audit works, so a long
    collection or evaluation is never mistaken for a dead worker."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.interval = max(1.0, settings.RUN_STALE_AFTER / 4)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{run_id}", daemon=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                AuditRun.objects.filter(pk=self.run_id, status=RunStatus.RUNNING).update(heartbeat_at=timezone.now())
        except Exception:
            # A missed heartbeat only risks a retry; never let it break the audit.
            logger.exception("heartbeat of run %s stopped", self.run_id)
        finally:
            connection.close()


def history_prune(*, now: dt.datetime | None = None) -> tuple[int, int]:
    """Delete runs past RETENTION_DAYS and stored snapshots past SNAPSHOT_RETENTION_DAYS.

    Finding intervals are kept: their times are stored on them, so what was
    open at any moment stays exact after the runs that observed it are gone.
    Returns (runs deleted, snapshots deleted).
    """
    now = now or timezone.now()
    old_runs = AuditRun.objects.exclude(status__in=ACTIVE_STATUSES).filter(
        created_at__lt=now - dt.timedelta(days=settings.RETENTION_DAYS)
    )
    snapshots = 0
    for run in AuditRun.objects.exclude(snapshot_file="").filter(
        created_at__lt=now - dt.timedelta(days=settings.SNAPSHOT_RETENTION_DAYS)
    ):
        run.snapshot_file.delete(save=False)
        AuditRun.objects.filter(pk=run.pk).update(snapshot_file="")
        snapshots += 1
    _, deleted = old_runs.delete()
    return deleted.get(AuditRun._meta.label, 0), snapshots


def _send_on_commit(run_id: int) -> None:
    from audits.tasks import run_audit

    transaction.on_commit(lambda: run_audit.delay(run_id))


def _keep_snapshot(run: AuditRun, snapshot: Snapshot) -> None:
    """Store what was collected with the run, for download and to replay the audit exactly."""
    buffer = io.BytesIO()
    snapshot_dump(snapshot, buffer)
    run.snapshot_file.save(f"{run.cluster.slug}-run{run.pk}.json.gz", ContentFile(buffer.getvalue()), save=False)
    run.save(update_fields=["snapshot_file"])


def _audit_snapshot(run: AuditRun, snapshot: Snapshot) -> None:
    captured_at = snapshot.captured_at or run.captured_at or run.started_at or timezone.now()
    _run_update(run, captured_at=captured_at, progress={"phase": "evaluating", "objects": snapshot.count()})
    evaluation = checks.evaluate(snapshot)
    with transaction.atomic():
        result = findings_reconcile(run=run, findings=evaluation.findings, at=captured_at)
        _run_update(
            run,
            status=RunStatus.PARTIAL if snapshot.not_collected else RunStatus.SUCCEEDED,
            finished_at=timezone.now(),
            progress={"phase": "done", "objects": snapshot.count()},
            collection_stats=snapshot.stats,
            server_version=snapshot.server_version,
            not_collected=snapshot.not_collected,
            not_evaluated=evaluation.not_evaluated,
            **run_aggregates(run, captured_at),
            new_count=result.new,
            resolved_count=result.resolved,
            regressed_count=result.regressed,
        )
        notifications_for_run(run)


def _run_fail(run: AuditRun, message: str, trace: str = "") -> None:
    progress = {**run.progress, "phase": "failed"}
    if trace:
        progress["traceback"] = trace
    _run_update(run, status=RunStatus.FAILED, finished_at=timezone.now(), error=message, progress=progress)


def _run_update(run: AuditRun, **fields: object) -> None:
    """Set fields on the run, with a heartbeat, and save only those."""
    fields["heartbeat_at"] = timezone.now()
    for name, value in fields.items():
        setattr(run, name, value)
    run.save(update_fields=list(fields))
