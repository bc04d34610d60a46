"""Findings as interval history, and the team's suppressions of them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from audits import checks
from audits.models import AuditRun, Finding


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
