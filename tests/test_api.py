"""The read-only JSON API: bearer tokens, what each token may see, filters and pages."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from api.models import ApiToken
from api.tokens import api_token_create, api_token_revoke, token_digest
from audits.models import AuditRun, Cluster
from cases.loader import load_cases
from tests.test_history import (
    DAY,
    T0,
    audit,
    gap,
    make_cluster,
)


def token_for(user: User) -> str:
    return api_token_create(user=user, name="test")[1]


def api(client: Client, path: str, token: str | None, **params: Any) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = client.get(path, params, headers=headers)
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


@pytest.fixture
def history(team: Group) -> Cluster:
    """payments-prod with three audits: gaps in two namespaces and severities, one fixed."""
    cluster = make_cluster(team)
    audit(cluster, T0, gap("api"), gap("web"), gap("db", "KG-RES-001", namespace="data"))
    audit(cluster, T0 + DAY, gap("api"), gap("db", "KG-RES-001", namespace="data"))
    audit(cluster, T0 + 2 * DAY, gap("api"), gap("db", "KG-RES-001", namespace="data"), gap("dns", "KG-DNS-001"))
    return cluster


# Authentication


def test_a_request_without_a_token_gets_a_401_that_says_how_to_get_one(client: Client, history: Cluster) -> None:
    response = client.get("/api/clusters")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="kubegap"'
    assert response.json() == {
        "error": {
            "code": "unauthorized",
            "message": "Missing Authorization header: send 'Authorization: Bearer <token>'; create one in the admin "
            "(API tokens) or with: python manage.py api_token --user NAME.",
        }
    }


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("Basic dXNlcjpwYXNz", "The Authorization header must be 'Bearer <token>'."),
        ("Bearer", "The Authorization header must be 'Bearer <token>'."),
        ("Bearer kgp_not-a-token", "The token is not valid: unknown, revoked, or its user is inactive."),
    ],
)
def test_a_malformed_or_unknown_token_gets_a_401(client: Client, history: Cluster, header: str, message: str) -> None:
    response = client.get("/api/clusters", headers={"Authorization": header})

    assert (response.status_code, response.json()["error"]["message"]) == (401, message)


def test_a_revoked_token_or_one_of_an_inactive_user_is_refused(client: Client, owner: User, history: Cluster) -> None:
    record, token = api_token_create(user=owner, name="ci")
    assert api(client, "/api/clusters", token)[0] == 200

    api_token_revoke(token=record)
    assert api(client, "/api/clusters", token)[0] == 401

    live = token_for(owner)
    owner.is_active = False
    owner.save()
    assert api(client, "/api/clusters", live)[0] == 401


def test_only_a_hash_of_the_token_is_stored(owner: User) -> None:
    record, token = api_token_create(user=owner, name="ci")

    stored = ApiToken.objects.filter(pk=record.pk).values().get()
    assert token not in {str(v) for v in stored.values()}
    assert stored["digest"] == token_digest(token) and token.startswith(stored["prefix"])


def test_a_session_login_is_not_a_token(client: Client, owner: User, history: Cluster) -> None:
    client.force_login(owner)

    assert client.get("/api/clusters").status_code == 401


def test_the_api_is_read_only(client: Client, owner: User) -> None:
    response = client.post("/api/clusters", headers={"Authorization": f"Bearer {token_for(owner)}"})

    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"


# What a token sees


def test_a_teammate_s_token_sees_the_team_s_clusters_with_their_last_run(
    client: Client, teammate: User, history: Cluster
) -> None:
    status, body = api(client, "/api/clusters", token_for(teammate))

    assert status == 200 and body["next"] is None
    [cluster] = body["results"]
    assert (cluster["slug"], cluster["team"]) == ("payments-prod", "payments")
    assert cluster["last_run"]["captured_at"] == "2025-09-03T02:00:00Z"
    assert cluster["last_run"]["open_by_check"] == {"KG-DIS-001": 1, "KG-RES-001": 1, "KG-DNS-001": 1}


def test_an_outsider_s_token_sees_nothing_of_the_team(client: Client, outsider: User, history: Cluster) -> None:
    token = token_for(outsider)

    assert api(client, "/api/clusters", token)[1]["results"] == []
    assert api(client, "/api/runs", token)[1]["results"] == []
    assert api(client, "/api/findings", token, status="all")[1]["results"] == []
    status, body = api(client, "/api/findings", token, cluster="payments-prod")
    assert (status, body["error"]["message"]) == (404, "No cluster with slug 'payments-prod' is visible to this token.")
    missing = api(client, "/api/findings", token, cluster="no-such-cluster")
    assert missing == (
        404,
        {"error": {**body["error"], "message": body["error"]["message"].replace("payments-prod", "no-such-cluster")}},
    )


def test_a_superuser_s_token_sees_every_cluster(client: Client, history: Cluster) -> None:
    admin = User.objects.create_superuser("root", password="correct horse battery")
    make_cluster(Group.objects.create(name="other"), "other-prod")

    slugs = [c["slug"] for c in api(client, "/api/clusters", token_for(admin))[1]["results"]]

    assert slugs == ["payments-prod", "other-prod"]


# Findings and their filters


def objects(body: dict[str, Any]) -> list[str]:
    return sorted(f["object"]["name"] for f in body["results"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["api", "db", "dns"]),
        ({"status": "open"}, ["api", "db", "dns"]),
        ({"status": "closed"}, ["web"]),
        ({"status": "all"}, ["api", "db", "dns", "web"]),
        ({"severity": "critical,medium"}, ["db", "dns"]),
        ({"check": "KG-DIS-001", "status": "all"}, ["api", "web"]),
        ({"namespace": "data"}, ["db"]),
        ({"open_at": "2025-09-02T02:00:00Z"}, ["api", "db"]),
        ({"open_at": "2025-09-02T01:59:59Z"}, ["api", "db", "web"]),
        ({"open_at": "2025-09-01"}, []),
        ({"cluster": "payments-prod", "severity": "high"}, ["api"]),
    ],
)
def test_findings_can_be_filtered(
    client: Client, teammate: User, history: Cluster, params: dict[str, str], expected: list[str]
) -> None:
    status, body = api(client, "/api/findings", token_for(teammate), **params)

    assert (status, objects(body)) == (200, expected)


def test_a_finding_says_what_when_and_which_cases(client: Client, teammate: User, history: Cluster) -> None:
    [web] = api(client, "/api/findings", token_for(teammate), status="closed")[1]["results"]

    first, second = AuditRun.objects.filter(cluster=history).order_by("captured_at")[:2]
    assert web | {"id": None, "fingerprint": None} == {
        "id": None, "cluster": "payments-prod", "fingerprint": None, "check_id": "KG-DIS-001",
        "check_title": "Workload runs a single replica", "severity": "high",
        "object": {"kind": "Deployment", "namespace": "shop", "name": "web"}, "detail": "",
        "message": "web has one replica", "evidence": {"replicas": 1}, "ignored_by_annotation": False,
        "ignore_reason": "", "status": "closed", "opened_at": "2025-09-01T02:00:00Z",
        "closed_at": "2025-09-02T02:00:00Z", "last_seen_at": "2025-09-01T02:00:00Z", "opened_by_run": first.pk,
        "closed_by_run": second.pk, "last_seen_run": first.pk, "is_regression": False,
        "cases": ["KC-079", "KC-080", "KC-021", "KC-105"],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("params", "parameter", "message"),
    [
        (
            {"status": "gone"},
            "status",
            "status must be one or more of open, closed, all (comma-separated); got 'gone'.",
        ),
        ({"severity": "urgent"}, "severity", "severity must be one or more of critical, high, medium, low"),
        ({"check": "DIS-1"}, "check", "check must be one or more check ids such as KG-DIS-001"),
        ({"open_at": "yesterday"}, "open_at", "open_at: 'yesterday' is not a timestamp; expected ISO 8601 such as"),
        ({"open_at": "2025-09-01", "status": "open"}, "status", "status cannot be combined with open_at"),
        ({"limit": "0"}, "limit", "limit must be a whole number from 1 to 500; got '0'."),
        ({"limit": "many"}, "limit", "limit must be a whole number from 1 to 500; got 'many'."),
        ({"cursor": "bogus"}, "cursor", "cursor is not one this endpoint issued; follow the 'next' link as given."),
        ({"severty": "high"}, "severty", "Unknown query parameter 'severty'; this endpoint takes: check, cluster,"),
    ],
)
def test_a_bad_parameter_gets_a_400_naming_it(
    client: Client, teammate: User, history: Cluster, params: dict[str, str], parameter: str, message: str
) -> None:
    status, body = api(client, "/api/findings", token_for(teammate), **params)

    assert status == 400
    assert body["error"]["code"] == "bad_parameter" and body["error"]["parameter"] == parameter
    assert body["error"]["message"].startswith(message)


# Pages


def test_following_next_links_walks_every_finding_once(client: Client, teammate: User, team: Group) -> None:
    cluster = make_cluster(team)
    for day in range(4):
        audit(cluster, T0 + day * DAY, *(gap(f"app-{day}-{i}") for i in range(3)))
    token = token_for(teammate)
    seen: list[int] = []
    url: str | None = "/api/findings?status=all&limit=5"
    pages = 0

    while url:
        response = client.get(url, headers={"Authorization": f"Bearer {token}"})
        body = response.json()
        seen += [f["id"] for f in body["results"]]
        assert all(f["cluster"] == "payments-prod" for f in body["results"])
        url, pages = body["next"], pages + 1
        assert url is None or (url.startswith("http://testserver/api/findings?") and "status=all" in url)

    assert pages == 3 and len(seen) == 12
    assert seen == sorted(seen) == sorted(cluster.findings.values_list("pk", flat=True))


def test_runs_come_newest_first_and_filter_by_status(client: Client, teammate: User, history: Cluster) -> None:
    failed = AuditRun.objects.create(cluster=history, trigger="manual", status="failed", error="no access")
    token = token_for(teammate)

    newest_first = [r["id"] for r in api(client, "/api/runs", token, limit=2)[1]["results"]]
    only_failed = api(client, "/api/runs", token, status="failed", cluster="payments-prod")[1]["results"]

    assert newest_first == sorted(AuditRun.objects.values_list("pk", flat=True), reverse=True)[:2]
    assert [(r["id"], r["status"], r["error"]) for r in only_failed] == [(failed.pk, "failed", "no access")]


def test_cases_list_the_library_with_the_checks_that_cite_each(client: Client, teammate: User) -> None:
    load_cases()
    token = token_for(teammate)

    status, body = api(client, "/api/cases", token, limit=500)

    assert status == 200 and len(body["results"]) >= 70
    kc079 = next(c for c in body["results"] if c["id"] == "KC-079")
    assert "KG-DIS-001" in kc079["cited_by"]
    assert kc079["sources"][0]["url"].startswith("https://dev.to/")
    assert [c["id"] for c in body["results"]] == sorted(c["id"] for c in body["results"])


def test_a_token_s_last_use_is_recorded(client: Client, owner: User) -> None:
    record, token = api_token_create(user=owner, name="ci")

    api(client, "/api/clusters", token)

    record.refresh_from_db()
    assert record.last_used_at is not None and record.last_used_at > dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
