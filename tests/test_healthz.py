from __future__ import annotations

from django.test import Client


def test_it_reports_database_and_broker_reachable(db: None, client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"ok": True, "database": {"ok": True}, "broker": {"ok": True}}


def test_it_answers_503_when_the_broker_is_down(db: None, client: Client, settings) -> None:
    from kubegap_web.celery import app

    original = app.conf.broker_url
    app.conf["broker_url"] = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/healthz")
    finally:
        app.conf["broker_url"] = original

    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
    assert response.json()["database"] == {"ok": True}
