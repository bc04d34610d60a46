"""Writes: registering clusters, running audits, reconciling findings.

Views, commands and tasks call these; nothing else writes audit state.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from audits import checks
from audits.collect.files import snapshot_dump, snapshot_load
from audits.collect.kubeconfig import (
    KubeconfigError,
    kubeconfig_context,
    kubeconfig_encrypt,
    kubeconfig_parse,
)
from audits.collect.live import CollectError
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.collect.sources import snapshot_for_run
from audits.models import ACTIVE_STATUSES, AuditRun, Cluster, Finding, RunStatus, RunTrigger, SourceKind, Suppression
from audits.schedule import ScheduleError, next_slot, validate_schedule
from audits.severity import score_from_checks

logger = logging.getLogger(__name__)


class AuditError(Exception):
    """A problem a user can fix, reported as-is on the run."""


USER_ERRORS = (AuditError, SnapshotError, ScheduleError, KubeconfigError, CollectError)


def cluster_register_snapshot(
    *,
    team: Group,
    name: str,
    snapshot_path: Path,
    description: str = "",
    schedule_cron: str | None = None,
    schedule_timezone: str = "UTC",
) -> Cluster:
    """Register a cluster whose data is a snapshot file, validating the file first.

    The file is parsed completely before anything is stored, so a bad file
    changes nothing.
    """
    cron = schedule_cron or settings.DEFAULT_SCHEDULE_CRON
    validate_schedule(cron, schedule_timezone)
    snapshot_load(snapshot_path, max_bytes=settings.SNAPSHOT_MAX_BYTES)
    cluster = Cluster(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.SNAPSHOT,
        schedule_cron=cron,
        schedule_timezone=schedule_timezone,
        next_audit_at=next_slot(cron, schedule_timezone, timezone.now()),
    )
    with snapshot_path.open("rb") as fh:
        cluster.source_file.save(f"{cluster.slug}{''.join(snapshot_path.suffixes)}", File(fh), save=False)
    cluster.save()
    return cluster


def cluster_register_kubeconfig(
    *,
    team: Group,
    name: str,
    kubeconfig_text: str,
    context: str,
    description: str = "",
    schedule_cron: str | None = None,
    schedule_timezone: str = "UTC",
) -> Cluster:
    """Register a live cluster read through one context of a kubeconfig, stored encrypted.

    Only that context, its cluster and its user are kept; the rest of the file
    (other clusters' credentials) is never stored.
    """
    cron = schedule_cron or settings.DEFAULT_SCHEDULE_CRON
    validate_schedule(cron, schedule_timezone)
    reduced = kubeconfig_context(kubeconfig_parse(kubeconfig_text), context)
    return Cluster.objects.create(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.KUBECONFIG,
        kubeconfig_encrypted=kubeconfig_encrypt(reduced),
        kube_context=context,
        schedule_cron=cron,
        schedule_timezone=schedule_timezone,
        next_audit_at=next_slot(cron, schedule_timezone, timezone.now()),
    )


def cluster_register_in_cluster(*, team: Group, name: str, description: str = "") -> Cluster:
    """Register the cluster kubegap-web itself runs in, read with its own service account."""
    cron = settings.DEFAULT_SCHEDULE_CRON
    return Cluster.objects.create(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.IN_CLUSTER,
        schedule_cron=cron,
        next_audit_at=next_slot(cron, "UTC", timezone.now()),
    )


def _unique_slug(name: str) -> str:
    base = slugify(name)[:90] or "cluster"
    slug, n = base, 1
    while Cluster.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def audit_run_enqueue(
    *,
    cluster: Cluster,
    trigger: RunTrigger = RunTrigger.MANUAL,
    requested_by: User | None = None,
    scheduled_for: dt.datetime | None = None,
) -> AuditRun:
    """Create a queued run and hand it to a worker once the transaction commits."""
    from audits.tasks import run_audit

    run = AuditRun.objects.create(
        cluster=cluster,
        trigger=trigger,
        requested_by=requested_by,
        scheduled_for=scheduled_for,
        status=RunStatus.QUEUED,
    )
    transaction.on_commit(lambda: run_audit.delay(run.pk))
    return run


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
        run = AuditRun(cluster=cluster, trigger=RunTrigger.IMPORT, captured_at=captured_at)
        with path.open("rb") as fh:
            run.snapshot_file.save(
                f"{cluster.slug}-{captured_at:%Y%m%dT%H%M%S}{''.join(path.suffixes)}", File(fh), save=False
            )
        run.save()
        runs.append(run)
    ids = [run.pk for run in runs]
    transaction.on_commit(lambda: chain(*(run_audit.si(pk) for pk in ids)).delay())
    return runs


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


@dataclass(frozen=True)
class ReconcileResult:
    new: int
    resolved: int
    regressed: int


def audit_run_execute(run_id: int) -> AuditRun:
    """The runner: every audit goes through here, and every failure is recorded on the run."""
    run = AuditRun.objects.select_related("cluster").get(pk=run_id)
    if run.status not in ACTIVE_STATUSES:
        logger.info("run %s is already %s; nothing to do", run.pk, run.status)
        return run
    _run_update(run, status=RunStatus.RUNNING, started_at=timezone.now(), progress={"phase": "collecting"})
    try:
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
        live_suppressed = set(
            Suppression.objects.filter(cluster=run.cluster, revoked_at__isnull=True)
            .exclude(expires_at__lte=captured_at)
            .values_list("fingerprint", flat=True)
        )
        counted = [f for f in evaluation.findings if not f.ignored and f.fingerprint not in live_suppressed]
        by_check = Counter(f.check_id for f in counted)
        _run_update(
            run,
            status=RunStatus.PARTIAL if snapshot.not_collected else RunStatus.SUCCEEDED,
            finished_at=timezone.now(),
            progress={"phase": "done", "objects": snapshot.count()},
            collection_stats=snapshot.stats,
            server_version=snapshot.server_version,
            not_collected=snapshot.not_collected,
            not_evaluated=evaluation.not_evaluated,
            open_by_severity=dict(Counter(str(f.severity) for f in counted)),
            open_by_check=dict(by_check),
            findings_open=len(counted),
            score=score_from_checks({f.check_id: f.severity for f in counted}),
            new_count=result.new,
            resolved_count=result.resolved,
            regressed_count=result.regressed,
        )


def findings_reconcile(*, run: AuditRun, findings: list[checks.Finding], at: dt.datetime) -> ReconcileResult:
    """Turn this run's findings into interval history, in bulk.

    1. Open intervals whose fingerprint is seen again are extended to this run
       (and take the newest message and evidence).
    2. Open intervals whose fingerprint is gone are closed by this run.
    3. Fingerprints with no open interval open one; if the fingerprint was
       closed before, the new interval is a regression.
    """
    current = {f.fingerprint: f for f in findings}
    open_rows = {
        row.fingerprint: row
        for row in Finding.objects.filter(cluster=run.cluster, closed_at__isnull=True).only(
            "id", "fingerprint", "message", "evidence", "severity", "ignored_by_annotation", "ignore_reason"
        )
    }

    gone = [row.pk for fp, row in open_rows.items() if fp not in current]
    Finding.objects.filter(pk__in=gone).update(closed_at=at, closed_by_run=run)

    changed: list[Finding] = []
    for fp, row in open_rows.items():
        found = current.get(fp)
        if found is None:
            continue
        row.last_seen_at, row.last_seen_run = at, run
        row.message, row.evidence, row.severity = found.message, found.evidence, found.severity
        row.ignored_by_annotation, row.ignore_reason = found.ignored, found.ignore_reason
        changed.append(row)
    Finding.objects.bulk_update(
        changed,
        ["last_seen_at", "last_seen_run", "message", "evidence", "severity", "ignored_by_annotation", "ignore_reason"],
        batch_size=1000,
    )

    new_fps = [fp for fp in current if fp not in open_rows]
    seen_before = (
        set(
            Finding.objects.filter(cluster=run.cluster, fingerprint__in=new_fps, closed_at__isnull=False)
            .values_list("fingerprint", flat=True)
            .distinct()
        )
        if new_fps
        else set()
    )
    Finding.objects.bulk_create(
        [
            Finding(
                cluster=run.cluster,
                fingerprint=fp,
                check_id=f.check_id,
                severity=f.severity,
                object_kind=f.kind,
                object_namespace=f.namespace,
                object_name=f.name,
                detail=f.detail,
                message=f.message,
                evidence=f.evidence,
                ignored_by_annotation=f.ignored,
                ignore_reason=f.ignore_reason,
                opened_at=at,
                opened_by_run=run,
                last_seen_at=at,
                last_seen_run=run,
                is_regression=fp in seen_before,
            )
            for fp in new_fps
            for f in (current[fp],)
        ],
        batch_size=1000,
    )
    return ReconcileResult(new=len(new_fps), resolved=len(gone), regressed=len(seen_before))


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
