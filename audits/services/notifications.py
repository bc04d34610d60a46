"""Telling teams about regressions and new high or critical findings.

Deliveries are separate tasks with their own retries: a channel that is down
is logged and retried, and never fails or slows the audit that triggered it.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from audits.models import (
    AuditRun,
    ChannelKind,
    DeliveryStatus,
    Finding,
    NotificationChannel,
    NotificationDelivery,
)
from audits.severity import Severity

NOTIFY_SEVERITIES = (Severity.CRITICAL, Severity.HIGH)


@dataclass(frozen=True)
class Change:
    check_id: str
    severity: str
    object_ref: str
    message: str
    regression: bool

    @classmethod
    def of(cls, finding: Finding) -> Change:
        return cls(finding.check_id, finding.severity, finding.object_ref, finding.message, finding.is_regression)


def notifications_for_run(run: AuditRun) -> list[NotificationDelivery]:
    """Queue a delivery to each enabled channel of the team if the run brought news."""
    if not _changes(run):
        return []
    deliveries = []
    for channel in NotificationChannel.objects.filter(team_id=run.cluster.team_id, enabled=True):
        delivery, created = NotificationDelivery.objects.get_or_create(channel=channel, run=run)
        if created:
            deliveries.append(delivery)
    from audits.tasks import deliver_notification

    ids = [delivery.pk for delivery in deliveries]
    transaction.on_commit(lambda: [deliver_notification.delay(pk) for pk in ids])
    return deliveries


def _changes(run: AuditRun) -> list[Change]:
    opened = Finding.objects.filter(opened_by_run=run, ignored_by_annotation=False).order_by("check_id", "object_name")
    return [Change.of(f) for f in opened if f.is_regression or f.severity in NOTIFY_SEVERITIES]


def notification_payload(run: AuditRun) -> dict[str, Any]:
    changes = _changes(run)
    return {
        "cluster": run.cluster.name,
        "run": run.pk,
        "captured_at": run.captured_at.isoformat() if run.captured_at else None,
        "url": f"{settings.KUBEGAP_BASE_URL}{reverse('cluster', args=[run.cluster.slug])}",
        "regressions": [c.__dict__ for c in changes if c.regression],
        "new": [c.__dict__ for c in changes if not c.regression],
    }


def notification_deliver(delivery: NotificationDelivery) -> None:
    """Send one delivery; raises on failure so the task can retry it."""
    payload = notification_payload(delivery.run)
    channel = delivery.channel
    NotificationDelivery.objects.filter(pk=delivery.pk).update(attempts=delivery.attempts + 1)
    match channel.kind:
        case ChannelKind.WEBHOOK:
            _post_json(channel.target, payload)
        case ChannelKind.SLACK:
            _post_json(channel.target, {"text": slack_text(payload)})
        case ChannelKind.EMAIL:
            recipients = [address.strip() for address in channel.target.split(",") if address.strip()]
            subject, body = email_text(payload)
            send_mail(subject, body, None, recipients, fail_silently=False)
    NotificationDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.SENT, sent_at=timezone.now(), last_error=""
    )


def _post_json(url: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(  # noqa: S310 - the team configures an http(s) URL
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=settings.NOTIFY_TIMEOUT) as response:  # noqa: S310
        response.read()


def slack_escape(text: str) -> str:
    """Cluster data is attacker-controlled: stop it forming links or mentions in Slack."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_text(payload: dict[str, Any]) -> str:
    lines = [f"*kubegap* — <{payload['url']}|{slack_escape(payload['cluster'])}>, run {payload['run']}"]
    for title, key in (("Regressed", "regressions"), ("New", "new")):
        for change in payload[key]:
            lines.append(
                f"• {title} {change['severity']} `{change['check_id']}` {slack_escape(change['object_ref'])}: "
                f"{slack_escape(change['message'])}"
            )
    return "\n".join(lines)


def email_text(payload: dict[str, Any]) -> tuple[str, str]:
    counts = f"{len(payload['regressions'])} regressed, {len(payload['new'])} new"
    subject = f"[kubegap] {payload['cluster']}: {counts}"
    lines = [f"Audit run {payload['run']} of {payload['cluster']}: {counts}.", payload["url"], ""]
    for title, key in (("Regressed", "regressions"), ("New", "new")):
        for change in payload[key]:
            lines.append(
                f"- {title} {change['severity']} {change['check_id']} {change['object_ref']}: {change['message']}"
            )
    return subject.replace("\n", " "), "\n".join(lines)


def delivery_failed(delivery_id: int, error: str, *, final: bool) -> None:
    fields: dict[str, Any] = {"last_error": error[:2000]}
    if final:
        fields["status"] = DeliveryStatus.FAILED
    NotificationDelivery.objects.filter(pk=delivery_id).update(**fields)
