"""Writes: registering clusters, running audits, reconciling findings.

Views, commands and tasks call these; nothing else writes audit state.
"""

from __future__ import annotations

from audits.services.clusters import (
    cluster_register_in_cluster,
    cluster_register_kubeconfig,
    cluster_register_snapshot,
    cluster_schedule_update,
)
from audits.services.findings import (
    ReconcileResult,
    findings_reconcile,
    run_aggregates,
    suppression_create,
    suppression_revoke,
)
from audits.services.runs import (
    USER_ERRORS,
    AuditError,
    audit_run_add_artifact,
    audit_run_claim,
    audit_run_enqueue,
    audit_run_execute,
    audit_run_request,
    audit_runs_import,
    dispatch_due_audits,
    history_prune,
    runs_recover_stale,
)

__all__ = [
    "USER_ERRORS",
    "AuditError",
    "ReconcileResult",
    "audit_run_add_artifact",
    "audit_run_claim",
    "audit_run_enqueue",
    "audit_run_execute",
    "audit_run_request",
    "audit_runs_import",
    "cluster_register_in_cluster",
    "cluster_register_kubeconfig",
    "cluster_register_snapshot",
    "cluster_schedule_update",
    "dispatch_due_audits",
    "findings_reconcile",
    "history_prune",
    "run_aggregates",
    "runs_recover_stale",
    "suppression_create",
    "suppression_revoke",
]
