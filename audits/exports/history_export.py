"""Exports of a cluster's or a team's findings history over a window.

Each export answers the postmortem questions: which gaps were open at a chosen
moment (the incident's start, say), and what opened, regressed or closed in the
window before it. Writers yield text as they read rows, so they stream.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Count, QuerySet
from django.utils import timezone

from audits.exports import markdown_report
from audits.exports.explain import CitedChecks, case_record, check_record
from audits.exports.records import CSV_FINDING_COLUMNS, finding_csv_values, finding_record
from audits.exports.streaming import buffered, csv_row, json_array, json_value
from audits.history import CHUNK_SIZE, change_counts, finding_changes, findings_open_at, iso
from audits.models import Cluster
from audits.severity import SEVERITY_ORDER


class ExportFormat(StrEnum):
    CSV = "csv"
    JSON = "json"
    MARKDOWN = "markdown"


CONTENT_TYPES = {
    ExportFormat.CSV: "text/csv; charset=utf-8",
    ExportFormat.JSON: "application/json",
    ExportFormat.MARKDOWN: "text/markdown; charset=utf-8",
}
EXTENSIONS = {ExportFormat.CSV: "csv", ExportFormat.JSON: "json", ExportFormat.MARKDOWN: "md"}


class HistoryQueryError(ValueError):
    """A window that cannot be exported, with what to change."""


def window_problem(
    since: dt.datetime, until: dt.datetime, *, since_name: str = "since", until_name: str = "until"
) -> str | None:
    """Why a window cannot be exported, in the words of the form or command that took it; None if it can."""
    if since < until:
        return None
    return (
        f"{since_name} ({iso(since)}) must be before {until_name} ({iso(until)}): the export covers the changes "
        f"after {since_name}, up to and including {until_name}."
    )


@dataclass(frozen=True)
class HistoryQuery:
    """What to export: whose history, the window of changes, and the moment of the open gaps."""

    # "cluster web-shop" or "team payments": names the export and its file.
    scope: str
    clusters: QuerySet[Cluster]
    since: dt.datetime
    until: dt.datetime
    at: dt.datetime

    @classmethod
    def build(
        cls,
        *,
        scope: str,
        clusters: QuerySet[Cluster],
        since: dt.datetime,
        until: dt.datetime,
        at: dt.datetime | None = None,
    ) -> HistoryQuery:
        if problem := window_problem(since, until):
            raise HistoryQueryError(problem)
        return cls(scope=scope, clusters=clusters, since=since, until=until, at=at or until)

    def filename(self, fmt: ExportFormat) -> str:
        slug = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in self.scope.replace(" ", "-"))
        return f"kubegap-{slug}-{self.at:%Y%m%dT%H%M%SZ}.{EXTENSIONS[fmt]}"

    def open_by_severity(self) -> dict[str, int]:
        counts = dict(
            findings_open_at(self.clusters, self.at)
            .order_by()
            .values_list("severity")
            .annotate(n=Count("id"))
            .values_list("severity", "n")
        )
        return {s.value: counts.get(s.value, 0) for s in SEVERITY_ORDER}


def history_export(query: HistoryQuery, fmt: ExportFormat) -> Iterator[str]:
    """The export as chunks of text, read and written as a stream."""
    writers: dict[ExportFormat, Callable[[HistoryQuery], Iterator[str]]] = {
        ExportFormat.CSV: history_csv,
        ExportFormat.JSON: history_json,
        ExportFormat.MARKDOWN: markdown_report.history_markdown,
    }
    return buffered(writers[fmt](query))


def history_csv(query: HistoryQuery) -> Iterator[str]:
    """One table: a row per gap open at the moment ("open_at"), then a row per change in the window.

    The `record` column says which; `at` is the moment, or when the change happened.
    """
    yield csv_row(["record", "at", *CSV_FINDING_COLUMNS])
    moment = iso(query.at)
    for finding in findings_open_at(query.clusters, query.at).iterator(chunk_size=CHUNK_SIZE):
        yield csv_row(["open_at", moment, *finding_csv_values(finding)])
    for change in finding_changes(query.clusters, query.since, query.until):
        yield csv_row([change.kind.value, iso(change.at), *finding_csv_values(change.finding)])


def history_json(query: HistoryQuery) -> Iterator[str]:
    """One JSON document, written as it is read; checks and cases come last, once each."""
    cited = CitedChecks()
    counts = change_counts(query.clusters, query.since, query.until)
    open_by_severity = query.open_by_severity()
    header = {
        "format": "kubegap.findings-history/1",
        "generated_at": iso(timezone.now().replace(microsecond=0)),
        "scope": query.scope,
        "clusters": [
            {"slug": c.slug, "name": c.name, "team": c.team.name}
            for c in query.clusters.select_related("team").order_by("name")
        ],
        "since": iso(query.since),
        "until": iso(query.until),
        "at": iso(query.at),
        "summary": {
            "open_at": sum(open_by_severity.values()),
            "open_at_by_severity": open_by_severity,
            "opened": counts.opened,
            "regressed": counts.regressed,
            "closed": counts.closed,
        },
    }
    # The header's closing brace is dropped so the streamed arrays continue the object.
    yield json_value(header)[:-1]

    def open_rows() -> Iterator[dict[str, object]]:
        for finding in findings_open_at(query.clusters, query.at).iterator(chunk_size=CHUNK_SIZE):
            cited.note(finding)
            yield finding_record(finding)

    def change_rows() -> Iterator[dict[str, object]]:
        for change in finding_changes(query.clusters, query.since, query.until):
            cited.note(change.finding)
            yield {"change": change.kind.value, "at": iso(change.at), "finding": finding_record(change.finding)}

    yield ', "open_at": '
    yield from json_array(open_rows())
    yield ', "changes": '
    yield from json_array(change_rows())
    yield ', "checks": ' + json_value({chk.id: check_record(chk) for chk in cited.checks()})
    yield ', "cases": ' + json_value({cid: case_record(case) for cid, case in cited.cases().items()})
    yield "}\n"
