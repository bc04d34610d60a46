"""A real kube-apiserver (with embedded etcd) for kubegap-web's tests.

``build()`` compiles ``kubeapi-server`` from the Kubernetes Go modules (once; later calls reuse the binary),
``KubeAPIServer.start(data_dir)`` runs it and waits until it is ready. The server has two identities: ``admin``
(group ``system:masters``) and ``readonly`` (user ``kubegap-reader``, no permissions until a test binds a role),
and writes an audit log with one JSON event per request.

By hand::

    python tests/kubeapi/server.py [--data-dir DIR] [--port N]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "build.sh"
DEFAULT_START_TIMEOUT = 120.0
STDERR_TAIL_LINES = 40

AuditEvent = dict[str, Any]


def build() -> Path:
    """Build the server binary if its sources changed and return its path."""
    proc = subprocess.run([str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-STDERR_TAIL_LINES:])
        raise RuntimeError(f"building kubeapi-server failed (exit {proc.returncode}):\n{tail}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError("build.sh did not print the binary path")
    binary = Path(lines[-1])
    if not binary.is_file():
        raise RuntimeError(f"build.sh reported {binary}, which does not exist")
    return binary


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return "(no server log)"


def _kubeconfig_token(path: Path) -> str:
    match = re.search(r"^\s*token:\s*(\S+)\s*$", path.read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no token in {path}")
    return match.group(1).strip("\"'")


class KubeAPIServer:
    """A running kubeapi-server process; use ``start()`` to create one."""

    def __init__(self, process: subprocess.Popen[bytes], data_dir: Path, ready: dict[str, Any], log_path: Path):
        self.process = process
        self.data_dir = data_dir
        self.log_path = log_path
        self.server: str = str(ready["server"])
        self.admin_kubeconfig = Path(ready["admin_kubeconfig"])
        self.readonly_kubeconfig = Path(ready["readonly_kubeconfig"])
        self.kubeconfig = Path(ready["kubeconfig"])
        self.audit_log = Path(ready["audit_log"])
        self.ca_file = Path(ready["ca_file"])
        self.pid = int(ready["pid"])

    @classmethod
    def start(
        cls,
        data_dir: Path,
        *,
        binary: Path | None = None,
        port: int = 0,
        audit_policy: Path | None = None,
        tokens: Path | None = None,
        extra_args: Sequence[str] = (),
        timeout: float = DEFAULT_START_TIMEOUT,
    ) -> KubeAPIServer:
        """Launch the server under ``data_dir`` and wait for its ready line.

        Raises RuntimeError (with the tail of the server's log) if it exits or is not ready within ``timeout``.
        """
        binary = binary or build()
        data_dir = Path(data_dir).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        log_path = data_dir / "kubeapi-server.log"
        args = [str(binary), "--data-dir", str(data_dir), "--port", str(port), "--exit-on-stdin-close"]
        if audit_policy is not None:
            args += ["--audit-policy", str(audit_policy)]
        if tokens is not None:
            args += ["--tokens", str(tokens)]
        args += list(extra_args)

        # With port 0 the server picks a free port just before binding it; retry if another process took it.
        attempts = 3 if port == 0 else 1
        for attempt in range(1, attempts + 1):
            log_offset = log_path.stat().st_size if log_path.exists() else 0
            with log_path.open("ab") as log:
                # Own session: a Ctrl-C in the terminal reaches only us, and stop() sends exactly one SIGTERM.
                # stdin stays open while we run; the server shuts down when it sees EOF (we went away).
                process = subprocess.Popen(
                    args,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,
                )
            assert process.stdout is not None
            try:
                ready, stdout_closed = _read_ready_line(process.stdout, timeout)
            except BaseException:
                _terminate(process, grace=5.0)
                raise
            if ready is not None:
                # Nothing else is expected on stdout; keep the pipe drained anyway.
                threading.Thread(target=_drain, args=(process.stdout,), daemon=True).start()
                return cls(process, data_dir, ready, log_path)
            code = process.poll()
            if code is None and stdout_closed:  # exiting; let it finish
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = process.wait(timeout=10)
            _terminate(process, grace=5.0)
            log_text = _read_from(log_path, log_offset)
            if code is not None and attempt < attempts and "address already in use" in log_text:
                continue
            state = f"exited with {code}" if code is not None else f"was not ready after {timeout:.0f}s"
            tail = "\n".join(log_text.splitlines()[-STDERR_TAIL_LINES:])
            raise RuntimeError(f"kubeapi-server {state}; last lines of {log_path}:\n{tail}")
        raise AssertionError("unreachable")

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def token(self, identity: str = "admin") -> str:
        """The bearer token of ``admin`` or ``readonly``."""
        path = {"admin": self.admin_kubeconfig, "readonly": self.readonly_kubeconfig}[identity]
        return _kubeconfig_token(path)

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, wait up to ``timeout`` seconds, then SIGKILL. Returns the exit code."""
        return _terminate(self.process, grace=timeout)

    def audit_events(self) -> list[AuditEvent]:
        """All complete events in the audit log, oldest first."""
        try:
            data = self.audit_log.read_text(errors="replace")
        except FileNotFoundError:
            return []
        events: list[AuditEvent] = []
        for line in data.splitlines(keepends=True):
            if not line.endswith("\n") or not line.strip():
                continue  # a line still being written
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events

    def wait_for_audit_events(self, predicate: Callable[[AuditEvent], bool], timeout: float = 10.0) -> list[AuditEvent]:
        """Events matching ``predicate``, waiting up to ``timeout`` seconds for at least one.

        The API server writes an event when a request completes, which can be just after the client saw the response.
        """
        deadline = time.monotonic() + timeout
        while True:
            matching = [event for event in self.audit_events() if predicate(event)]
            if matching or time.monotonic() >= deadline:
                return matching
            time.sleep(0.1)

    def __enter__(self) -> KubeAPIServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"KubeAPIServer(server={self.server!r}, pid={self.pid}, data_dir={str(self.data_dir)!r})"


def _read_ready_line(stdout: IO[bytes], timeout: float) -> tuple[dict[str, Any] | None, bool]:
    """Wait for the JSON line announcing readiness.

    Returns the message (None on EOF or timeout) and whether reading stopped before the timeout.
    """
    result: list[dict[str, Any]] = []
    done = threading.Event()

    def reader() -> None:
        try:
            for raw in stdout:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("ready") is True:
                    result.append(message)
                    return
        finally:
            done.set()

    threading.Thread(target=reader, daemon=True).start()
    finished = done.wait(timeout)
    return (result[0] if result else None), finished


def _drain(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for _ in stream:
            pass


def _terminate(process: subprocess.Popen[bytes], grace: float) -> int:
    if process.poll() is None:
        try:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        except ProcessLookupError:
            process.wait()
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()
    return process.returncode


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the kubegap-web test kube-apiserver until Ctrl-C.")
    parser.add_argument("--data-dir", type=Path, help="state directory (default: a new temporary directory)")
    parser.add_argument("--port", type=int, default=0, help="secure port on 127.0.0.1 (default: a free port)")
    parser.add_argument("--audit-policy", type=Path, help="audit policy file (default: every request at Metadata)")
    args = parser.parse_args(argv)

    # Ctrl-C and SIGTERM both stop the server cleanly (SIGINT may arrive ignored when started in the background).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="kubegap-kubeapi-"))
    print(
        "building kubeapi-server if its sources changed (the first build takes minutes) ...",
        file=sys.stderr,
        flush=True,
    )
    binary = build()
    started = time.monotonic()
    server = KubeAPIServer.start(data_dir, binary=binary, port=args.port, audit_policy=args.audit_policy)
    print(f"kube-apiserver ready at {server.server} after {time.monotonic() - started:.1f}s (pid {server.pid})")
    print(f"export KUBECONFIG={server.kubeconfig}    # contexts: admin (current), readonly")
    print(f"readonly kubeconfig: {server.readonly_kubeconfig}")
    print(f"audit log:           {server.audit_log}")
    print(f"server log:          {server.log_path}")
    print("Ctrl-C stops it.", flush=True)
    try:
        while server.running:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    code = server.stop()
    print(f"stopped (exit {code}); state kept in {data_dir}", file=sys.stderr)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
