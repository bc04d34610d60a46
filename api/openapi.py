"""The OpenAPI 3.1 description of the API, served at /api/openapi.json.

Written by hand beside the views it describes; tests validate every
endpoint's real responses against these schemas, so the two cannot drift.
"""

from __future__ import annotations

from typing import Any

from audits.models import RunStatus, RunTrigger, SourceKind
from audits.severity import Severity

TIMESTAMP = {"type": "string", "format": "date-time", "description": "UTC, ISO 8601 with Z."}
NULLABLE_TIMESTAMP = {"type": ["string", "null"], "format": "date-time"}
SEVERITY = {"type": "string", "enum": list(Severity.values)}
COUNTS = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _object(properties: dict[str, Any], description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if description:
        schema["description"] = description
    return schema


def _page(item: str) -> dict[str, Any]:
    return _object(
        {
            "results": {"type": "array", "items": _ref(item)},
            "next": {
                "type": ["string", "null"],
                "format": "uri",
                "description": "The next page, with every filter kept; null on the last page.",
            },
        }
    )


SCHEMAS: dict[str, Any] = {
    "Error": _object(
        {
            "error": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "examples": ["unauthorized", "bad_parameter", "not_found"]},
                    "message": {"type": "string", "description": "What is wrong and how to fix it."},
                    "parameter": {"type": "string", "description": "The query parameter at fault, if one is."},
                },
                "required": ["code", "message"],
                "additionalProperties": False,
            }
        }
    ),
    "Run": _object(
        {
            "id": {"type": "integer"},
            "cluster": {"type": "string", "description": "The cluster's slug."},
            "trigger": {"type": "string", "enum": list(RunTrigger.values)},
            "status": {"type": "string", "enum": list(RunStatus.values)},
            "scheduled_for": NULLABLE_TIMESTAMP,
            "created_at": TIMESTAMP,
            "started_at": NULLABLE_TIMESTAMP,
            "finished_at": NULLABLE_TIMESTAMP,
            "captured_at": {**NULLABLE_TIMESTAMP, "description": "When the cluster data was captured."},
            "duration_seconds": {"type": ["number", "null"]},
            "error": {"type": "string"},
            "server_version": {"type": "string"},
            "findings_open": {"type": "integer", "minimum": 0, "description": "Counted: not ignored, not suppressed."},
            "open_by_severity": COUNTS,
            "open_by_check": COUNTS,
            "score": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
            "new_count": {"type": "integer", "minimum": 0},
            "resolved_count": {"type": "integer", "minimum": 0},
            "regressed_count": {"type": "integer", "minimum": 0},
            "not_collected": {"type": "object", "additionalProperties": {}},
            "not_evaluated": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "One audit of one cluster, with the aggregates of its open findings.",
    ),
    "Cluster": _object(
        {
            "slug": {"type": "string"},
            "name": {"type": "string"},
            "team": {"type": "string"},
            "description": {"type": "string"},
            "source_kind": {"type": "string", "enum": list(SourceKind.values)},
            "schedule": _object(
                {
                    "cron": {"type": "string"},
                    "timezone": {"type": "string"},
                    "enabled": {"type": "boolean"},
                    "next_audit_at": NULLABLE_TIMESTAMP,
                }
            ),
            "last_run": {"oneOf": [_ref("Run"), {"type": "null"}], "description": "The newest finished run."},
        }
    ),
    "Finding": _object(
        {
            "id": {"type": "integer"},
            "cluster": {"type": "string", "description": "The cluster's slug."},
            "fingerprint": {"type": "string", "description": "Identifies the gap across runs and intervals."},
            "check_id": {"type": "string", "pattern": "^KG-[A-Z]+-[0-9]{3}$"},
            "check_title": {"type": "string", "description": "Empty for a check since retired."},
            "severity": SEVERITY,
            "object": _object(
                {"kind": {"type": "string"}, "namespace": {"type": "string"}, "name": {"type": "string"}}
            ),
            "detail": {"type": "string"},
            "message": {"type": "string"},
            "evidence": {"type": "object", "description": "The object's fields that prove the finding."},
            "ignored_by_annotation": {"type": "boolean"},
            "ignore_reason": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "closed"], "description": "The interval's state now."},
            "opened_at": TIMESTAMP,
            "closed_at": NULLABLE_TIMESTAMP,
            "last_seen_at": TIMESTAMP,
            "opened_by_run": {"type": ["integer", "null"]},
            "closed_by_run": {"type": ["integer", "null"]},
            "last_seen_run": {"type": ["integer", "null"]},
            "is_regression": {"type": "boolean", "description": "The gap had been closed before and came back."},
            "cases": {"type": "array", "items": {"type": "string"}, "description": "Ids of the cases the check cites."},
        },
        "One interval [opened_at, closed_at) during which a gap was present.",
    ),
    "Case": _object(
        {
            "id": {"type": "string"},
            "org": {"type": "string"},
            "date": {"type": "string", "description": "As precise as the report: 2019, 2019-06 or 2019-06-11."},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "trigger": {"type": "string"},
            "root_cause": {"type": "string"},
            "remediation": {"type": "string"},
            "lessons": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "sources": {
                "type": "array",
                "items": _object(
                    {
                        "url": {"type": "string", "format": "uri"},
                        "title": {"type": "string"},
                        "primary": {"type": "boolean"},
                    }
                ),
            },
            "cited_by": {"type": "array", "items": {"type": "string"}, "description": "Ids of the checks citing it."},
        },
        "A public incident report that checks cite.",
    ),
    "ClusterPage": _page("Cluster"),
    "RunPage": _page("Run"),
    "FindingPage": _page("Finding"),
    "CasePage": _page("Case"),
}


