"""Export and diff pages. Every cluster is looked up through
`clusters_visible_to`, so a cluster of another team is a 404, name included."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.http import content_disposition_header

from audits.exports.diff_export import diff_csv, diff_filename, diff_json
from audits.exports.forms import HistoryExportForm, RunDiffForm
from audits.exports.history_export import CONTENT_TYPES, ExportFormat, HistoryQuery, history_export
from audits.history import evaluated_runs, runs_diff
from audits.models import Cluster
from audits.selectors import clusters_visible_to

# How many gaps of one group the diff page lists; the CSV and JSON have them all.
DIFF_PAGE_ROWS = 500
DEFAULT_WINDOW = dt.timedelta(days=7)


def download(chunks: Iterator[str], *, content_type: str, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


@login_required
def cluster_export(request: HttpRequest, slug: str) -> HttpResponseBase:
    cluster = get_object_or_404(clusters_visible_to(request.user), slug=slug)
    clusters = Cluster.objects.filter(pk=cluster.pk)
    return _export(request, scope=cluster.name, clusters=clusters, context={"cluster": cluster})


@login_required
def team_export(request: HttpRequest, team_id: int) -> HttpResponseBase:
    clusters = clusters_visible_to(request.user).filter(team_id=team_id)
    if not clusters.exists():
        raise Http404("No such team, or none of its clusters is visible to you.")
    team = Group.objects.get(pk=team_id)
    context: dict[str, object] = {"team": team, "team_clusters": clusters.order_by("name")}
    return _export(request, scope=f"team {team.name}", clusters=clusters, context=context)


def _export(
    request: HttpRequest, *, scope: str, clusters: QuerySet[Cluster], context: dict[str, object]
) -> HttpResponseBase:
    """The form page, or the export stream once the form is submitted and valid."""
    if "format" not in request.GET:
        until = timezone.now().replace(second=0, microsecond=0)
        form = HistoryExportForm(initial={"since": until - DEFAULT_WINDOW, "until": until, "format": "markdown"})
        return render(request, "exports/export.html", {**context, "form": form})
    form = HistoryExportForm(request.GET)
    if not form.is_valid():
        return render(request, "exports/export.html", {**context, "form": form}, status=400)
    data = form.cleaned_data
    query = HistoryQuery.build(scope=scope, clusters=clusters, since=data["since"], until=data["until"], at=data["at"])
    fmt = ExportFormat(data["format"])
    return download(history_export(query, fmt), content_type=CONTENT_TYPES[fmt], filename=query.filename(fmt))


@login_required
def run_diff(request: HttpRequest, slug: str) -> HttpResponseBase:
    cluster = get_object_or_404(clusters_visible_to(request.user), slug=slug)
    if "from" not in request.GET and "to" not in request.GET:
        newest = list(evaluated_runs(cluster).values_list("pk", flat=True)[:2])
        initial = {"to": newest[0], "from": newest[-1]} if newest else {}
        form = RunDiffForm(initial=initial, cluster=cluster)
        return render(request, "exports/diff.html", {"cluster": cluster, "form": form, "diff": None})
    form = RunDiffForm(request.GET, cluster=cluster)
    if not form.is_valid():
        return render(request, "exports/diff.html", {"cluster": cluster, "form": form, "diff": None}, status=400)
    diff = runs_diff(cluster, form.cleaned_data["from"], form.cleaned_data["to"])
    fmt = form.cleaned_data.get("format") or "html"
    if fmt == "json":
        return download(diff_json(diff), content_type="application/json", filename=diff_filename(diff, "json"))
    if fmt == "csv":
        return download(diff_csv(diff), content_type="text/csv; charset=utf-8", filename=diff_filename(diff, "csv"))
    groups = [
        {"kind": kind, "count": findings.count(), "findings": list(findings[:DIFF_PAGE_ROWS])}
        for kind, findings in diff.groups()
    ]
    context = {"cluster": cluster, "form": form, "diff": diff, "groups": groups, "page_rows": DIFF_PAGE_ROWS}
    return render(request, "exports/diff.html", context)
