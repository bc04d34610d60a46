from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audits import selectors, services
from audits.access import has_role
from audits.forms import ScheduleForm
from audits.models import AuditRun, Cluster, Role


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    rows = selectors.cluster_overview(request.user)
    return render(request, "audits/overview.html", {"rows": rows})


@login_required
def cluster_detail(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    return _cluster_page(request, cluster)


def _cluster_page(
    request: HttpRequest, cluster: Cluster, *, schedule_form: ScheduleForm | None = None, status: int = 200
) -> HttpResponse:
    findings = list(selectors.cluster_open_findings(cluster))
    runs = list(selectors.cluster_runs(cluster))
    active = next((run for run in runs if run.is_active), None)
    form = schedule_form or ScheduleForm(
        initial={
            "schedule_cron": cluster.schedule_cron,
            "schedule_timezone": cluster.schedule_timezone,
            "schedule_enabled": cluster.schedule_enabled,
        }
    )
    context = {
        "cluster": cluster,
        "findings": findings,
        "runs": runs,
        "active_run": active,
        "schedule_form": form,
        "can_operate": has_role(request.user, cluster, Role.OPERATOR),
    }
    return render(request, "audits/cluster.html", context, status=status)


@login_required
@require_POST
def schedule_edit(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    if not has_role(request.user, cluster, Role.OPERATOR):
        return HttpResponseForbidden("Changing the schedule needs the operator or admin role in the team.")
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
def run_status(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    run = get_object_or_404(AuditRun, cluster=cluster, pk=run_id)
    return render(request, "audits/cluster.html#run-status", {"cluster": cluster, "active_run": run})


@login_required
@require_POST
def run_now(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    if not has_role(request.user, cluster, Role.OPERATOR):
        return HttpResponseForbidden("Starting an audit needs the operator or admin role in the team.")
    assert isinstance(request.user, User)  # login_required
    try:
        services.audit_run_request(cluster=cluster, requested_by=request.user)
    except services.AuditError as exc:
        messages.error(request, f"Not started: {exc}")
    else:
        messages.success(request, "Audit queued.")
    return redirect("cluster", slug=cluster.slug)
