"""Reads for pages, exports and commands. Access control starts here: every
query for a user goes through `clusters_visible_to`."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Case, IntegerField, OuterRef, QuerySet, Subquery, Value, When

from audits.models import FINISHED_STATUSES, AuditRun, Cluster, Finding
from audits.severity import SEVERITY_ORDER

SEVERITY_RANK = Case(
    *(When(severity=s.value, then=Value(rank)) for rank, s in enumerate(SEVERITY_ORDER)),
    output_field=IntegerField(),
)


def clusters_visible_to(user: User | AnonymousUser) -> QuerySet[Cluster]:
    if not user.is_authenticated:
        return Cluster.objects.none()
    if getattr(user, "is_superuser", False):
        return Cluster.objects.all()
    return Cluster.objects.filter(team__memberships__user=user).distinct()


@dataclass(frozen=True)
class ClusterRow:
    cluster: Cluster
    last_run: AuditRun | None


def cluster_overview(user: User | AnonymousUser) -> list[ClusterRow]:
    """Each visible cluster with its newest finished run, in two queries."""
    newest = (
        AuditRun.objects.filter(cluster=OuterRef("pk"), status__in=FINISHED_STATUSES)
        .order_by("-captured_at", "-id")
        .values("pk")[:1]
    )
    clusters = list(clusters_visible_to(user).select_related("team").annotate(last_run_id=Subquery(newest)))
    runs = AuditRun.objects.in_bulk([c.last_run_id for c in clusters if c.last_run_id])
    return [ClusterRow(cluster=c, last_run=runs.get(c.last_run_id)) for c in clusters]


def cluster_open_findings(cluster: Cluster) -> QuerySet[Finding]:
    return Finding.objects.filter(cluster=cluster, closed_at__isnull=True).order_by(
        SEVERITY_RANK, "check_id", "object_namespace", "object_name"
    )


def cluster_runs(cluster: Cluster, limit: int = 20) -> QuerySet[AuditRun]:
    return AuditRun.objects.filter(cluster=cluster).order_by("-created_at", "-id")[:limit]
