"""The diff between two runs of a cluster: a page, and JSON and CSV exports."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.http import StreamingHttpResponse
from django.test import Client

from audits.models import AuditRun, Cluster, RunStatus
from tests.test_history import (
    DAY,
    T0,
    audit,
    gap,
    make_cluster,
)


@pytest.fixture
def cluster(team: Group) -> Cluster:
    return make_cluster(team)


@pytest.fixture
def runs(cluster: Cluster) -> tuple[AuditRun, AuditRun]:
    """Between `base` and `target`: one gap fixed, one new, one back after a fix, one kept."""
    audit(cluster, T0, gap("kept"), gap("fixed"), gap("<script>alert(1)</script>"))
    base = audit(cluster, T0 + DAY, gap("kept"), gap("fixed"))
    target = audit(cluster, T0 + 2 * DAY, gap("kept"), gap("<script>alert(1)</script>"), gap("new"))
    return base, target


def diff(client: Client, slug: str, params: dict[str, str | int]) -> Any:
    return client.get(f"/clusters/{slug}/diff/", params)


def streamed(response: Any) -> bytes:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content)  # type: ignore[arg-type]


class SectionTables(HTMLParser):
    """The object cells of each table on the page, by the id of the heading above it."""

    def __init__(self) -> None:
        super().__init__()
        self.objects: dict[str, list[str]] = {}
        self.section = ""
        self.column = -1
        self.cell: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h3":
            self.section = dict(attrs).get("id") or ""
            self.objects[self.section] = []
        elif tag == "tr":
            self.column = -1
        elif tag == "td":
            self.column += 1
            self.cell = "" if self.column == 2 else None

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.cell is not None:
            self.objects[self.section].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell += data


def test_the_page_groups_what_changed_between_the_two_runs(
    client: Client, teammate: User, runs: tuple[AuditRun, AuditRun]
) -> None:
    base, target = runs
    client.force_login(teammate)

    response = diff(client, "payments-prod", {"from": base.pk, "to": target.pk})

    page = response.content.decode()
    tables = SectionTables()
    tables.feed(page)
    assert tables.objects == {
        "regressed": ["Deployment shop/<script>alert(1)</script>"],
        "opened": ["Deployment shop/new"],
        "closed": ["Deployment shop/fixed"],
        "unchanged": ["Deployment shop/kept"],
    }
    assert "<script>alert(1)</script>" not in page
    assert f'href="?from={base.pk}&amp;to={target.pk}&amp;format=json"' in page


def test_the_page_offers_the_two_newest_runs_by_default(
    client: Client, teammate: User, runs: tuple[AuditRun, AuditRun]
) -> None:
    base, target = runs
    client.force_login(teammate)

    page = client.get("/clusters/payments-prod/diff/").content.decode()

    assert f'<option value="{base.pk}" selected>Run {base.pk}, captured 2025-09-02 02:00 UTC</option>' in page
    assert f'<option value="{target.pk}" selected>Run {target.pk}, captured 2025-09-03 02:00 UTC</option>' in page


def test_the_json_export_lists_each_gap_with_its_group(
    client: Client, owner: User, runs: tuple[AuditRun, AuditRun]
) -> None:
    base, target = runs
    client.force_login(owner)

    response = diff(client, "payments-prod", {"from": target.pk, "to": base.pk, "format": "json"})

    doc = json.loads(streamed(response))
    assert (doc["from_run"]["id"], doc["to_run"]["id"]) == (base.pk, target.pk)
    assert doc["summary"] == {"regressed": 1, "opened": 1, "closed": 1, "unchanged": 1}
    assert [(c["change"], c["finding"]["object"]["name"]) for c in doc["changes"]] == [
        ("regressed", "<script>alert(1)</script>"),
        ("opened", "new"),
        ("closed", "fixed"),
        ("unchanged", "kept"),
    ]
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="kubegap-payments-prod-diff-{base.pk}-{target.pk}.json"'
    )


def test_the_csv_export_lists_each_gap_with_its_group(
    client: Client, owner: User, runs: tuple[AuditRun, AuditRun]
) -> None:
    base, target = runs
    client.force_login(owner)

    response = diff(client, "payments-prod", {"from": base.pk, "to": target.pk, "format": "csv"})

    rows = list(csv.DictReader(io.StringIO(streamed(response).decode())))
    assert [(r["change"], r["object_name"], r["is_regression"]) for r in rows] == [
        ("regressed", "<script>alert(1)</script>", "true"),
        ("opened", "new", "false"),
        ("closed", "fixed", "false"),
        ("unchanged", "kept", "false"),
    ]


def test_a_failed_run_is_refused_with_the_reason(
    client: Client, owner: User, cluster: Cluster, runs: tuple[AuditRun, AuditRun]
) -> None:
    failed = audit(cluster, T0 + 3 * DAY, status=RunStatus.FAILED)
    client.force_login(owner)

    response = diff(client, "payments-prod", {"from": runs[0].pk, "to": failed.pk})

    assert response.status_code == 400
    assert f"to: run {failed.pk} is failed; only succeeded or partial runs have findings to compare." in (
        response.content.decode()
    )


def test_a_run_id_that_is_not_a_number_is_refused(client: Client, owner: User, runs: tuple[AuditRun, AuditRun]) -> None:
    client.force_login(owner)

    response = diff(client, "payments-prod", {"from": "latest", "to": runs[1].pk})

    assert response.status_code == 400 and "Enter a whole number." in response.content.decode()


def test_an_outsider_gets_a_404_for_the_page_and_the_exports(
    client: Client, outsider: User, runs: tuple[AuditRun, AuditRun]
) -> None:
    base, target = runs
    client.force_login(outsider)

    assert client.get("/clusters/payments-prod/diff/").status_code == 404
    assert diff(client, "payments-prod", {"from": base.pk, "to": target.pk, "format": "json"}).status_code == 404


def test_runs_of_another_cluster_cannot_be_compared_through_this_one(
    client: Client, outsider: User, team: Group, runs: tuple[AuditRun, AuditRun]
) -> None:
    """An outsider's own cluster cannot be used to read payments' runs by id."""
    mine = make_cluster(outsider.memberships.get().team, "search-prod")
    own = audit(mine, T0)
    client.force_login(outsider)

    response = diff(client, "search-prod", {"from": own.pk, "to": runs[1].pk, "format": "json"})

    assert response.status_code == 400
    assert f"run {runs[1].pk} is not a run of search-prod" in response.content.decode()
