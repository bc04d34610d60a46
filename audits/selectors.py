"""Reads for pages, exports and commands.

Access control starts here: every query for a user goes through
`clusters_visible_to`. Pages read per-run aggregates for counts and trends and
never count the findings table.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Case, IntegerField, OuterRef, Q, QuerySet, Subquery, Value, When
from django.utils import timezone

from audits.checks import CATALOG
from audits.models import COUNTED_STATUSES, AuditRun, Cluster, Finding, Suppression
from audits.severity import SEVERITY_ORDER

SEVERITY_RANK = Case(
    *(When(severity=s.value, then=Value(rank)) for rank, s in enumerate(SEVERITY_ORDER)),
    output_field=IntegerField(),
)
TREND_DAYS = 90
PAGE_SIZE = 50


def clusters_visible_to(user: User | AnonymousUser) -> QuerySet[Cluster]:
    if not user.is_authenticated:
        return Cluster.objects.none()
    if user.is_superuser:
        return Cluster.objects.all()
    return Cluster.objects.filter(team__memberships__user=user).distinct()


@dataclass(frozen=True)
class ClusterRow:
    cluster: Cluster
    # The newest run whatever its status (it may be running or have failed).
    last_run: AuditRun | None
    # The newest run that saw the cluster: its aggregates are the cluster's state.
    counted: AuditRun | None
    trend: list[int]


@dataclass
class Overview:
    rows: list[ClusterRow]
    totals: dict[str, int] = field(default_factory=dict)


def cluster_overview(user: User | AnonymousUser, *, now: dt.datetime | None = None) -> Overview:
    """Each visible cluster with its latest runs and a 90-day trend, in four queries."""
    now = now or timezone.now()
    newest = AuditRun.objects.filter(cluster=OuterRef("pk")).order_by("-created_at", "-id").values("pk")[:1]
    clusters = list(
        _with_latest_counted(clusters_visible_to(user))
        .select_related("team")
        .annotate(last_run_id=Subquery(newest))
        .order_by("team__name", "name")
    )
    ids = {c.last_run_id for c in clusters} | {c.counted_id for c in clusters}  # type: ignore[attr-defined]
    runs = AuditRun.objects.in_bulk([pk for pk in ids if pk])
    trends: dict[int, list[int]] = defaultdict(list)
    points = (
        AuditRun.objects.filter(
            cluster__in=[c.pk for c in clusters],
            status__in=COUNTED_STATUSES,
            captured_at__gte=now - dt.timedelta(days=TREND_DAYS),
        )
        .order_by("captured_at", "id")
        .values_list("cluster_id", "findings_open")
    )
    for cluster_id, open_count in points:
        trends[cluster_id].append(open_count)
    rows = [ClusterRow(c, runs.get(c.last_run_id), runs.get(c.counted_id), trends[c.pk]) for c in clusters]  # type: ignore[attr-defined]
    totals: dict[str, int] = defaultdict(int)
    for row in rows:
        totals["clusters"] += 1
        if row.counted:
            totals["open"] += row.counted.findings_open
            totals["new"] += row.counted.new_count
            totals["regressed"] += row.counted.regressed_count
            for severity, count in row.counted.open_by_severity.items():
                totals[severity] += count
    return Overview(rows=rows, totals=dict(totals))


def _with_latest_counted(clusters: QuerySet[Cluster]) -> QuerySet[Cluster]:
    """Annotate `counted_id`: the newest run whose aggregates describe the cluster."""
    newest_counted = (
        AuditRun.objects.filter(cluster=OuterRef("pk"), status__in=COUNTED_STATUSES)
        .order_by("-captured_at", "-id")
        .values("pk")[:1]
    )
    return clusters.annotate(counted_id=Subquery(newest_counted))


def cluster_trend(
    cluster: Cluster, *, days: int = 365, now: dt.datetime | None = None
) -> list[tuple[dt.datetime, dict[str, int]]]:
    """Open findings by severity after each counted run, oldest first."""
    now = now or timezone.now()
    rows = (
        AuditRun.objects.filter(
            cluster=cluster, status__in=COUNTED_STATUSES, captured_at__gte=now - dt.timedelta(days=days)
        )
        .order_by("captured_at", "id")
        .values_list("captured_at", "open_by_severity")
    )
    return [(at, by_severity) for at, by_severity in rows if at is not None]


def counted_runs(cluster: Cluster) -> QuerySet[AuditRun]:
    """The runs that saw the cluster (succeeded or partial), newest capture first."""
    return AuditRun.objects.filter(cluster=cluster, status__in=COUNTED_STATUSES).order_by("-captured_at", "-id")


def latest_counted_run(cluster: Cluster) -> AuditRun | None:
    """The run whose aggregates describe the cluster now."""
    return counted_runs(cluster).first()


def cluster_runs(cluster: Cluster, limit: int = 20) -> QuerySet[AuditRun]:
    return AuditRun.objects.filter(cluster=cluster).order_by("-created_at", "-id")[:limit]


STATUSES = ("open", "suppressed", "ignored", "closed", "all")


@dataclass(frozen=True)
class FindingFilters:
    severity: str = ""
    area: str = ""
    check: str = ""
    namespace: str = ""
    status: str = "open"
    q: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, query: Any) -> FindingFilters:
        status = query.get("status", "open")
        try:
            page = max(1, int(query.get("page", 1)))
        except ValueError:
            page = 1
        return cls(
            severity=query.get("severity", "")[:16],
            area=query.get("area", "")[:32],
            check=query.get("check", "")[:32],
            namespace=query.get("namespace", "")[:253],
            status=status if status in STATUSES else "open",
            q=query.get("q", "")[:200].strip(),
            page=page,
        )

    def as_query(self, **changes: object) -> dict[str, object]:
        """The filters as URL parameters, without the defaults, for links that keep them."""
        values = {**self.__dict__, **changes}
        defaults = FindingFilters().__dict__
        return {k: v for k, v in values.items() if v != defaults[k]}


@dataclass
class FindingsPage:
    rows: list[Finding]
    page: int
    has_next: bool
    suppressions: dict[str, Suppression]


def findings_page(cluster: Cluster, filters: FindingFilters) -> FindingsPage:
    """One page of a cluster's findings, filtered. Paged by fetching one row more
    than shown, so the findings table is never counted."""
    now = timezone.now()
    live = {
        s.fingerprint: s
        for s in Suppression.objects.filter(cluster=cluster, revoked_at__isnull=True)
        .exclude(expires_at__lte=now)
        .select_related("created_by")
    }
    qs = Finding.objects.filter(cluster=cluster)
    match filters.status:
        case "open":
            qs = qs.filter(closed_at__isnull=True, ignored_by_annotation=False).exclude(fingerprint__in=live)
        case "suppressed":
            qs = qs.filter(closed_at__isnull=True, fingerprint__in=live)
        case "ignored":
            qs = qs.filter(closed_at__isnull=True, ignored_by_annotation=True)
        case "closed":
            qs = qs.filter(closed_at__isnull=False)
    if filters.severity:
        qs = qs.filter(severity=filters.severity)
    if filters.area:
        qs = qs.filter(check_id__in=[c.id for c in CATALOG.values() if c.area == filters.area])
    if filters.check:
        qs = qs.filter(check_id=filters.check)
    if filters.namespace:
        qs = qs.filter(object_namespace=filters.namespace)
    if filters.q:
        qs = qs.filter(
            Q(object_name__icontains=filters.q)
            | Q(object_namespace__icontains=filters.q)
            | Q(message__icontains=filters.q)
            | Q(check_id__icontains=filters.q)
        )
    start = (filters.page - 1) * PAGE_SIZE
    rows = list(
        qs.order_by(SEVERITY_RANK, "check_id", "object_namespace", "object_name", "-opened_at")[
            start : start + PAGE_SIZE + 1
        ]
    )
    return FindingsPage(rows=rows[:PAGE_SIZE], page=filters.page, has_next=len(rows) > PAGE_SIZE, suppressions=live)


def cluster_namespaces(cluster: Cluster) -> list[str]:
    """Namespaces with open findings, for the filter."""
    return list(
        Finding.objects.filter(cluster=cluster, closed_at__isnull=True)
        .exclude(object_namespace="")
        .values_list("object_namespace", flat=True)
        .distinct()
        .order_by("object_namespace")[:500]
    )


@dataclass
class RunChanges:
    new: list[Finding]
    regressed: list[Finding]
    resolved: list[Finding]


def run_changes(run: AuditRun, limit: int = 50) -> RunChanges:
    """What a run opened, reopened and closed."""
    findings = Finding.objects.select_related("cluster").order_by(SEVERITY_RANK, "check_id")
    opened = list(findings.filter(opened_by_run=run)[: limit * 2])
    return RunChanges(
        new=[f for f in opened if not f.is_regression][:limit],
        regressed=[f for f in opened if f.is_regression][:limit],
        resolved=list(findings.filter(closed_by_run=run)[:limit]),
    )


def finding_intervals(finding: Finding) -> list[Finding]:
    """Every interval of the same gap in the same cluster, oldest first."""
    return list(
        Finding.objects.filter(cluster_id=finding.cluster_id, fingerprint=finding.fingerprint)
        .select_related("opened_by_run", "closed_by_run")
        .order_by("opened_at")
    )


def finding_suppressions(finding: Finding) -> list[Suppression]:
    return list(
        Suppression.objects.filter(cluster_id=finding.cluster_id, fingerprint=finding.fingerprint)
        .select_related("created_by", "revoked_by")
        .order_by("-created_at")
    )


def clusters_where_checks_fire(user: User | AnonymousUser, check_ids: list[str]) -> list[tuple[Cluster, int]]:
    """Visible clusters with open findings of these checks, with how many, from run aggregates."""
    clusters = list(_with_latest_counted(clusters_visible_to(user)).order_by("name"))
    runs = AuditRun.objects.in_bulk([c.counted_id for c in clusters if c.counted_id])  # type: ignore[attr-defined]
    rows = []
    for cluster in clusters:
        run = runs.get(cluster.counted_id)  # type: ignore[attr-defined]
        count = sum(run.open_by_check.get(check_id, 0) for check_id in check_ids) if run else 0
        if count:
            rows.append((cluster, count))
    return rows
