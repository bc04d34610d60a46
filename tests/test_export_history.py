"""Findings history exports (CSV, JSON, Markdown) from the pages and the command line."""

from __future__ import annotations

import csv
import datetime as dt
import gc
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.http import StreamingHttpResponse
from django.test import Client

from audits.checks import CATALOG
from audits.exports.escaping import md_text
from audits.exports.history_export import ExportFormat, HistoryQuery, history_export
from audits.models import Cluster, Finding
from cases.loader import load_cases
from tests.test_history import (
    DAY,
    T0,
    NightlyYear,
    audit,
    gap,
    make_cluster,
    seeded,
)

HOSTILE = {
    "formula": '=HYPERLINK("http://evil")',
    "script": "<script>alert(1)</script>",
    "pipe": "| pipe |",
    "newline": "first\nsecond",
}
# When the history below happened: the moment of the incident, and the window before it.
INCIDENT = T0 + 3 * DAY + dt.timedelta(hours=5)
SINCE = T0 + dt.timedelta(hours=1)


@pytest.fixture
def cluster(team: Group) -> Cluster:
    """payments-prod: audited four nights; a gap fixed, one new, one back after a fix, hostile names throughout."""
    c = make_cluster(team)
    audit(c, T0, gap("api"), gap(HOSTILE["formula"], "KG-RES-001"), gap("cache"))
    audit(c, T0 + DAY, gap("api"), gap(HOSTILE["formula"], "KG-RES-001"))
    audit(
        c, T0 + 2 * DAY, gap("api"), gap(HOSTILE["formula"], "KG-RES-001"),
        gap(HOSTILE["script"], "KG-DNS-001", message="**bold** [link](http://evil) # heading"),
    )  # fmt: skip
    audit(
        c, T0 + 3 * DAY, gap("api"), gap(HOSTILE["formula"], "KG-RES-001"),
        gap(HOSTILE["script"], "KG-DNS-001", message="**bold** [link](http://evil) # heading"),
        gap("cache"), gap(HOSTILE["pipe"], message=HOSTILE["newline"]),
    )  # fmt: skip
    audit(c, T0 + 4 * DAY, gap("api"))  # after the incident: must not show
    return c


def export(client: Client, url: str, **params: str) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, response.content[:500]
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode()


def export_of(client: Client, fmt: str, slug: str = "payments-prod", at: dt.datetime = INCIDENT) -> str:
    return export(
        client, f"/clusters/{slug}/export/", since=SINCE.isoformat(), until=INCIDENT.isoformat(), at=at.isoformat(),
        format=fmt,
    )  # fmt: skip


# CSV


def test_the_csv_lists_the_gaps_open_at_the_moment_then_what_changed_before_it(
    client: Client, owner: User, cluster: Cluster
) -> None:
    client.force_login(owner)

    rows = list(csv.DictReader(io.StringIO(export_of(client, "csv"))))

    open_rows = [r for r in rows if r["record"] == "open_at"]
    assert sorted(r["object_name"] for r in open_rows) == sorted(
        ["api", "'" + HOSTILE["formula"], HOSTILE["script"], "cache", HOSTILE["pipe"]]
    )
    assert {r["at"] for r in open_rows} == {"2025-09-04T07:00:00Z"}
    changes = [(r["record"], r["at"], r["object_name"]) for r in rows if r["record"] != "open_at"]
    assert changes == [
        ("closed", "2025-09-02T02:00:00Z", "cache"),
        ("opened", "2025-09-03T02:00:00Z", HOSTILE["script"]),
        ("regressed", "2025-09-04T02:00:00Z", "cache"),
        ("opened", "2025-09-04T02:00:00Z", HOSTILE["pipe"]),
    ]
    pipe = next(r for r in open_rows if r["object_name"] == HOSTILE["pipe"])
    assert pipe["message"] == HOSTILE["newline"]
    assert (pipe["check_id"], pipe["severity"]) == ("KG-DIS-001", "high")
    assert pipe["cases"] == " ".join(CATALOG["KG-DIS-001"].cases)
    assert pipe["check_title"] == CATALOG["KG-DIS-001"].title
    # The interval as it stands now: it closed after the moment asked about.
    assert (pipe["opened_at"], pipe["closed_at"]) == ("2025-09-04T02:00:00Z", "2025-09-05T02:00:00Z")