def _parameter(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


PAGE_PARAMS = [
    _parameter("limit", "Results per page (default 100).", {"type": "integer", "minimum": 1, "maximum": 500}),
    _parameter("cursor", "Opaque; taken from the previous page's `next` link.", {"type": "string"}),
]
CLUSTER_PARAM = _parameter(
    "cluster", "Only this cluster (its slug); 404 if no visible cluster has it.", {"type": "string"}
)


def _list(summary: str, page: str, parameters: list[dict[str, Any]], *, with_cluster: bool) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {"description": "One page of results.", "content": {"application/json": {"schema": _ref(page)}}},
        "400": _error("A query parameter is unknown or has a bad value; the error names it."),
        "401": _error("The bearer token is missing, malformed, unknown or revoked."),
    }
    if with_cluster:
        responses["404"] = _error("The `cluster` filter names no cluster visible to the token.")
    return {"get": {"summary": summary, "parameters": parameters + PAGE_PARAMS, "responses": responses}}


SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
    "info": {
        "title": "kubegap-web API",
        "version": "1.0.0",
        "description": (
            "Read-only access to the clusters, audit runs, finding intervals and incident cases a user may see. "
            "Authenticate with `Authorization: Bearer <token>`; create tokens in the admin or with "
            "`python manage.py api_token --user NAME`. Lists are paginated by cursor: follow `next` until null. "
            "Timestamps are UTC ISO 8601; a timestamp parameter without an offset is taken as UTC."
        ),
    },
    "servers": [{"url": "/"}],
    "security": [{"bearer": []}],
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "An API token."}},
        "schemas": SCHEMAS,
    },
    "paths": {
        "/api/clusters": _list("Clusters visible to the token, by id.", "ClusterPage", [], with_cluster=False),
        "/api/runs": _list(
            "Audit runs, newest first.",
            "RunPage",
            [
                CLUSTER_PARAM,
                _parameter(
                    "status",
                    "Only runs in these states (comma-separated).",
                    {"type": "string", "examples": ["succeeded,partial"]},
                ),
            ],
            with_cluster=True,
        ),
        "/api/findings": _list(
            "Finding intervals, by id.",
            "FindingPage",
            [
                CLUSTER_PARAM,
                _parameter(
                    "status",
                    "open (default): open now; closed; all. Cannot be combined with open_at.",
                    {"type": "string", "enum": ["open", "closed", "all"]},
                ),
                _parameter(
                    "open_at",
                    "Only intervals open at this moment: opened_at <= T and (closed_at is null or closed_at > T).",
                    {"type": "string", "format": "date-time"},
                ),
                _parameter(
                    "severity",
                    "Only these severities (comma-separated).",
                    {"type": "string", "examples": ["critical,high"]},
                ),
                _parameter(
                    "check", "Only these check ids (comma-separated).", {"type": "string", "examples": ["KG-DIS-001"]}
                ),
                _parameter("namespace", "Only objects in this namespace (exact).", {"type": "string"}),
            ],
            with_cluster=True,
        ),
        "/api/cases": _list("The incident case library, by id.", "CasePage", [], with_cluster=False),
        "/api/openapi.json": {
            "get": {
                "summary": "This description.",
                "security": [],
                "responses": {"200": {"description": "The OpenAPI 3.1 document.", "content": {"application/json": {}}}},
            }
        },
    },
}
