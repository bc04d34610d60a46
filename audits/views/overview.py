from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from audits import selectors


@login_required
def overview(request: HttpRequest) -> HttpResponse:
    """Every cluster of the user's teams: grade, open findings, trend, last and next audit."""
    return render(request, "audits/overview.html", {"overview": selectors.cluster_overview(request.user)})
