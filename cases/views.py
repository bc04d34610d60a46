from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from audits import selectors
from audits.checks import CATALOG
from cases.models import Case, Tag


@login_required
def case_list(request: HttpRequest) -> HttpResponse:
    """The case library, filtered by tag, organisation, year and a search."""
    tag, org, year, q = (request.GET.get(k, "").strip()[:100] for k in ("tag", "org", "year", "q"))
    cases = Case.objects.prefetch_related("tags")
    if tag:
        cases = cases.filter(tags__name=tag)
    if org:
        cases = cases.filter(org=org)
    if year.isdigit():
        cases = cases.filter(occurred_on__year=int(year))
    if q:
        cases = cases.filter(Q(title__icontains=q) | Q(summary__icontains=q) | Q(org__icontains=q) | Q(id__iexact=q))
    cited: dict[str, list[str]] = {}
    for chk in CATALOG.values():
        for case_id in chk.cases:
            cited.setdefault(case_id, []).append(chk.id)
    context = {
        "cases": [(case, sorted(cited.get(case.id, []))) for case in cases.distinct()],
        "filters": {"tag": tag, "org": org, "year": year, "q": q},
        "tags": Tag.objects.order_by("name").values_list("name", flat=True),
        "orgs": Case.objects.order_by("org").values_list("org", flat=True).distinct(),
        "years": sorted({d.year for d in Case.objects.values_list("occurred_on", flat=True) if d}, reverse=True),
    }
    if request.htmx:  # type: ignore[attr-defined]
        return render(request, "cases/list.html#case-table", context)
    return render(request, "cases/list.html", context)


@login_required
def case_detail(request: HttpRequest, case_id: str) -> HttpResponse:
    case = get_object_or_404(Case.objects.prefetch_related("tags", "sources"), pk=case_id)
    citing = [chk for chk in CATALOG.values() if case.id in chk.cases]
    firing = selectors.clusters_where_checks_fire(request.user, [chk.id for chk in citing])
    return render(request, "cases/detail.html", {"case": case, "citing_checks": citing, "firing": firing})