@pytest.mark.parametrize("lead", ["=", "+", "-", "@", "\t", "\r"])
def test_a_csv_cell_a_spreadsheet_would_run_starts_with_an_apostrophe(
    client: Client, owner: User, team: Group, lead: str
) -> None:
    c = make_cluster(team)
    audit(c, T0, gap(lead + "cmd|' /C calc'!A0", message=lead + "1+1"))
    client.force_login(owner)

    [row] = list(csv.DictReader(io.StringIO(export_of(client, "csv"))))[:1]

    assert row["object_name"] == "'" + lead + "cmd|' /C calc'!A0"
    assert row["message"] == "'" + lead + "1+1"
    assert row["check_id"] == "KG-DIS-001"  # ordinary cells stay as they are


# JSON


def test_the_json_export_holds_the_open_gaps_the_changes_and_why_they_matter(
    client: Client, owner: User, cluster: Cluster
) -> None:
    load_cases()
    client.force_login(owner)

    doc = json.loads(export_of(client, "json"))

    assert (doc["since"], doc["until"], doc["at"]) == (
        "2025-09-01T03:00:00Z",
        "2025-09-04T07:00:00Z",
        "2025-09-04T07:00:00Z",
    )
    assert doc["summary"] == {
        "open_at": 5,
        "open_at_by_severity": {"critical": 1, "high": 3, "medium": 1, "low": 0},
        "opened": 2,
        "regressed": 1,
        "closed": 1,
    }
    assert [f["severity"] for f in doc["open_at"]] == ["critical", "high", "high", "high", "medium"]
    assert doc["open_at"][0]["object"] == {"kind": "Deployment", "namespace": "shop", "name": HOSTILE["script"]}
    assert [(c["change"], c["finding"]["object"]["name"]) for c in doc["changes"]] == [
        ("closed", "cache"),
        ("opened", HOSTILE["script"]),
        ("regressed", "cache"),
        ("opened", HOSTILE["pipe"]),
    ]
    assert set(doc["checks"]) == {"KG-DIS-001", "KG-DNS-001", "KG-RES-001"}
    assert doc["checks"]["KG-DIS-001"]["why"] and doc["checks"]["KG-DIS-001"]["fix"]
    assert doc["cases"]["KC-079"]["title"] == "GKE surge upgrade takes down two-replica deployments for 45 minutes"
    assert doc["cases"]["KC-079"]["sources"][0]["url"].startswith("https://dev.to/")


def test_an_export_of_a_moment_before_any_audit_is_empty_but_complete(
    client: Client, owner: User, cluster: Cluster
) -> None:
    client.force_login(owner)

    doc = json.loads(export_of(client, "json", at=T0 - DAY))

    assert (doc["open_at"], doc["summary"]["open_at"], len(doc["changes"])) == ([], 0, 4)


# Markdown


def md_cells(line: str) -> list[str]:
    """A Markdown table row split on unescaped pipes, with backslash escapes undone."""
    cells, cell, escaped = [], "", False
    for ch in line.strip()[1:-1]:
        if escaped:
            cell, escaped = cell + ch, False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += ch
    return [*cells, cell.strip()]


def md_tables(report: str) -> dict[str, list[dict[str, str]]]:
    """Each `## ` section's table as a list of rows keyed by the header's cells."""
    tables: dict[str, list[dict[str, str]]] = {"": []}
    section, header = "", None
    for line in report.splitlines():
        if line.startswith("## "):
            section, header = line[3:], None
            tables[section] = []
        elif line.startswith("|") and header is None:
            header = md_cells(line)
        elif line.startswith("|") and not set(line) <= set("|- "):
            tables[section].append(dict(zip(header or [], md_cells(line), strict=True)))
    return tables


