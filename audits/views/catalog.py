from __future__ import annotations

from collections import defaultdict

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from audits.checks import CATALOG, Check
from audits.severity import severity_rank
from cases.models import Case


@login_required
def checks_catalog(request: HttpRequest) -> HttpResponse:
    """Every check by area, with what it looks at, why, how to fix, and its cases."""
    by_area: dict[str, list[Check]] = defaultdict(list)
    for chk in sorted(CATALOG.values(), key=lambda c: (severity_rank(c.severity), c.id)):
        by_area[chk.area].append(chk)
    titles = dict(Case.objects.values_list("id", "title"))
    return render(
        request,
        "audits/checks.html",
        {"areas": sorted(by_area.items()), "case_titles": titles, "count": len(CATALOG)},
    )
