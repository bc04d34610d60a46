from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from audits.models import AuditRun, Membership, Role
from tests.kube_cluster import KubeAdmin, seed_realistic_cluster
from tests.kubeapi.server import KubeAPIServer
from tests.services import servers

ROOT = Path(__file__).resolve().parent.parent


class Worker:
    """A real Celery worker process on the test Redis and the test database."""

    def __init__(self, log: Path, env: dict[str, str]) -> None:
        self.log, self.env = log, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "kubegap_web",
                "worker",
                "--pool=prefork",
                "--concurrency=1",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while b" ready." not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def worker(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """Starts once per session, after the test database exists, and points at it."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": servers()["redis"].url,
    }
    w = Worker(tmp_path_factory.mktemp("worker") / "worker.log", env)
    w.start()
    yield w
    w.stop()


def wait_for_run(run_id: int, timeout: float = 90) -> AuditRun:
    """Poll until the run has finished; the timeout only guards against a hung test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = AuditRun.objects.get(pk=run_id)
        if not run.is_active:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {AuditRun.objects.get(pk=run_id).status} after {timeout}s")


@pytest.fixture
def team(db: None) -> Group:
    return Group.objects.create(name="payments")


def _member(team: Group, username: str, role: Role) -> User:
    user = User.objects.create_user(username=username, password="correct horse battery")
    Membership.objects.create(user=user, team=team, role=role)
    return user


@pytest.fixture
def owner(team: Group) -> User:
    """Administers the payments team."""
    return _member(team, "olivia", Role.ADMIN)


@pytest.fixture
def teammate(team: Group) -> User:
    """Views the payments team's clusters."""
    return _member(team, "tariq", Role.VIEWER)


@pytest.fixture
def outsider(db: None) -> User:
    """Belongs to another team and must see nothing of payments."""
    other = Group.objects.create(name="search-team")
    return _member(other, "oscar", Role.ADMIN)


@dataclass
class LiveCluster:
    """A real kube-apiserver seeded with a realistic cluster, readable by the
    read-only identity through the role in deploy/rbac.yaml."""

    server: KubeAPIServer
    admin: KubeAdmin
    seeded: dict[str, int]

    @property
    def readonly_kubeconfig_text(self) -> str:
        return self.server.readonly_kubeconfig.read_text()

    def reader_events(self) -> list[dict[str, Any]]:
        return [e for e in self.server.audit_events() if e.get("user", {}).get("username") == READONLY_USER]


READONLY_USER = "kubegap-reader"


def start_kube_api(data_dir: Path) -> KubeAPIServer:
    try:
        return KubeAPIServer.start(data_dir)
    except RuntimeError as exc:
        pytest.exit(f"the test kube-apiserver could not be built or started (needs Go; see README):\n{exc}", 3)


@pytest.fixture(scope="session")
def live_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    server = start_kube_api(tmp_path_factory.mktemp("kube-api"))
    try:
        admin = KubeAdmin(server.admin_kubeconfig)
        admin.apply_rbac(READONLY_USER)
        seeded = seed_realistic_cluster(admin)
        yield LiveCluster(server, admin, seeded)
    finally:
        server.stop()
