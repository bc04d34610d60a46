from __future__ import annotations

from pathlib import PurePosixPath

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audits import selectors, services
from audits.access import has_role
from audits.charts import trend_chart
from audits.checks import CATALOG
from audits.forms import ScheduleForm
from audits.models import AuditRun, Cluster, Role
from audits.severity import SEVERITY_ORDER
from audits.views.htmx import HtmxHttpRequest


def visible_cluster(request: HttpRequest, slug: str) -> Cluster:
    """The cluster if the user may see it; 404 otherwise, so outsiders learn nothing."""
    return get_object_or_404(selectors.clusters_visible_to(request.user).select_related("team"), slug=slug)


def require_role(request: HttpRequest, cluster: Cluster, role: Role, what: str) -> None:
    if not has_role(request.user, cluster, role):
        raise PermissionDenied(f"{what} needs the {role.label.lower()} role (or higher) in team {cluster.team.name}.")


@login_required
def cluster_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    cluster = visible_cluster(request, slug)
    filters = selectors.FindingFilters.from_query(request.GET)
    page = selectors.findings_page(cluster, filters)
    if request.htmx and request.htmx.target == "findings":
        return render(request, "audits/cluster.html#findings", _findings_context(cluster, filters, page))
    return _cluster_page(request, cluster, filters=filters, page=page)


def _findings_context(cluster: Cluster, filters: selectors.FindingFilters, page: selectors.FindingsPage) -> dict:
    return {
        "cluster": cluster,
        "filters": filters,
        "page": page,
        "severities": SEVERITY_ORDER,
        "areas": sorted({c.area for c in CATALOG.values()}),
        "checks": sorted(CATALOG),
        "statuses": selectors.STATUSES,
        "namespaces": selectors.cluster_namespaces(cluster),
    }


def _cluster_page(
    request: HttpRequest,
    cluster: Cluster,
    *,
    filters: selectors.FindingFilters | None = None,
    page: selectors.FindingsPage | None = None,
    schedule_form: ScheduleForm | None = None,
    status: int = 200,
) -> HttpResponse:
    filters = filters or selectors.FindingFilters()
    page = page or selectors.findings_page(cluster, filters)
    runs = list(selectors.cluster_runs(cluster))
    latest = selectors.latest_counted_run(cluster)
    form = schedule_form or ScheduleForm(
        initial={
            "schedule_cron": cluster.schedule_cron,
            "schedule_timezone": cluster.schedule_timezone,
            "schedule_enabled": cluster.schedule_enabled,
        }
    )
    trend = selectors.cluster_trend(cluster)
    context = {
        **_findings_context(cluster, filters, page),
        "runs": runs,
        "active_run": next((run for run in runs if run.is_active), None),
        "latest": latest,
        "changes": selectors.run_changes(latest) if latest else None,
        "trend_svg": trend_chart(trend),
        "trend": trend[-30:],
        "schedule_form": form,
        "can_operate": has_role(request.user, cluster, Role.OPERATOR),
    }
    return render(request, "audits/cluster.html", context, status=status)


@login_required
@require_POST
def schedule_edit(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = visible_cluster(request, slug)
    require_role(request, cluster, Role.OPERATOR, "Changing the schedule")
    form = ScheduleForm(request.POST)
    if form.is_valid():
        services.cluster_schedule_update(
            cluster=cluster,
            cron=form.cleaned_data["schedule_cron"],
            timezone_name=form.cleaned_data["schedule_timezone"],
            enabled=form.cleaned_data["schedule_enabled"],
        )
        messages.success(request, "Schedule saved.")
        return redirect("cluster", slug=cluster.slug)
    return _cluster_page(request, cluster, schedule_form=form, status=400)


@login_required
@require_POST
def run_now(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = visible_cluster(request, slug)
    require_role(request, cluster, Role.OPERATOR, "Starting an audit")
    assert isinstance(request.user, User)  # login_required
    try:
        run = services.audit_run_request(cluster=cluster, requested_by=request.user)
    except services.AuditError as exc:
        messages.error(request, f"Not started: {exc}")
        return redirect("cluster", slug=cluster.slug)
    messages.success(request, f"Audit {run.pk} queued.")
    # The run's own page shows its status whether it is still running or
    # already done; the cluster page shows progress only while it runs.
    return redirect("run", slug=cluster.slug, run_id=run.pk)


@login_required
def run_detail(request: HtmxHttpRequest, slug: str, run_id: int) -> HttpResponse:
    cluster = visible_cluster(request, slug)
    run = get_object_or_404(AuditRun, cluster=cluster, pk=run_id)
    if request.htmx:
        return render(request, "audits/run.html#run-status", {"cluster": cluster, "run": run})
    not_evaluated = [
        (check_id, CATALOG.get(check_id), reason) for check_id, reason in sorted(run.not_evaluated.items())
    ]
    stats = sorted((kind, s) for kind, s in run.collection_stats.items() if not kind.startswith("_"))
    context = {
        "cluster": cluster,
        "run": run,
        "changes": selectors.run_changes(run),
        "not_evaluated": not_evaluated,
        "stats": stats,
        # What an imported artifact held, and how its capture time was chosen.
        "artifact": run.collection_stats.get("_artifact"),
    }
    return render(request, "audits/run.html", context)


@login_required
def run_snapshot(request: HttpRequest, slug: str, run_id: int) -> FileResponse:
    """Download what the run collected (kubegap-web's gzip JSON export)."""
    cluster = visible_cluster(request, slug)
    run = get_object_or_404(AuditRun, cluster=cluster, pk=run_id)
    if not run.snapshot_file:
        raise Http404("This run keeps no snapshot (it was pruned, or the run failed before collecting).")
    name = PurePosixPath(str(run.snapshot_file.name)).name
    return FileResponse(run.snapshot_file.open("rb"), as_attachment=True, filename=name)