@pytest.mark.parametrize("text", [*HOSTILE.values(), "a\\|b", "# h", "1. item", "- item", "&lt; &amp;", "`code`"])
def test_a_markdown_cell_reads_back_as_the_text_it_escapes(text: str) -> None:
    line = "| " + md_text(text) + " | x |"

    assert md_cells(line) == [text.replace("\n", " "), "x"]
    assert "\n" not in md_text(text)


def test_the_markdown_report_tables_read_back_exactly(client: Client, owner: User, cluster: Cluster) -> None:
    load_cases()
    client.force_login(owner)

    report = export_of(client, "markdown")
    tables = md_tables(report)

    assert report.startswith("# Reliability gaps of payments-prod at 2025-09-04T07:00:00Z\n")
    opened = tables["Gaps open at 2025-09-04T07:00:00Z"]
    assert [r["Object"] for r in opened] == [
        f"Deployment shop/{HOSTILE['script']}",
        "Deployment shop/api",
        "Deployment shop/cache",
        f"Deployment shop/{HOSTILE['pipe']}",
        f"Deployment shop/{HOSTILE['formula']}",
    ]
    assert opened[0]["Finding"] == "**bold** [link](http://evil) # heading"
    assert opened[2]["Open since"] == "2025-09-04T02:00:00Z (regression)"
    assert opened[3]["Finding"] == "first second"
    changes = tables["What changed from 2025-09-01T03:00:00Z to 2025-09-04T07:00:00Z"]
    assert [(r["When"], r["Change"], r["Object"]) for r in changes] == [
        ("2025-09-02T02:00:00Z", "closed (fixed or gone)", "Deployment shop/cache"),
        ("2025-09-03T02:00:00Z", "opened", f"Deployment shop/{HOSTILE['script']}"),
        ("2025-09-04T02:00:00Z", "regressed (came back)", "Deployment shop/cache"),
        ("2025-09-04T02:00:00Z", "opened", f"Deployment shop/{HOSTILE['pipe']}"),
    ]
    summary = report.split("## Summary\n\n")[1].split("\n\n")[0]
    assert summary == (
        "- **5 gaps were open** at 2025-09-04T07:00:00Z: 1 critical, 3 high, 1 medium.\n"
        "- In the window: 2 opened, 1 regressed (came back after a fix), 1 closed."
    )


def test_the_markdown_report_never_lets_cluster_text_become_markup(
    client: Client, owner: User, cluster: Cluster
) -> None:
    client.force_login(owner)

    report = export_of(client, "markdown")

    assert "<script>" not in report and "\\<script\\>alert(1)\\</script\\>" in report
    assert "[link](http" not in report and "\\[link\\](http://evil)" in report
    assert "**bold**" not in report
    assert "\\| pipe \\|" in report
    assert "first\nsecond" not in report


def test_the_markdown_report_explains_each_check_with_the_incidents_it_cites(
    client: Client, owner: User, cluster: Cluster
) -> None:
    load_cases()
    client.force_login(owner)

    report = export_of(client, "markdown")
    explanations = report.split("## Why these gaps matter\n\n")[1]

    assert [line.split(" ", 2)[1] for line in explanations.splitlines() if line.startswith("### ")] == [
        "`KG-DNS-001`",
        "`KG-DIS-001`",
        "`KG-RES-001`",
    ]
    assert "**Why it matters.** " in explanations and "**How to fix it.** " in explanations
    assert (
        "- [KC-079](http://127.0.0.1:8000/cases/KC-079/) GKE surge upgrade takes down two-replica deployments for "
        "45 minutes (dev.to author, 2026-04). Reported in: [The GKE upgrade that took down our production pods for "
        "45 minutes](https://dev.to/charlotte05478/the-gke-upgrade-that-took-down-our-production-pods-for-45-minutes-om9)"
    ) in explanations


# Pages and access


def test_the_export_page_is_a_plain_form_with_a_week_before_now_filled_in(
    client: Client, teammate: User, cluster: Cluster
) -> None:
    client.force_login(teammate)

    page = client.get("/clusters/payments-prod/export/").content.decode()

    assert '<form method="get"' in page
    for name in ("since", "until", "at", "format"):
        assert f'name="{name}"' in page
    assert '<option value="markdown" selected>Markdown postmortem report</option>' in page


