from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from audits import selectors, services
from audits.access import has_role
from audits.checks import CATALOG
from audits.forms import SuppressionForm
from audits.models import Finding, Role
from audits.views.clusters import require_role, visible_cluster
from cases.models import Case


def _finding(request: HttpRequest, slug: str, finding_id: int) -> Finding:
    cluster = visible_cluster(request, slug)
    return get_object_or_404(
        Finding.objects.select_related("cluster__team", "opened_by_run", "last_seen_run"),
        cluster=cluster,
        pk=finding_id,
    )


@login_required
def finding_detail(request: HttpRequest, slug: str, finding_id: int) -> HttpResponse:
    finding = _finding(request, slug, finding_id)
    return _finding_page(request, finding, SuppressionForm())


def _finding_page(request: HttpRequest, finding: Finding, form: SuppressionForm, status: int = 200) -> HttpResponse:
    check = CATALOG.get(finding.check_id)
    cases = list(Case.objects.filter(pk__in=check.cases).prefetch_related("sources")) if check else []
    suppressions = selectors.finding_suppressions(finding)
    now = timezone.now()
    live = next(
        (s for s in suppressions if s.revoked_at is None and (s.expires_at is None or s.expires_at > now)), None
    )
    context = {
        "cluster": finding.cluster,
        "finding": finding,
        "check": check,
        "cases": sorted(cases, key=lambda c: check.cases.index(c.id) if check else 0),
        "intervals": selectors.finding_intervals(finding),
        "suppressions": suppressions,
        "live_suppression": live,
        "form": form,
        "can_operate": has_role(request.user, finding.cluster, Role.OPERATOR),
    }
    return render(request, "audits/finding.html", context, status=status)


@login_required
@require_POST
def finding_suppress(request: HttpRequest, slug: str, finding_id: int) -> HttpResponse:
    finding = _finding(request, slug, finding_id)
    require_role(request, finding.cluster, Role.OPERATOR, "Suppressing a finding")
    form = SuppressionForm(request.POST)
    if not form.is_valid():
        return _finding_page(request, finding, form, status=400)
    expires_at = form.cleaned_data["expires_at"]
    if expires_at is not None and timezone.is_naive(expires_at):
        expires_at = timezone.make_aware(expires_at, dt.UTC)
    assert isinstance(request.user, User)
    try:
        services.suppression_create(
            finding=finding, created_by=request.user, reason=form.cleaned_data["reason"], expires_at=expires_at
        )
    except ValueError as exc:
        form.add_error(None, str(exc))
        return _finding_page(request, finding, form, status=400)
    messages.success(request, "Finding suppressed. It stays listed, marked as suppressed, and no longer counts.")
    return redirect("finding", slug=finding.cluster.slug, finding_id=finding.pk)


@login_required
@require_POST
def finding_unsuppress(request: HttpRequest, slug: str, finding_id: int) -> HttpResponse:
    finding = _finding(request, slug, finding_id)
    require_role(request, finding.cluster, Role.OPERATOR, "Lifting a suppression")
    assert isinstance(request.user, User)
    services.suppression_revoke(finding=finding, revoked_by=request.user)
    messages.success(request, "Suppression lifted; the finding counts again.")
    return redirect("finding", slug=finding.cluster.slug, finding_id=finding.pk)
