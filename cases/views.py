from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from audits.checks import CATALOG
from cases.models import Case


@login_required
def case_list(request: HttpRequest) -> HttpResponse:
    cases = Case.objects.prefetch_related("tags", "sources")
    return render(request, "cases/list.html", {"cases": cases})


@login_required
def case_detail(request: HttpRequest, case_id: str) -> HttpResponse:
    case = get_object_or_404(Case.objects.prefetch_related("tags", "sources"), pk=case_id)
    citing = [chk for chk in CATALOG.values() if case.id in chk.cases]
    return render(request, "cases/detail.html", {"case": case, "citing_checks": citing})