def test_an_export_downloads_as_a_named_attachment(client: Client, teammate: User, cluster: Cluster) -> None:
    client.force_login(teammate)

    response = client.get(
        "/clusters/payments-prod/export/", {"since": "2025-09-01", "until": "2025-09-05", "format": "markdown"}
    )

    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="kubegap-payments-prod-20250905T000000Z.md"'


def test_an_outsider_gets_a_404_for_the_page_and_the_export(client: Client, outsider: User, cluster: Cluster) -> None:
    client.force_login(outsider)

    assert client.get("/clusters/payments-prod/export/").status_code == 404
    assert (
        client.get(
            "/clusters/payments-prod/export/", {"since": "2025-09-01", "until": "2025-09-05", "format": "csv"}
        ).status_code
        == 404
    )
    assert client.get(f"/teams/{cluster.team_id}/export/").status_code == 404


def test_anonymous_visitors_are_asked_to_log_in(client: Client, cluster: Cluster) -> None:
    response = client.get("/clusters/payments-prod/export/")

    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"since": "last week", "until": "2025-09-05"},
            "From: &#x27;last week&#x27; is not a timestamp; expected ISO 8601",
        ),
        (
            {"since": "2025-09-01", "until": "2025-09-05", "at": "14:51"},
            "Open at: &#x27;14:51&#x27; is not a timestamp",
        ),
        (
            {"since": "2025-09-05", "until": "2025-09-01"},
            "From (2025-09-05T00:00:00Z) must be before To (2025-09-01T00:00:00Z): the export covers the changes after",
        ),
        ({"until": "2025-09-01"}, "This field is required."),
    ],
)
def test_a_bad_form_is_answered_400_naming_the_field(
    client: Client, owner: User, cluster: Cluster, params: dict[str, str], message: str
) -> None:
    client.force_login(owner)

    response = client.get("/clusters/payments-prod/export/", {**params, "format": "csv"})

    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_team_export_covers_each_of_its_clusters_with_their_names(
    client: Client, teammate: User, cluster: Cluster, team: Group
) -> None:
    staging = make_cluster(team, "payments-staging")
    audit(staging, T0 + DAY, gap("api", message="staging api has one replica"))
    client.force_login(teammate)

    page = client.get(f"/teams/{team.pk}/export/").content.decode()
    report = export(
        client, f"/teams/{team.pk}/export/", since=SINCE.isoformat(), until=INCIDENT.isoformat(), format="markdown"
    )

    assert "Export the findings history of team payments" in page and "payments-staging" in page
    objects = [r["Object"] for r in md_tables(report)["Gaps open at 2025-09-04T07:00:00Z"]]
    assert "payments-staging: Deployment shop/api" in objects and "payments-prod: Deployment shop/api" in objects
    assert report.startswith("# Reliability gaps of team payments at ")


def test_hostile_cluster_and_team_names_are_escaped_in_the_page(client: Client, owner: User, team: Group) -> None:
    team.name = "<b>team</b>"
    team.save()
    Cluster.objects.create(team=team, name="<script>alert(1)</script>", slug="evil", source_kind="snapshot")
    client.force_login(owner)

    pages = (
        client.get("/clusters/evil/export/").content.decode() + client.get(f"/teams/{team.pk}/export/").content.decode()
    )

    assert "<script>alert(1)</script>" not in pages and "&lt;script&gt;alert(1)&lt;/script&gt;" in pages
    assert "<b>team</b>" not in pages


# Command line


def test_the_command_exports_a_cluster_to_standard_output(cluster: Cluster) -> None:
    out = io.StringIO()

    call_command(
        "export", "--cluster", "payments-prod", "--since", SINCE.isoformat(), "--until", INCIDENT.isoformat(),
        "--format", "json", stdout=out,
    )  # fmt: skip

    doc = json.loads(out.getvalue())
    assert doc["summary"]["open_at"] == 5 and doc["scope"] == "payments-prod"


