"""Findings as interval history, and the team's suppressions of them."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from audits import checks, selectors
from audits.models import AuditRun, Cluster, Finding, Suppression
from audits.severity import score_from_checks


@dataclass(frozen=True)
class ReconcileResult:
    new: int
    resolved: int
    regressed: int


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


def live_suppressions(cluster: Cluster, at: dt.datetime) -> set[str]:
    """Fingerprints a team has suppressed, unrevoked and unexpired at `at`."""
    return set(
        Suppression.objects.filter(cluster=cluster, revoked_at__isnull=True)
        .exclude(expires_at__lte=at)
        .values_list("fingerprint", flat=True)
    )


def run_aggregates(run: AuditRun, at: dt.datetime) -> dict[str, object]:
    """Open findings after `run` by severity and by check, and the score, from the
    open intervals. Ignored and suppressed findings stay visible but do not count."""
    suppressed = live_suppressions(run.cluster, at)
    rows = (
        Finding.objects.filter(cluster=run.cluster, closed_at__isnull=True, ignored_by_annotation=False)
        .values_list("fingerprint", "check_id", "severity")
        .order_by()
    )
    counted = [(check_id, severity) for fp, check_id, severity in rows if fp not in suppressed]
    return {
        "open_by_severity": dict(Counter(severity for _, severity in counted)),
        "open_by_check": dict(Counter(check_id for check_id, _ in counted)),
        "findings_open": len(counted),
        "score": score_from_checks(dict(counted)),
    }


def _refresh_latest_run(cluster: Cluster) -> None:
    """Suppressions change what counts; the latest run's aggregates follow at once."""
    latest = selectors.latest_counted_run(cluster)
    if latest is not None:
        AuditRun.objects.filter(pk=latest.pk).update(**run_aggregates(latest, timezone.now()))


def suppression_create(
    *, finding: Finding, created_by: User, reason: str, expires_at: dt.datetime | None
) -> Suppression:
    """Accept a gap for a while: it stays visible, marked suppressed, and stops counting."""
    reason = reason.strip()
    if not reason:
        raise ValueError("a suppression needs a reason, so the next person knows why the gap was accepted.")
    if expires_at is not None and expires_at <= timezone.now():
        raise ValueError("the expiry must be in the future.")
    with transaction.atomic():
        Suppression.objects.filter(
            cluster=finding.cluster, fingerprint=finding.fingerprint, revoked_at__isnull=True
        ).update(revoked_at=timezone.now(), revoked_by=created_by)
        suppression = Suppression.objects.create(
            cluster=finding.cluster,
            fingerprint=finding.fingerprint,
            check_id=finding.check_id,
            reason=reason,
            created_by=created_by,
            expires_at=expires_at,
        )
        _refresh_latest_run(finding.cluster)
    return suppression


def suppression_revoke(*, finding: Finding, revoked_by: User) -> int:
    with transaction.atomic():
        revoked = Suppression.objects.filter(
            cluster=finding.cluster, fingerprint=finding.fingerprint, revoked_at__isnull=True
        ).update(revoked_at=timezone.now(), revoked_by=revoked_by)
        _refresh_latest_run(finding.cluster)
    return revoked
