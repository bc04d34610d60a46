from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from django.contrib.auth.models import Group, User
from django.db import connection

from audits.models import AuditRun, Membership, Role
from tests.kube_cluster import KubeAdmin, seed_realistic_cluster
from tests.kubeapi.server import KubeAPIServer
from tests.services import servers

ROOT = Path(__file__).resolve().parent.parent


class CeleryProcess:
    """A real Celery worker or beat process on the test Redis and the test database."""

    READY = {"worker": b" ready.", "beat": b"beat: Starting"}

    def __init__(self, role: str, log: Path, env: dict[str, str], args: list[str]) -> None:
        self.role, self.log, self.env, self.args = role, log, env, args
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> CeleryProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "kubegap_web", self.role, "--loglevel=INFO", *self.args],
            cwd=ROOT, env=self.env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while self.READY[self.role] not in self.log.read_bytes():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"celery {self.role} did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """SIGKILL the process and its pool children, as a crash or OOM would."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


Worker = CeleryProcess


def process_env(**overrides: str) -> dict[str, str]:
    """The environment of a worker or beat process: the test database and Redis."""
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": servers()["redis"].url,
        **overrides,
    }


def spawn(role: str, tmp: Path, *args: str, **env: str) -> CeleryProcess:
    log = tmp / f"{role}-{time.monotonic_ns()}.log"
    if role == "beat":
        args = ("--schedule", str(tmp / f"beat-{time.monotonic_ns()}"), *args)
    else:
        args = (
            "--pool=prefork",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *args,
        )
    return CeleryProcess(role, log, process_env(**env), list(args)).start()


@pytest.fixture(scope="session")
def worker(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CeleryProcess]:
    """One worker for the session, started after the test database exists."""
    w = spawn("worker", tmp_path_factory.mktemp("worker"))
    yield w
    w.stop()


@pytest.fixture
def isolated_env() -> Iterator[dict[str, str]]:
    """Settings for worker and beat processes of one test, on their own Redis
    database so that no other worker in the session takes their tasks."""
    url = servers()["redis"].url.rsplit("/", 1)[0] + "/1"
    redis.Redis.from_url(url).flushdb()
    yield {"REDIS_URL": url, "DISPATCH_INTERVAL": "2", "RUN_STALE_AFTER": "6", "BROKER_VISIBILITY_TIMEOUT": "15"}


@pytest.fixture
def processes() -> Iterator[list[CeleryProcess]]:
    """Celery processes a test starts; stopped at its end."""
    started: list[CeleryProcess] = []
    yield started
    for proc in started:
        proc.stop()


def wait_until(condition: Callable[[], object], timeout: float, what: str) -> Any:
    """Poll until `condition` returns something truthy; the timeout only guards against a hang."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def snapshot_file(tmp_path: Path) -> Path:
    """A small kubectl List with known gaps: a single-replica Deployment and one without a PDB."""
    from audits.demo import builders as b

    objects = [
        b.node("n1"),
        b.workload("Deployment", "api", "shop", replicas=1, containers=[b.container("app", "shop/api:1")]),
        b.workload("Deployment", "web", "shop", replicas=3, containers=[b.container("app", "shop/web:1")]),
        b.pdb("other", "shop", {"app": "other"}),
    ]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(b.kube_list(objects)))
    return path


def wait_for_run(run_id: int, timeout: float = 90) -> AuditRun:
    """Poll until the run has finished; the timeout only guards against a hung test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = AuditRun.objects.get(pk=run_id)
        if not run.is_active:
            return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {AuditRun.objects.get(pk=run_id).status} after {timeout}s")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """Personas get passwords; the production hasher's deliberate slowness would only slow the tests."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