def test_the_command_writes_a_team_report_to_a_file(cluster: Cluster, tmp_path: Path) -> None:
    target = tmp_path / "report.csv"

    call_command(
        "export", "--team", "payments", "--since", "2025-09-01", "--until", "2025-09-04T07:00Z",
        "--at", "2025-09-02T12:00:00+02:00", "--format", "csv", "-o", str(target),
    )  # fmt: skip

    rows = list(csv.DictReader(target.open(newline="")))
    assert sorted(r["object_name"] for r in rows if r["record"] == "open_at") == ["'" + HOSTILE["formula"], "api"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--cluster", "payments-prod", "--since", "yesterday"],
            "--since: 'yesterday' is not a timestamp; expected ISO 8601",
        ),
        (["--cluster", "nope", "--since", "2025-09-01"], "--cluster: no cluster with slug 'nope'."),
        (["--team", "nope", "--since", "2025-09-01"], "--team: no team named 'nope'."),
        (["--cluster", "payments-prod", "--since", "2025-09-09"], "since (2025-09-09T00:00:00Z) must be before until"),
    ],
)
def test_the_command_names_what_to_fix(cluster: Cluster, args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as caught:
        call_command("export", *args, "--until", "2025-09-05")

    assert str(caught.value).startswith(message)


# A year of history


def test_the_export_of_a_year_is_exact_at_any_moment(client: Client, owner: User, team: Group) -> None:
    history = NightlyYear()
    history.bulk_create(make_cluster(team))
    client.force_login(owner)
    rng = seeded(5)

    for moment in history.random_moments(rng, 10)[-20:]:
        rows = csv.DictReader(io.StringIO(export_of(client, "csv", at=moment)))
        assert sorted(r["object_name"] for r in rows if r["record"] == "open_at") == history.open_at(moment)

    doc = json.loads(
        export(client, "/clusters/payments-prod/export/", since=history.times[0].isoformat(),
               until=history.times[-1].isoformat(), format="json")
    )  # fmt: skip
    expected = history.changes(history.times[0], history.times[-1])
    assert doc["summary"] | {"open_at_by_severity": None} == {
        "open_at": len(history.sets[-1]),
        "open_at_by_severity": None,
        "opened": expected["opened"],
        "regressed": expected["regressed"],
        "closed": expected["closed"],
    }
    assert len(doc["changes"]) == expected.total() > 700


def bulk_intervals(cluster: Cluster, count: int) -> None:
    """`count` intervals opening a minute apart, every other one closed five minutes later."""
    Finding.objects.bulk_create(
        Finding(
            cluster=cluster, fingerprint=f"{cluster.pk}-{i}", check_id="KG-DIS-001", severity="high",
            object_kind="Deployment", object_namespace="shop", object_name=f"app-{i}", message="m" * 200,
            evidence={"replicas": 1}, opened_at=T0 + i * dt.timedelta(minutes=1), last_seen_at=T0,
            closed_at=T0 + (i + 5) * dt.timedelta(minutes=1) if i % 2 else None,
        )
        for i in range(count)
    )  # fmt: skip


def peak_memory_of_export(cluster: Cluster, fmt: ExportFormat) -> tuple[int, int]:
    """(characters written, peak bytes allocated) while streaming the export of the cluster's history."""
    query = HistoryQuery.build(
        scope=cluster.name, clusters=Cluster.objects.filter(pk=cluster.pk), since=T0, until=T0 + 30 * DAY
    )
    gc.collect()
    tracemalloc.start()
    try:
        size = sum(len(chunk) for chunk in history_export(query, fmt))
        return size, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", list(ExportFormat))
def test_an_export_streams_in_memory_that_does_not_grow_with_the_history(team: Group, fmt: ExportFormat) -> None:
    small, large = make_cluster(team, "small"), make_cluster(team, "large")
    bulk_intervals(small, 800)
    bulk_intervals(large, 2400)

    small_size, small_peak = peak_memory_of_export(small, fmt)
    large_size, large_peak = peak_memory_of_export(large, fmt)

    assert large_size > 2.9 * small_size
    # Rows are read CHUNK_SIZE at a time and written as they come: three times the
    # history, about the same memory (the margin absorbs when the cyclic collector runs).
    assert large_peak < 1.6 * small_peak
