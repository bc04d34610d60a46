"""/metrics: Prometheus text exposition 0.0.4 from runs' aggregates, behind METRICS_TOKEN."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from audits.models import AuditRun, Cluster, RunStatus
from tests.test_history import (
    DAY,
    T0,
    audit,
    gap,
    make_cluster,
)

TOKEN = "scrape-me-please"
# One sample line: name, optional {labels}, value.
SAMPLE = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$'
)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def unescape(value: str) -> str:
    return re.sub(r"\\([\\\"n])", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse_exposition(text: str) -> dict[str, Any]:
    """A strict reader of the text format: every line is HELP, TYPE or a sample of the family declared last."""
    families: dict[str, dict[str, Any]] = {}
    current = None
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# HELP "):
            current = line.split(" ", 3)[2]
            assert current not in families, f"{current} declared twice"
            families[current] = {"help": line.split(" ", 3)[3], "samples": []}
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name == current and kind == "gauge"
        else:
            match = SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, labels, value = match.groups()
            assert name == current, f"{name} outside its family"
            parsed = {k: unescape(v) for k, v in LABEL.findall(labels or "")}
            families[name]["samples"].append((parsed, float(value)))
    return families


def samples(families: dict[str, Any], name: str, **where: str) -> list[tuple[dict[str, str], float]]:
    return [(labels, v) for labels, v in families[name]["samples"] if where.items() <= labels.items()]


def scrape(client: Client, token: str | None = TOKEN) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.get("/metrics", headers=headers)


@pytest.fixture
def metrics_on(settings: Any) -> None:
    settings.METRICS_TOKEN = TOKEN


@pytest.fixture
def cluster(team: Group) -> Cluster:
    c = make_cluster(team)
    audit(c, T0, gap("api"))
    audit(c, T0 + DAY, gap("api"), gap("web"), gap("db", "KG-RES-001"), gap("dns", "KG-DNS-001"))
    return c


def test_without_metrics_token_the_endpoint_does_not_exist(client: Client, cluster: Cluster, settings: Any) -> None:
    settings.METRICS_TOKEN = ""

    assert scrape(client).status_code == 404


@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_a_missing_or_wrong_token_gets_a_401(client: Client, metrics_on: None, token: str | None) -> None:
    response = scrape(client, token)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="kubegap-metrics"'


def test_open_findings_come_from_the_newest_run_s_aggregates_by_severity_and_check(
    client: Client, metrics_on: None, cluster: Cluster
) -> None:
    response = scrape(client)

    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    families = parse_exposition(response.content.decode())
    assert sorted((s["check"], s["severity"], v) for s, v in samples(families, "kubegap_open_findings")) == [
        ("KG-DIS-001", "high", 2.0),
        ("KG-DNS-001", "critical", 1.0),
        ("KG-RES-001", "medium", 1.0),
    ]
    assert {s["cluster"] for s, _ in samples(families, "kubegap_open_findings")} == {"payments-prod"}
    assert samples(families, "kubegap_cluster_info") == [
        ({"cluster": "payments-prod", "name": "payments-prod", "team": "payments"}, 1.0)
    ]


def test_the_numbers_are_the_run_s_aggregates_not_a_count_of_findings(
    client: Client, metrics_on: None, cluster: Cluster
) -> None:
    """A suppressed finding is in the findings table but not in the run's aggregates; the aggregates win."""
    newest = AuditRun.objects.filter(cluster=cluster).order_by("-captured_at").first()
    assert newest is not None
    newest.open_by_check = {"KG-DIS-001": 1}
    newest.open_by_severity = {"high": 1}
    newest.save()

    families = parse_exposition(scrape(client).content.decode())

    assert [(s["check"], v) for s, v in samples(families, "kubegap_open_findings")] == [("KG-DIS-001", 1.0)]
    assert samples(families, "kubegap_open_findings_by_severity") == [
        ({"cluster": "payments-prod", "severity": "high"}, 1.0)
    ]


def test_last_run_status_is_one_hot_with_its_time_and_duration(
    client: Client, metrics_on: None, cluster: Cluster
) -> None:
    failed = audit(cluster, T0 + 2 * DAY, status=RunStatus.FAILED)

    families = parse_exposition(scrape(client).content.decode())

    assert sorted((s["status"], v) for s, v in samples(families, "kubegap_last_run_status")) == [
        ("failed", 1.0),
        ("partial", 0.0),
        ("succeeded", 0.0),
    ]
    assert failed.finished_at is not None
    assert samples(families, "kubegap_last_run_timestamp_seconds") == [
        ({"cluster": "payments-prod"}, failed.finished_at.timestamp())
    ]
    assert samples(families, "kubegap_last_run_duration_seconds") == [({"cluster": "payments-prod"}, 42.0)]
    # A failed run has no findings: open findings still come from the run that evaluated the cluster.
    assert sum(v for _, v in samples(families, "kubegap_open_findings")) == 4
    assert samples(families, "kubegap_last_evaluated_run_timestamp_seconds") == [
        ({"cluster": "payments-prod"}, (T0 + DAY).timestamp())
    ]


def test_hostile_names_are_escaped_as_label_values(client: Client, metrics_on: None, team: Group) -> None:
    hostile = 'prod"} 1\nkubegap_fake{x="\\'
    team.name = "a\\b"
    team.save()
    c = Cluster.objects.create(team=team, name=hostile, slug="evil", source_kind="snapshot")
    audit(c, T0, gap("api"))

    text = scrape(client).content.decode()
    families = parse_exposition(text)

    assert "kubegap_fake" not in families
    assert samples(families, "kubegap_cluster_info") == [({"cluster": "evil", "name": hostile, "team": "a\\b"}, 1.0)]
    assert 'name="prod\\"} 1\\nkubegap_fake{x=\\"\\\\"' in text


def test_a_cluster_never_audited_has_only_its_info(client: Client, metrics_on: None, team: Group) -> None:
    make_cluster(team, "fresh")

    families = parse_exposition(scrape(client).content.decode())

    assert [s["cluster"] for s, _ in samples(families, "kubegap_cluster_info")] == ["fresh"]
    assert families["kubegap_open_findings"]["samples"] == []


def test_a_scrape_costs_the_same_few_queries_however_many_clusters(
    client: Client, metrics_on: None, team: Group
) -> None:
    for i in range(5):
        audit(make_cluster(team, f"c{i}"), T0, gap("api"))

    with CaptureQueriesContext(connection) as queries:
        assert scrape(client).status_code == 200

    assert len(queries) == 2
