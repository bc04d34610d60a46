from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from audits import selectors, services
from audits.models import ACTIVE_STATUSES, AuditRun, RunTrigger


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    rows = selectors.cluster_overview(request.user)
    return render(request, "audits/overview.html", {"rows": rows})


@login_required
def cluster_detail(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    findings = list(selectors.cluster_open_findings(cluster))
    runs = list(selectors.cluster_runs(cluster))
    active = next((run for run in runs if run.is_active), None)
    context = {"cluster": cluster, "findings": findings, "runs": runs, "active_run": active}
    return render(request, "audits/cluster.html", context)


@login_required
def run_status(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    run = get_object_or_404(AuditRun, cluster=cluster, pk=run_id)
    return render(request, "audits/cluster.html#run-status", {"cluster": cluster, "active_run": run})


@login_required
@require_POST
def run_now(request: HttpRequest, slug: str) -> HttpResponse:
    cluster = get_object_or_404(selectors.clusters_visible_to(request.user), slug=slug)
    if cluster.runs.filter(status__in=ACTIVE_STATUSES).exists():
        messages.error(request, "An audit of this cluster is already queued or running; wait for it to finish.")
    else:
        assert isinstance(request.user, User)  # login_required
        services.audit_run_enqueue(cluster=cluster, trigger=RunTrigger.MANUAL, requested_by=request.user)
        messages.success(request, "Audit queued.")
    return redirect("cluster", slug=cluster.slug)
