"""Time and memory of `manage.py audit` on the synthetic tiers.

    .venv/bin/python -m benchmarks.audit_cli                 # S, M and L
    .venv/bin/python -m benchmarks.audit_cli --tiers S M --format export

Generates each tier once into benchmarks/.data/ (kept between runs, ignored by
git), then audits it in a fresh process, as CI would, and reports the file
size, the CPU seconds of parsing and of evaluation (from the command's own
stats), the process's CPU and wall time, and its peak RSS (from wait4, so
for that process alone). Budgets: evaluation of L under 30 s of CPU, the
whole process under 1 GiB. With --repeat, the run of least CPU is reported:
on a shared machine the others only measure the neighbours.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: python benchmarks/audit_cli.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.generate_cluster import TIERS, generate

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = Path(__file__).resolve().parent / ".data"
EVALUATE_BUDGET_SECONDS = 30.0
RSS_BUDGET_MIB = 1024.0
SUFFIX = {"list": ".json", "export": ".export.json.gz"}


def tier_file(tier: str, fmt: str, *, seed: int, regenerate: bool) -> Path:
    path = DATA_DIR / f"{tier}-seed{seed}{SUFFIX[fmt]}"
    if regenerate or not path.exists():
        print(f"generating tier {tier} into {path.relative_to(ROOT)} ...", file=sys.stderr)
        generate(path, TIERS[tier], seed=seed, fmt=fmt)
    return path


def audit_once(path: Path) -> dict[str, Any]:
    """Run the audit command in a fresh process; its stats, times and peak RSS."""
    command = [
        sys.executable,
        str(ROOT / "manage.py"),
        "audit",
        "--snapshot",
        str(path),
        "--format",
        "json",
        "--max-bytes",
        str(1 << 40),
    ]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"audit of {path} exited {proc.returncode}:\n{err.read().decode()[-3000:]}")
        out.seek(0)
        report = orjson.loads(out.read())
    stats = report["stats"]
    return {
        "file_mib": path.stat().st_size / 2**20,
        "objects": stats["objects"],
        "findings": stats["findings"],
        "parse_cpu_s": stats["parse_seconds"],
        "evaluate_cpu_s": stats["evaluate_seconds"],
        "process_cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall,
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mib": usage.ru_maxrss / 1024,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", nargs="+", choices=sorted(TIERS), default=["S", "M", "L"])
    parser.add_argument("--format", choices=sorted(SUFFIX), default="list", help="kubectl List JSON, or our export")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--regenerate", action="store_true", help="Write the tier files again.")
    parser.add_argument(
        "--repeat", type=int, default=1, help="Audit each tier this many times; report the fastest run."
    )
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args(argv)

    results = {}
    for tier in args.tiers:
        path = tier_file(tier, args.format, seed=args.seed, regenerate=args.regenerate)
        runs = [audit_once(path) for _ in range(args.repeat)]
        results[tier] = min(runs, key=lambda run: run["process_cpu_s"])
        print(f"tier {tier}: {results[tier]}", file=sys.stderr)
    if args.json:
        print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())
        return
    header = (
        f"{'tier':<5}{'file MiB':>10}{'objects':>10}{'findings':>10}{'parse CPU s':>13}{'eval CPU s':>12}"
        f"{'proc CPU s':>12}{'wall s':>9}{'peak RSS MiB':>14}  budget"
    )
    print(header)
    for tier, r in results.items():
        within = r["evaluate_cpu_s"] < EVALUATE_BUDGET_SECONDS and r["peak_rss_mib"] < RSS_BUDGET_MIB
        print(
            f"{tier:<5}{r['file_mib']:>10.1f}{r['objects']:>10,}{r['findings']:>10,}{r['parse_cpu_s']:>13.1f}"
            f"{r['evaluate_cpu_s']:>12.1f}{r['process_cpu_s']:>12.1f}{r['wall_s']:>9.1f}{r['peak_rss_mib']:>14.0f}"
            f"  {'ok' if within else 'OVER'}"
        )


if __name__ == "__main__":
    main()
