"""The read-only JSON API. Every query starts from `clusters_visible_to` the
token's user, so a token sees exactly what its user sees in the pages."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest, JsonResponse

from api.auth import ApiError, api_endpoint, bad_parameter
from api.openapi import SPEC
from api.pagination import PAGE_PARAMETERS, paginate
from audits.checks import CATALOG
from audits.checks.engine import CHECK_ID
from audits.exports.records import finding_record, run_record
from audits.history import MomentError, iso, open_at_filter, parse_moment
from audits.models import FINISHED_STATUSES, AuditRun, Cluster, Finding, RunStatus
from audits.selectors import clusters_visible_to
from audits.severity import Severity
from cases.models import Case

FINDING_STATUSES = ("open", "closed", "all")


def openapi(request: HttpRequest) -> JsonResponse:
    """The OpenAPI 3.1 description; public, like any API reference."""
    return JsonResponse(SPEC, json_dumps_params={"indent": 2})


def _visible_clusters(request: HttpRequest, user: User) -> QuerySet[Cluster]:
    """The user's clusters, narrowed to one by the `cluster` parameter (a slug)."""
    clusters = clusters_visible_to(user)
    slug = request.GET.get("cluster")
    if slug is None:
        return clusters
    one = clusters.filter(slug=slug)
    if not one.exists():
        # The same answer whether the cluster does not exist or belongs to another team.
        raise ApiError(404, "not_found", f"No cluster with slug {slug!r} is visible to this token.", "cluster")
    return one


def _choices(request: HttpRequest, parameter: str, allowed: tuple[str, ...]) -> list[str] | None:
    """A comma-separated filter whose values must each be one of `allowed`."""
    raw = request.GET.get(parameter)
    if raw is None:
        return None
    values = [v.strip() for v in raw.split(",") if v.strip()]
    wrong = [v for v in values if v not in allowed]
    if wrong or not values:
        raise bad_parameter(
            parameter, f"{parameter} must be one or more of {', '.join(allowed)} (comma-separated); got {raw!r}."
        )
    return values


@api_endpoint(parameters=PAGE_PARAMETERS)
def clusters(request: HttpRequest, user: User) -> JsonResponse:
    newest = (
        AuditRun.objects.filter(cluster=OuterRef("pk"), status__in=FINISHED_STATUSES)
        .order_by("-captured_at", "-id")
        .values("pk")[:1]
    )
    rows = clusters_visible_to(user).select_related("team").annotate(last_run_id=Subquery(newest))

    def serialize(page: list[Any]) -> list[dict[str, Any]]:
        runs = AuditRun.objects.select_related("cluster").in_bulk([c.last_run_id for c in page if c.last_run_id])
        return [_cluster_record(c, runs.get(c.last_run_id)) for c in page]

    return JsonResponse(paginate(request, rows, serialize))


def _cluster_record(cluster: Cluster, last_run: AuditRun | None) -> dict[str, Any]:
    return {
        "slug": cluster.slug,
        "name": cluster.name,
        "team": cluster.team.name,
        "description": cluster.description,
        "source_kind": cluster.source_kind,
        "schedule": {
            "cron": cluster.schedule_cron,
            "timezone": cluster.schedule_timezone,
            "enabled": cluster.schedule_enabled,
            "next_audit_at": iso(cluster.next_audit_at) or None,
        },
        "last_run": run_record(last_run) if last_run else None,
    }


@api_endpoint(parameters=("cluster", "status", *PAGE_PARAMETERS))
def runs(request: HttpRequest, user: User) -> JsonResponse:
    rows = AuditRun.objects.filter(cluster__in=_visible_clusters(request, user)).select_related("cluster")
    if statuses := _choices(request, "status", tuple(RunStatus.values)):
        rows = rows.filter(status__in=statuses)
    return JsonResponse(paginate(request, rows, lambda page: [run_record(r) for r in page], descending=True))


@api_endpoint(parameters=("cluster", "status", "severity", "check", "namespace", "open_at", *PAGE_PARAMETERS))
def findings(request: HttpRequest, user: User) -> JsonResponse:
    rows = Finding.objects.filter(cluster__in=_visible_clusters(request, user)).select_related("cluster")
    rows = _by_time(request, rows)
    if severities := _choices(request, "severity", tuple(Severity.values)):
        rows = rows.filter(severity__in=severities)
    if (checks := request.GET.get("check")) is not None:
        ids = [c.strip() for c in checks.split(",") if c.strip()]
        if not ids or not all(CHECK_ID.match(c) for c in ids):
            raise bad_parameter(
                "check", f"check must be one or more check ids such as KG-DIS-001 (comma-separated); got {checks!r}."
            )
        rows = rows.filter(check_id__in=ids)
    if (namespace := request.GET.get("namespace")) is not None:
        rows = rows.filter(object_namespace=namespace)
    return JsonResponse(paginate(request, rows, lambda page: [finding_record(f) for f in page]))


def _by_time(request: HttpRequest, rows: QuerySet[Finding]) -> QuerySet[Finding]:
    """`open_at` (intervals open at a moment) or `status` (open now, closed, all; default open)."""
    if (raw := request.GET.get("open_at")) is not None:
        if "status" in request.GET:
            raise bad_parameter(
                "status",
                "status cannot be combined with open_at: open_at already selects the findings open at that moment.",
            )
        try:
            return rows.filter(open_at_filter(parse_moment(raw, parameter="open_at")))
        except MomentError as exc:
            raise bad_parameter("open_at", str(exc)) from None
    [status] = _choices(request, "status", FINDING_STATUSES) or ["open"]
    if status == "open":
        return rows.filter(closed_at__isnull=True)
    if status == "closed":
        return rows.filter(closed_at__isnull=False)
    return rows


@api_endpoint(parameters=PAGE_PARAMETERS)
def cases(request: HttpRequest, user: User) -> JsonResponse:
    cited_by: dict[str, list[str]] = {}
    for chk in CATALOG.values():
        for case_id in chk.cases:
            cited_by.setdefault(case_id, []).append(chk.id)

    def serialize(page: list[Case]) -> list[dict[str, Any]]:
        return [_case_record(case, sorted(cited_by.get(case.id, []))) for case in page]

    rows = Case.objects.prefetch_related("tags", "sources")
    return JsonResponse(paginate(request, rows, serialize, key="id", key_type=str))


def _case_record(case: Case, cited_by: list[str]) -> dict[str, Any]:
    return {
        "id": case.id,
        "org": case.org,
        "date": case.date_label,
        "title": case.title,
        "summary": case.summary,
        "trigger": case.trigger,
        "root_cause": case.root_cause,
        "remediation": case.remediation,
        "lessons": case.lessons,
        "tags": [tag.name for tag in case.tags.all()],
        "sources": [{"url": s.url, "title": s.title, "primary": s.primary} for s in case.sources.all()],
        "cited_by": cited_by,
    }
