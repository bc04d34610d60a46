"""Notifications of regressions and new high findings, to a real HTTP endpoint and a real SMTP server."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from audits import services
from audits.demo import builders as b
from audits.models import (
    AuditRun,
    ChannelKind,
    Cluster,
    DeliveryStatus,
    NotificationChannel,
    NotificationDelivery,
    RunStatus,
)
from tests.conftest import CeleryProcess, spawn, wait_until
from tests.services import free_port, wait_for_port

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


class Receiver(BaseHTTPRequestHandler):
    """Records POSTs; /flaky fails the first time, as a webhook briefly down would."""

    received: list[tuple[str, dict]] = []
    failures_left = {"/flaky": 1}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.failures_left.get(self.path, 0) > 0:
            self.failures_left[self.path] -= 1
            self.send_response(503)
        else:
            self.received.append((self.path, body))
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.received, Receiver.failures_left = [], {"/flaky": 1}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def smtp_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """Python's debugging SMTP server: a real SMTP peer that prints every message it gets."""
    port, log = free_port(), tmp_path / "smtp.log"
    proc = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-u", "-m", "smtpd", "-n", "-c", "DebuggingServer", f"127.0.0.1:{port}"],
        stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    wait_for_port(port, 20, proc, log)
    yield port, log
    proc.terminate()
    proc.wait()


def hostile_snapshot(tmp_path: Path) -> Path:
    api = b.workload("Deployment", "api<!channel>", "shop", replicas=1, containers=[b.container("app", "shop/api:1")])
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(b.kube_list([b.node("n1"), api])))
    return path


def test_regressions_and_new_high_findings_reach_every_channel(
    tmp_path: Path, isolated_env: dict[str, str], processes: list[CeleryProcess], receiver: str, smtp_server
) -> None:
    smtp_port, smtp_log = smtp_server
    env = {**isolated_env, "EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(smtp_port), "NOTIFY_RETRY_BASE": "1",
           "NOTIFY_MAX_RETRIES": "2", "KUBEGAP_BASE_URL": "https://kubegap.example.com"}  # fmt: skip
    processes += [spawn("worker", tmp_path, **env), spawn("beat", tmp_path, **env)]
    team = Group.objects.create(name="shop")
    for name, kind, target in [
        ("hook", ChannelKind.WEBHOOK, f"{receiver}/hook"),
        ("slack", ChannelKind.SLACK, f"{receiver}/flaky"),
        ("mail", ChannelKind.EMAIL, "oncall@example.com"),
        ("dead", ChannelKind.WEBHOOK, f"http://127.0.0.1:{free_port()}/nobody-listens"),
    ]:
        NotificationChannel.objects.create(team=team, name=name, kind=kind, target=target)
    cluster = services.cluster_register_snapshot(team=team, name="shop-prod", snapshot_path=hostile_snapshot(tmp_path))
    Cluster.objects.filter(pk=cluster.pk).update(next_audit_at=timezone.now())

    run = wait_until(lambda: AuditRun.objects.filter(cluster=cluster, status=RunStatus.SUCCEEDED).first(), 60, "run")
    wait_until(
        lambda: not NotificationDelivery.objects.filter(run=run, status=DeliveryStatus.PENDING).exists(),
        60,
        "deliveries",
    )

    status = {d.channel.name: (d.status, d.attempts) for d in NotificationDelivery.objects.filter(run=run)}
    assert status == {
        "hook": (DeliveryStatus.SENT, 1),
        "slack": (DeliveryStatus.SENT, 2),
        "mail": (DeliveryStatus.SENT, 1),
        "dead": (DeliveryStatus.FAILED, 3),
    }
    assert "Connection refused" in NotificationDelivery.objects.get(run=run, channel__name="dead").last_error
    [(_, hook)] = [r for r in Receiver.received if r[0] == "/hook"]
    assert hook["cluster"] == "shop-prod"
    assert hook["url"] == "https://kubegap.example.com/clusters/shop-prod/"
    assert ("KG-DIS-001", "Deployment shop/api<!channel>") in [(c["check_id"], c["object_ref"]) for c in hook["new"]]
    assert {c["severity"] for c in hook["new"]} <= {"critical", "high"}
    assert hook["regressions"] == []
    [(_, slack)] = [r for r in Receiver.received if r[0] == "/flaky"]
    assert "api&lt;!channel&gt;" in slack["text"] and "<!channel>" not in slack["text"]
    mail = smtp_log.read_text()
    assert f"Subject: [kubegap] shop-prod: 0 regressed, {len(hook['new'])} new" in mail
    assert "To: oncall@example.com" in mail
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
