"""Certificates: expiry dates the cluster can read long before they stop everything.

Expiry is measured against the time the snapshot was captured, never the clock, so
the same snapshot always gives the same findings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from audits.checks.engine import Hit, NotEvaluated, check
from audits.checks.index import SnapshotIndex, certificate_not_after, condition_status, parse_time
from audits.severity import Severity

CERTIFICATE_WARNING = dt.timedelta(days=14)
CA_BUNDLE_WARNING = dt.timedelta(days=30)


def _captured_at(index: SnapshotIndex) -> dt.datetime:
    if index.captured_at is None:
        raise NotEvaluated("the snapshot records no capture time to compare expiry dates with")
    return index.captured_at


def _days(delta: dt.timedelta) -> str:
    days = delta.days
    return f"expired {-days} day(s) before the snapshot" if delta.total_seconds() < 0 else f"expires in {days} day(s)"


@check(
    id="KG-CRT-001",
    title="cert-manager Certificate expires soon or its renewal is overdue",
    area="certificates",
    severity=Severity.HIGH,
    needs=("Certificate",),
    cases=("KC-077", "KC-102"),
    why=(
        "A certificate that is not renewed in time breaks every client that checks it, all at once, with x509 "
        "errors. Expired cluster certificates took every service of a cluster down; a renewal that has stopped "
        "working is visible weeks before that."
    ),
    fix="Look at the Certificate's Ready condition and its CertificateRequests (kubectl describe certificate), fix "
    "the issuer, then renew (cmctl renew).",
)
def certificate_expiry(index: SnapshotIndex) -> Iterator[Hit]:
    now = _captured_at(index)
    for cert in index.of_kind("Certificate"):
        status = cert.get("status", {})
        not_after, renewal = parse_time(status.get("notAfter")), parse_time(status.get("renewalTime"))
        ready = condition_status(cert, "Ready")
        if not_after is not None and not_after - now < CERTIFICATE_WARNING:
            problem = _days(not_after - now)
        elif renewal is not None and renewal < now and ready != "True":
            problem = (
                f"renewal was due {(now - renewal).days} day(s) before the snapshot and the Certificate is not Ready"
            )
        else:
            continue
        yield Hit(
            cert,
            f"Certificate {problem}: clients of {cert.get('spec', {}).get('secretName', 'its Secret')} will fail "
            "with x509 errors.",
            {
                "status.notAfter": status.get("notAfter"),
                "status.renewalTime": status.get("renewalTime"),
                "Ready": ready,
            },
        )


@check(
    id="KG-CRT-002",
    title="Webhook or APIService CA bundle expires soon",
    area="certificates",
    severity=Severity.HIGH,
    needs=("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService"),
    cases=("KC-102", "KC-077"),
    why=(
        "The API server trusts a webhook or aggregated API only through its caBundle. When every certificate in it "
        "has expired, calls fail, and a fail-closed webhook then blocks every request it matches."
    ),
    fix="Rotate the CA and its serving certificate (cert-manager's CA injector can keep caBundle current) before "
    "the date in the evidence.",
)
def ca_bundle_expiry(index: SnapshotIndex) -> Iterator[Hit]:
    now = _captured_at(index)
    targets = [
        (config, str(hook.get("name")), (hook.get("clientConfig") or {}).get("caBundle"))
        for config, hook in index.webhooks
    ]
    targets += [(svc, "", svc.get("spec", {}).get("caBundle")) for svc in index.of_kind("APIService")]
    for obj, detail, bundle in targets:
        if not bundle:
            continue
        expiries = certificate_not_after(str(bundle))
        if not expiries:
            continue
        latest = max(expiries)
        if latest - now >= CA_BUNDLE_WARNING:
            continue
        what = f"Webhook {detail!r}'s" if detail else "APIService's"
        yield Hit(
            obj,
            f"{what} CA bundle {_days(latest - now)}: after that the API server rejects its certificate.",
            {"caBundle notAfter": latest.isoformat(), "certificates in bundle": len(expiries)},
            detail=detail,
        )
