"""Celery tasks: load by id, call a service. Retries and time limits live here."""

from __future__ import annotations

import logging
import smtplib

from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from audits import services
from audits.models import NotificationDelivery
from audits.services import notifications

logger = logging.getLogger(__name__)

# The database being briefly unreachable is worth waiting for: the run is
# claimed only once the database answers, so a retry never runs it twice.
DATABASE_ERRORS = (OperationalError, InterfaceError)


@shared_task(
    acks_late=True,
    soft_time_limit=settings.AUDIT_SOFT_TIME_LIMIT,
    time_limit=settings.AUDIT_HARD_TIME_LIMIT,
    autoretry_for=DATABASE_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=8,
)
def run_audit(run_id: int) -> None:
    services.audit_run_execute(run_id)


@shared_task(autoretry_for=DATABASE_ERRORS, retry_backoff=2, max_retries=3)
def dispatch_due_audits() -> int:
    """Every minute: recover runs of dead workers, then start the due slots."""
    requeued, failed = services.runs_recover_stale()
    if requeued or failed:
        logger.warning("recovered stale runs: %s requeued, %s failed", requeued, failed)
    return len(services.dispatch_due_audits())


@shared_task(bind=True, max_retries=settings.NOTIFY_MAX_RETRIES)
def deliver_notification(self: Task, delivery_id: int) -> None:
    """Send one notification; retried with backoff, logged, never failing an audit."""
    delivery = NotificationDelivery.objects.select_related("channel", "run__cluster").get(pk=delivery_id)
    try:
        notifications.notification_deliver(delivery)
    except (OSError, smtplib.SMTPException) as exc:
        final = self.request.retries >= (self.max_retries or 0)
        logger.warning(
            "notification %s to %s failed (attempt %s): %s", delivery_id, delivery.channel, delivery.attempts + 1, exc
        )
        notifications.delivery_failed(delivery_id, f"{type(exc).__name__}: {exc}", final=final)
        if not final:
            delay = min(600, settings.NOTIFY_RETRY_BASE * 2**self.request.retries)
            raise self.retry(exc=exc, countdown=delay) from None


@shared_task
def prune_history() -> None:
    runs, snapshots = services.history_prune()
    logger.info("retention: deleted %s runs and %s stored snapshots", runs, snapshots)
