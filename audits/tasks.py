"""Celery tasks: load by id, call a service. Retries and time limits live here."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from audits import services


@shared_task(
    acks_late=True,
    soft_time_limit=settings.AUDIT_SOFT_TIME_LIMIT,
    time_limit=settings.AUDIT_HARD_TIME_LIMIT,
)
def run_audit(run_id: int) -> None:
    services.audit_run_execute(run_id)


@shared_task(ignore_result=True)
def dispatch_due_audits() -> int:
    return len(services.dispatch_due_audits())
