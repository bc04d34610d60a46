"""KG-CRT: certificate and CA bundle expiry, measured against the snapshot's capture time."""

from __future__ import annotations

import datetime as dt

from audits.demo import builders as b
from tests.checks.helpers import CAPTURED_AT, found

DAY = dt.timedelta(days=1)


def test_a_certificate_expiring_within_two_weeks_is_found() -> None:
    soon = b.certificate("shop", "shop", not_after=CAPTURED_AT + 10 * DAY, renewal_time=CAPTURED_AT - 20 * DAY)

    [finding] = found("KG-CRT-001", soon)

    assert (finding.kind, finding.name) == ("Certificate", "shop")
    assert "Certificate expires in 10 day(s): clients of shop-tls will fail" in finding.message
    assert finding.evidence["status.notAfter"] == "2026-03-11T12:00:00Z"


def test_an_overdue_renewal_is_found_before_expiry_and_a_healthy_one_passes() -> None:
    stuck = b.certificate(
        "shop", "shop", not_after=CAPTURED_AT + 25 * DAY, renewal_time=CAPTURED_AT - 5 * DAY, ready=False
    )
    healthy = b.certificate("shop", "shop", not_after=CAPTURED_AT + 60 * DAY, renewal_time=CAPTURED_AT + 30 * DAY)

    [finding] = found("KG-CRT-001", stuck)

    assert "renewal was due 5 day(s) before the snapshot and the Certificate is not Ready" in finding.message
    assert found("KG-CRT-001", healthy) == []


def test_a_webhook_ca_bundle_expiring_soon_is_found() -> None:
    hook = b.webhook("v.policy.example", service=("policy", "webhook"), ca_bundle=b.ca_bundle(CAPTURED_AT + 5 * DAY))

    [finding] = found("KG-CRT-002", b.webhook_configuration("policy", [hook]))

    assert (finding.kind, finding.name, finding.detail) == (
        "ValidatingWebhookConfiguration",
        "policy",
        "v.policy.example",
    )
    assert "Webhook 'v.policy.example''s CA bundle expires in 5 day(s)" in finding.message


def test_an_api_service_ca_bundle_that_expired_is_found_and_a_fresh_one_passes() -> None:
    expired = b.api_service("v1beta1.metrics.k8s.io", ("kube-system", "metrics"), ca=b.ca_bundle(CAPTURED_AT - 3 * DAY))
    fresh = b.api_service("v1beta1.metrics.k8s.io", ("kube-system", "metrics"), ca=b.ca_bundle(CAPTURED_AT + 365 * DAY))

    [finding] = found("KG-CRT-002", expired)

    assert "APIService's CA bundle expired 3 day(s) before the snapshot" in finding.message
    assert found("KG-CRT-002", fresh) == []
