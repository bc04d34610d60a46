"""The Markdown postmortem report: the gaps open at a moment, what changed in
the window before it, and why each gap matters, with the public incidents
behind it. Every piece of cluster text goes through `md_text`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from audits.checks import Check
from audits.exports.escaping import md_code, md_text, md_url
from audits.exports.explain import CitedCase, CitedChecks
from audits.history import CHUNK_SIZE, ChangeKind, change_counts, finding_changes, findings_open_at, iso
from audits.models import Cluster, Finding

if TYPE_CHECKING:
    from audits.exports.history_export import HistoryQuery

CHANGE_LABELS = {
    ChangeKind.OPENED: "opened",
    ChangeKind.REGRESSED: "regressed (came back)",
    ChangeKind.CLOSED: "closed (fixed or gone)",
}


def table_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |\n"


def table_head(*titles: str) -> str:
    return table_row(titles) + table_row("---" for _ in titles)


def history_markdown(query: HistoryQuery) -> Iterator[str]:
    cited = CitedChecks()
    clusters = list(query.clusters.select_related("team").order_by("name"))
    many = len(clusters) > 1
    yield f"# Reliability gaps of {md_text(query.scope)} at {iso(query.at)}\n\n"
    yield from _scope_table(query, clusters)
    yield from _summary(query)
    yield f"## Gaps open at {iso(query.at)}\n\n"
    yield from _open_table(query, cited, many)
    yield f"## What changed from {iso(query.since)} to {iso(query.until)}\n\n"
    yield from _changes_table(query, cited, many)
    yield "## Why these gaps matter\n\n"
    yield from _explanations(cited)


def _scope_table(query: HistoryQuery, clusters: list[Cluster]) -> Iterator[str]:
    names = ", ".join(f"{md_text(c.name)} (team {md_text(c.team.name)})" for c in clusters) or "none"
    yield table_head("Report", "Value")
    yield table_row(["Clusters", names])
    yield table_row(["Gaps open at", iso(query.at)])
    yield table_row(["Changes after", iso(query.since)])
    yield table_row(["Changes up to and including", iso(query.until)])
    yield table_row(["Generated", iso(timezone.now().replace(microsecond=0))])
    yield "\n"


def _summary(query: HistoryQuery) -> Iterator[str]:
    by_severity = query.open_by_severity()
    counts = change_counts(query.clusters, query.since, query.until)
    detail = ", ".join(f"{n} {severity}" for severity, n in by_severity.items() if n) or "none"
    yield "## Summary\n\n"
    yield f"- **{sum(by_severity.values())} gaps were open** at {iso(query.at)}: {detail}.\n"
    yield (
        f"- In the window: {counts.opened} opened, {counts.regressed} regressed (came back after a fix), "
        f"{counts.closed} closed.\n\n"
    )


def _object(finding: Finding, many: bool) -> str:
    where = md_text(finding.object_ref)
    return f"{md_text(finding.cluster.name)}: {where}" if many else where


def _check(finding: Finding) -> str:
    definition = finding.definition
    title = f" {md_text(definition.title)}" if definition else " (retired check)"
    return md_code(finding.check_id) + title


def _open_table(query: HistoryQuery, cited: CitedChecks, many: bool) -> Iterator[str]:
    rows = findings_open_at(query.clusters, query.at).iterator(chunk_size=CHUNK_SIZE)
    empty = True
    for finding in rows:
        if empty:
            yield table_head("Severity", "Check", "Object", "Finding", "Open since", "Cases")
            empty = False
        cited.note(finding)
        since = iso(finding.opened_at) + (" (regression)" if finding.is_regression else "")
        yield table_row(
            [
                finding.severity,
                _check(finding),
                _object(finding, many),
                _finding_text(finding),
                since,
                ", ".join(finding.definition.cases) if finding.definition else "",
            ]
        )
    yield "No gap was open at that moment.\n\n" if empty else "\n"


def _changes_table(query: HistoryQuery, cited: CitedChecks, many: bool) -> Iterator[str]:
    empty = True
    for change in finding_changes(query.clusters, query.since, query.until):
        if empty:
            yield table_head("When", "Change", "Severity", "Check", "Object", "Finding")
            empty = False
        cited.note(change.finding)
        yield table_row(
            [
                iso(change.at),
                CHANGE_LABELS[change.kind],
                change.finding.severity,
                _check(change.finding),
                _object(change.finding, many),
                _finding_text(change.finding),
            ]
        )
    yield "Nothing opened, regressed or closed in the window.\n\n" if empty else "\n"


def _finding_text(finding: Finding) -> str:
    text = md_text(finding.message)
    if finding.ignored_by_annotation:
        text += " *(ignored by annotation: " + md_text(finding.ignore_reason or "no reason given") + ")*"
    return text


def _explanations(cited: CitedChecks) -> Iterator[str]:
    checks = cited.checks()
    if not checks and not cited.retired():
        yield "No gap to explain.\n"
        return
    cases = cited.cases()
    for chk in checks:
        yield from _check_section(chk, cases)
    for check_id in cited.retired():
        yield f"### {md_code(check_id)}\n\nThis check has been retired from the catalog.\n\n"


def _check_section(chk: Check, cases: dict[str, CitedCase]) -> Iterator[str]:
    yield f"### {md_code(chk.id)} {md_text(chk.title)}\n\n"
    yield f"Severity {chk.severity} · area {md_text(chk.area)}\n\n"
    yield f"**Why it matters.** {md_text(chk.why)}\n\n"
    yield f"**How to fix it.** {md_text(chk.fix)}\n\n"
    yield "**Incidents it cites:**\n\n"
    for case_id in chk.cases:
        yield "- " + _case_line(cases[case_id]) + "\n"
    yield "\n"


def _case_line(case: CitedCase) -> str:
    page = md_url(settings.KUBEGAP_BASE_URL + reverse("case", args=[case.id]))
    if not case.loaded:
        return f"{md_text(case.id)} (not in this installation's case library; load it with `manage.py load_cases`)"
    when = f", {md_text(case.date)}" if case.date else ""
    sources = "; ".join(f"[{md_text(s.title or s.url)}]({md_url(s.url)})" for s in case.sources)
    line = f"[{md_text(case.id)}]({page}) {md_text(case.title)} ({md_text(case.org)}{when})"
    return f"{line}. Reported in: {sources}" if sources else line
