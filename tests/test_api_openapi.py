"""The OpenAPI 3.1 description at /api/openapi.json holds to what the endpoints really answer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import resolve
from jsonschema import Draft202012Validator

from api.openapi import SPEC
from api.tokens import api_token_create
from audits.models import AuditRun, Cluster
from cases.models import Case, Tag
from tests.test_history import (
    DAY,
    T0,
    audit,
    gap,
    make_cluster,
)

# Requests that produce every documented response of every path, with data
# that fills every field (a failed run with nulls, a closed finding, an ignored one).
REQUESTS: list[tuple[str, dict[str, str], bool, int]] = [
    ("/api/clusters", {}, True, 200),
    ("/api/clusters", {"limit": "1"}, True, 200),
    ("/api/clusters", {"limit": "x"}, True, 400),
    ("/api/clusters", {}, False, 401),
    ("/api/runs", {}, True, 200),
    ("/api/runs", {"cluster": "payments-prod", "status": "succeeded,failed", "limit": "1"}, True, 200),
    ("/api/runs", {"status": "done"}, True, 400),
    ("/api/runs", {"cluster": "elsewhere"}, True, 404),
    ("/api/runs", {}, False, 401),
    ("/api/findings", {"status": "all"}, True, 200),
    ("/api/findings", {"open_at": "2025-09-02T03:00:00Z", "severity": "high", "check": "KG-DIS-001"}, True, 200),
    ("/api/findings", {"namespace": "shop", "limit": "1", "cluster": "payments-prod"}, True, 200),
    ("/api/findings", {"open_at": "soon"}, True, 400),
    ("/api/findings", {"cluster": "elsewhere"}, True, 404),
    ("/api/findings", {}, False, 401),
    ("/api/cases", {"limit": "3"}, True, 200),
    ("/api/cases", {"cursor": "!!"}, True, 400),
    ("/api/cases", {}, False, 401),
    ("/api/openapi.json", {}, False, 200),
]


@pytest.fixture
def token(team: Group, teammate: User) -> str:
    case = Case.objects.create(
        id="KC-900", org="Example", date_label="2024-05", title="A drain takes a single replica down",
        summary="s", trigger="t", root_cause="r", remediation="m", lessons="l",
    )  # fmt: skip
    case.tags.add(Tag.objects.create(name="pdb"))
    case.sources.create(url="https://example.com/postmortem", title="Postmortem", primary=True)
    cluster = make_cluster(team)
    audit(cluster, T0, gap("api"), gap("web"))
    audit(cluster, T0 + DAY, gap("api"))
    AuditRun.objects.create(cluster=cluster, trigger="manual", status="failed", error="forbidden")
    cluster.findings.filter(object_name="api").update(ignored_by_annotation=True, ignore_reason="batch job")
    Cluster.objects.filter(pk=cluster.pk).update(next_audit_at=T0 + 2 * DAY)
    return api_token_create(user=teammate, name="schema")[1]


def schema_of(path: str, status: int) -> dict[str, Any]:
    response = SPEC["paths"][path]["get"]["responses"][str(status)]
    schema = response["content"]["application/json"].get("schema", {})
    # Resolve "#/components/..." against the document the schema lives in.
    return {**schema, "components": SPEC["components"]}


def test_the_description_is_served_as_openapi_3_1(client: Client) -> None:
    response = client.get("/api/openapi.json")

    assert response.status_code == 200 and response.json() == SPEC
    assert SPEC["openapi"] == "3.1.0"
    for schema in SPEC["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(("path", "params", "authenticated", "status"), REQUESTS)
def test_every_response_matches_its_schema(
    client: Client, token: str, path: str, params: dict[str, str], authenticated: bool, status: int
) -> None:
    headers = {"Authorization": f"Bearer {token}"} if authenticated else {}

    response = client.get(path, params, headers=headers)

    assert response.status_code == status
    assert str(status) in SPEC["paths"][path]["get"]["responses"], "an undocumented status"
    Draft202012Validator(schema_of(path, status)).validate(response.json())
    if path != "/api/openapi.json" and status == 200:
        assert response.json()["results"], "validated against real rows, not an empty page"


def test_every_documented_response_is_exercised() -> None:
    exercised = {(path, str(status)) for path, _, _, status in REQUESTS}

    documented = {(path, status) for path, item in SPEC["paths"].items() for status in item["get"]["responses"]}

    assert documented == exercised


def test_each_endpoint_takes_exactly_the_documented_parameters() -> None:
    for path, item in SPEC["paths"].items():
        view = resolve(path).func
        documented = {p["name"] for p in item["get"].get("parameters", [])}
        assert documented == set(getattr(view, "parameters", set())), path


def test_every_api_url_is_documented() -> None:
    from api.urls import urlpatterns

    served = {"/" + str(p.pattern) for p in urlpatterns if str(p.pattern).startswith("api/")}

    assert served == set(SPEC["paths"])
