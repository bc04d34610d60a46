"""One representation of a finding interval for every machine-readable output
(JSON exports, CSV exports and the API), so they never disagree."""

from __future__ import annotations

import json
from typing import Any

from audits.history import iso
from audits.models import AuditRun, Finding

# CSV columns after the leading "record" and "at" ones; JSON uses the same names.
CSV_FINDING_COLUMNS = (
    "cluster",
    "check_id",
    "check_title",
    "severity",
    "object_kind",
    "object_namespace",
    "object_name",
    "detail",
    "message",
    "opened_at",
    "closed_at",
    "is_regression",
    "ignored_by_annotation",
    "ignore_reason",
    "cases",
    "evidence",
    "fingerprint",
    "finding_id",
)


def finding_record(finding: Finding) -> dict[str, Any]:
    """A finding interval as JSON: what, where, when, and the check's cited cases."""
    definition = finding.definition
    return {
        "id": finding.pk,
        "cluster": finding.cluster.slug,
        "fingerprint": finding.fingerprint,
        "check_id": finding.check_id,
        "check_title": definition.title if definition else "",
        "severity": finding.severity,
        "object": {
            "kind": finding.object_kind,
            "namespace": finding.object_namespace,
            "name": finding.object_name,
        },
        "detail": finding.detail,
        "message": finding.message,
        "evidence": finding.evidence,
        "ignored_by_annotation": finding.ignored_by_annotation,
        "ignore_reason": finding.ignore_reason,
        "status": "open" if finding.is_open else "closed",
        "opened_at": iso(finding.opened_at),
        "closed_at": iso(finding.closed_at) or None,
        "last_seen_at": iso(finding.last_seen_at),
        "opened_by_run": finding.opened_by_run_id,
        "closed_by_run": finding.closed_by_run_id,
        "last_seen_run": finding.last_seen_run_id,
        "is_regression": finding.is_regression,
        "cases": list(definition.cases) if definition else [],
    }


def finding_csv_values(finding: Finding) -> list[object]:
    """The CSV_FINDING_COLUMNS of a finding, before CSV escaping."""
    definition = finding.definition
    return [
        finding.cluster.slug,
        finding.check_id,
        definition.title if definition else "",
        finding.severity,
        finding.object_kind,
        finding.object_namespace,
        finding.object_name,
        finding.detail,
        finding.message,
        iso(finding.opened_at),
        iso(finding.closed_at),
        "true" if finding.is_regression else "false",
        "true" if finding.ignored_by_annotation else "false",
        finding.ignore_reason,
        " ".join(definition.cases) if definition else "",
        json.dumps(finding.evidence, sort_keys=True),
        finding.fingerprint,
        finding.pk,
    ]


def run_record(run: AuditRun) -> dict[str, Any]:
    """An audit run with its aggregates, as JSON."""
    return {
        "id": run.pk,
        "cluster": run.cluster.slug,
        "trigger": run.trigger,
        "status": run.status,
        "scheduled_for": iso(run.scheduled_for) or None,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at) or None,
        "finished_at": iso(run.finished_at) or None,
        "captured_at": iso(run.captured_at) or None,
        "duration_seconds": run.duration_seconds,
        "error": run.error,
        "server_version": run.server_version,
        "findings_open": run.findings_open,
        "open_by_severity": run.open_by_severity,
        "open_by_check": run.open_by_check,
        "score": run.score,
        "new_count": run.new_count,
        "resolved_count": run.resolved_count,
        "regressed_count": run.regressed_count,
        "not_collected": run.not_collected,
        "not_evaluated": run.not_evaluated,
    }
