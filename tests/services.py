"""Real PostgreSQL and Redis servers for the test session, started from the
installed server binaries in a temporary directory, with no shared state.

Loaded as a pytest plugin (`-p tests.services`) so the servers are up and the
environment points at them before pytest-django reads the settings.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest


class MissingPackage(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port} within {timeout}s:\n{log.read_text()[-2000:]}")


def _postgres_bin() -> Path:
    candidates = [os.environ.get("PG_BIN", "")]
    if found := shutil.which("pg_ctl"):
        candidates.append(str(Path(found).resolve().parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for candidate in candidates:
        if candidate and (Path(candidate) / "postgres").exists() and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise MissingPackage(
        "PostgreSQL server binaries (initdb, postgres) not found: install the Debian package 'postgresql'."
    )


def _server_user() -> str | None:
    """PostgreSQL refuses to run as root; as root, run it as an unprivileged user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise MissingPackage("running as root needs a 'postgres' or 'nobody' user to run PostgreSQL as.")


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    url: str
    args: Sequence[str] = ()
    user: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def start_again(self) -> None:
        """Start the stopped server on the same port with the same data."""
        self.proc = subprocess.Popen(self.args, stdout=self.log.open("ab"), stderr=subprocess.STDOUT, user=self.user)
        wait_for_port(self.port, 60, self.proc, self.log)


def start_postgres(base: Path) -> Server:
    bindir = _postgres_bin()
    user = _server_user()
    data, sock = base / "pgdata", base / "pgsock"
    for folder in (data, sock):
        folder.mkdir(parents=True)
        if user:
            shutil.chown(folder, user, user)
    log = base / "postgres.log"
    initdb = subprocess.run(
        [str(bindir / "initdb"), "-D", str(data), "-U", "kubegap", "--auth=trust", "-E", "UTF8", "--no-sync"],
        capture_output=True,
        text=True,
        user=user,
    )
    if initdb.returncode != 0:
        raise RuntimeError(f"initdb failed:\n{initdb.stdout}\n{initdb.stderr}")
    port = free_port()
    args: Sequence[str] = [
        str(bindir / "postgres"),
        "-D",
        str(data),
        "-p",
        str(port),
        "-k",
        str(sock),
        "-h",
        "127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "max_connections=200",
    ]
    proc = subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT, user=user)
    server = Server(proc, port, log, f"postgres://kubegap@127.0.0.1:{port}/kubegap", args, user)
    wait_for_port(port, 60, proc, log)
    # The server accepts connections a moment before it accepts logins.
    for _ in range(100):
        ready = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", "kubegap"], capture_output=True
        )
        if ready.returncode == 0:
            break
        time.sleep(0.1)
    subprocess.run(
        [
            str(bindir / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "kubegap",
            "-d",
            "postgres",
            "-c",
            "CREATE DATABASE kubegap",
        ],
        check=True,
        capture_output=True,
    )
    server.extra["bindir"] = str(bindir)
    return server


def start_redis(base: Path, port: int | None = None) -> Server:
    binary = os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise MissingPackage("redis-server not found: install the Debian package 'redis-server'.")
    port = port or free_port()
    folder = base / f"redis-{port}"
    folder.mkdir(parents=True, exist_ok=True)
    log = base / f"redis-{port}.log"
    args = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(folder),
        "--save",
        "",
        "--appendonly",
        "yes",
    ]
    proc = subprocess.Popen(args, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    server = Server(proc, port, log, f"redis://127.0.0.1:{port}/0", args)
    wait_for_port(port, 30, proc, log)
    return server


_SERVERS: dict[str, Server] = {}


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None]:
    """Start the servers and point the settings at them before Django loads."""
    base = Path(tempfile.mkdtemp(prefix="kubegap-test-"))
    base.chmod(0o755)  # the unprivileged server user must reach its folders
    try:
        _SERVERS["postgres"] = start_postgres(base)
        _SERVERS["redis"] = start_redis(base)
    except MissingPackage as exc:
        pytest.exit(str(exc), returncode=3)
    os.environ.update(
        {
            "DATABASE_URL": _SERVERS["postgres"].url,
            "REDIS_URL": _SERVERS["redis"].url,
            "SECRET_KEY": "test-only-secret-key-not-for-production",
            "KUBEGAP_VAR_DIR": str(base / "var"),
            "DB_CONN_MAX_AGE": "0",
        }
    )
    early_config.stash[_base_key] = base
    return (yield)


_base_key = pytest.StashKey[Path]()


def pytest_unconfigure(config: pytest.Config) -> None:
    for server in _SERVERS.values():
        server.stop()
    base = config.stash.get(_base_key, None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


def servers() -> dict[str, Server]:
    return _SERVERS
