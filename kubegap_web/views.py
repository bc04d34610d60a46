"""Operational endpoints."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, JsonResponse

from kubegap_web.celery import app as celery_app


def healthz(request: HttpRequest) -> JsonResponse:
    """Database and broker reachability, for load balancers and compose health checks."""
    checks: dict[str, dict[str, object]] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = {"ok": True}
    except Exception as exc:
        checks["database"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        checks["broker"] = {"ok": True}
    except Exception as exc:
        checks["broker"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    healthy = all(c["ok"] for c in checks.values())
    return JsonResponse({"ok": healthy, **checks}, status=200 if healthy else 503)
