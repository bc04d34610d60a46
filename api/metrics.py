"""Prometheus metrics at /metrics, in the text exposition format 0.0.4.

Numbers come from each cluster's runs (their stored aggregates), never from
counting the findings table, so a scrape costs three queries however large the
history. Guarded by the bearer token in METRICS_TOKEN; without it the endpoint
does not exist (404), so an unconfigured install exposes nothing.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse

from audits.checks import CATALOG
from audits.models import COUNTED_STATUSES, FINISHED_STATUSES, AuditRun, Cluster

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def metrics_token() -> str:
    return str(settings.METRICS_TOKEN)


def metrics(request: HttpRequest) -> HttpResponse:
    expected = metrics_token()
    if not expected:
        raise Http404("Metrics are off: set METRICS_TOKEN to enable them.")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        response = HttpResponse(
            "Unauthorized: send 'Authorization: Bearer <METRICS_TOKEN>'.\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="kubegap-metrics"'
        return response
    return HttpResponse("".join(exposition(cluster_metrics())), content_type=CONTENT_TYPE)


def escape_label_value(value: str) -> str:
    """Backslash, double quote and line feed escaped, as the format requires inside quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


Labels = tuple[tuple[str, str], ...]


@dataclass
class Family:
    """One metric: its name, help, type and samples (labels, value)."""

    name: str
    help: str
    type: str = "gauge"
    samples: list[tuple[Labels, float]] = field(default_factory=list)

    def add(self, value: float, **labels: str) -> None:
        self.samples.append((tuple(labels.items()), value))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def exposition(families: list[Family]) -> Iterator[str]:
    for family in families:
        yield f"# HELP {family.name} {escape_help(family.help)}\n"
        yield f"# TYPE {family.name} {family.type}\n"
        for labels, value in family.samples:
            rendered = ",".join(f'{key}="{escape_label_value(val)}"' for key, val in labels)
            yield f"{family.name}{{{rendered}}} {_number(value)}\n" if rendered else f"{family.name} {_number(value)}\n"


def _newest(statuses: tuple[str, ...]) -> Subquery:
    return Subquery(
        AuditRun.objects.filter(cluster=OuterRef("pk"), status__in=statuses)
        .order_by("-captured_at", "-finished_at", "-id")
        .values("pk")[:1]
    )


def cluster_metrics() -> list[Family]:
    """Every cluster's gauges from its newest finished run and its newest evaluated run.

    A failed run has no findings aggregates, so open findings and the score come
    from the newest run that evaluated the cluster (succeeded or partial), while
    the status, time and duration come from the newest finished run, failed or not.
    """
    clusters = list(
        Cluster.objects.select_related("team")
        .annotate(finished_id=_newest(FINISHED_STATUSES), evaluated_id=_newest(COUNTED_STATUSES))
        .order_by("slug")
    )
    wanted = {pk for c in clusters for pk in (c.finished_id, c.evaluated_id) if pk}
    runs = AuditRun.objects.in_bulk(wanted)

    info = Family("kubegap_cluster_info", "A cluster audited by kubegap, with its name and team.")
    open_findings = Family(
        "kubegap_open_findings",
        "Open findings after the cluster's newest evaluated audit, by severity and check "
        "(ignored and suppressed findings excluded).",
    )
    by_severity = Family(
        "kubegap_open_findings_by_severity", "Open findings after the newest evaluated audit, by severity."
    )
    score = Family("kubegap_score", "Score 0-100 of the newest evaluated audit (100: no check fires).")
    evaluated_at = Family(
        "kubegap_last_evaluated_run_timestamp_seconds",
        "When the newest evaluated audit captured the cluster (Unix time).",
    )
    status = Family(
        "kubegap_last_run_status", "Status of the newest finished audit: 1 for its status, 0 for the others."
    )
    finished_at = Family("kubegap_last_run_timestamp_seconds", "When the newest finished audit finished (Unix time).")
    duration = Family("kubegap_last_run_duration_seconds", "How long the newest finished audit took.")

    for cluster in clusters:
        slug = cluster.slug
        info.add(1, cluster=slug, name=cluster.name, team=cluster.team.name)
        evaluated = runs.get(cluster.evaluated_id)
        if evaluated is not None:
            for check_id, count in sorted(evaluated.open_by_check.items()):
                chk = CATALOG.get(check_id)
                severity = str(chk.severity) if chk else "unknown"
                open_findings.add(count, cluster=slug, severity=severity, check=check_id)
            for severity, count in sorted(evaluated.open_by_severity.items()):
                by_severity.add(count, cluster=slug, severity=severity)
            if evaluated.score is not None:
                score.add(evaluated.score, cluster=slug)
            if evaluated.captured_at is not None:
                evaluated_at.add(evaluated.captured_at.timestamp(), cluster=slug)
        finished = runs.get(cluster.finished_id)
        if finished is not None:
            for state in FINISHED_STATUSES:
                status.add(1 if finished.status == state else 0, cluster=slug, status=str(state))
            if finished.finished_at is not None:
                finished_at.add(finished.finished_at.timestamp(), cluster=slug)
            if finished.duration_seconds is not None:
                duration.add(finished.duration_seconds, cluster=slug)
    return [info, open_findings, by_severity, score, evaluated_at, status, finished_at, duration]
