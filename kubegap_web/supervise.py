"""Run the web server, a worker and the scheduler together, as `make run` does.

Output is prefixed with each process's name. Ctrl-C (or SIGTERM) asks every
process to stop and waits for them to finish their work; only a process still
running after the grace period is killed.

    python -m kubegap_web.supervise --port 8000
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

GRACE_SECONDS = 30


def commands(port: int) -> dict[str, list[str]]:
    bindir = Path(sys.executable).parent
    celery = [str(bindir / "celery"), "-A", "kubegap_web"]
    return {
        "web": [
            str(bindir / "gunicorn"),
            "kubegap_web.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--access-logfile",
            "-",
            "--graceful-timeout",
            "10",
        ],
        # One process: the embedded SQLite database has a single writer.
        "worker": [
            *celery,
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ],
        "beat": [*celery, "beat", "--loglevel", "INFO"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args()

    procs: dict[str, subprocess.Popen[bytes]] = {}
    for name, argv in commands(args.port).items():
        # Own process group, so a Ctrl-C reaches us once and we stop them in order.
        procs[name] = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)

    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            print(f"{'supervise':>9} | stopping (waiting up to {GRACE_SECONDS}s for work in progress)", flush=True)
            for proc in procs.values():
                if proc.poll() is None:
                    proc.terminate()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    selector = selectors.DefaultSelector()
    for name, proc in procs.items():
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        selector.register(proc.stdout, selectors.EVENT_READ, name)

    deadline: float | None = None
    while any(proc.poll() is None for proc in procs.values()):
        for key, _ in selector.select(timeout=0.5):
            chunk = key.fileobj.read()  # type: ignore[union-attr]
            for line in (chunk or b"").decode(errors="replace").splitlines():
                print(f"{key.data:>9} | {line}", flush=True)
        if not stopping and any(proc.poll() is not None for proc in procs.values()):
            exited = [name for name, proc in procs.items() if proc.poll() is not None]
            print(f"{'supervise':>9} | {', '.join(exited)} exited; stopping the rest", flush=True)
            stop(signal.SIGTERM, None)
        if stopping:
            deadline = deadline or time.monotonic() + GRACE_SECONDS
            if time.monotonic() > deadline:
                for name, proc in procs.items():
                    if proc.poll() is None:
                        print(f"{'supervise':>9} | {name} did not stop in time; killing it", flush=True)
                        proc.kill()
    codes = {name: proc.returncode for name, proc in procs.items()}
    print(f"{'supervise':>9} | stopped: " + ", ".join(f"{n} ({c})" for n, c in codes.items()), flush=True)
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
