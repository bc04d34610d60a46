"""Dashboard server time with a year of nightly history for 20 clusters, on PostgreSQL.

Starts a private PostgreSQL (from the installed server binaries), migrates,
seeds 20 clusters x 365 nightly runs with realistic aggregates and finding
intervals (gaps opening, closing and regressing), then requests the overview
and cluster pages in-process and reports p50/p95 server time, the number of
queries, and whether any query counted the findings table. Run from the
repository root:

    .venv/bin/python -m benchmarks.dashboard [--clusters 20] [--days 365] [--gaps 1000] [--requests 60]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def seed(clusters: int, days: int, gaps: int) -> None:
    from django.contrib.auth.models import Group, User
    from django.utils import timezone

    from audits.checks import CATALOG
    from audits.models import AuditRun, Cluster, Finding, Membership, Role, RunStatus, RunTrigger, SourceKind
    from audits.services.findings import run_aggregates

    rng = random.Random(7)
    team = Group.objects.create(name="platform")
    user = User.objects.create_user("bench", password="bench-password-1")
    Membership.objects.create(user=user, team=team, role=Role.ADMIN)
    checks = list(CATALOG.values())
    now = timezone.now().replace(hour=2, minute=0, second=0, microsecond=0)
    for c in range(clusters):
        cluster = Cluster.objects.create(
            team=team, name=f"cluster-{c:02d}", slug=f"cluster-{c:02d}", source_kind=SourceKind.SNAPSHOT,
            next_audit_at=now + dt.timedelta(days=1),
        )  # fmt: skip
        at = [now - dt.timedelta(days=d) for d in range(days, 0, -1)]
        runs = AuditRun.objects.bulk_create(
            AuditRun(
                cluster=cluster, trigger=RunTrigger.SCHEDULE, status=RunStatus.SUCCEEDED, scheduled_for=t, captured_at=t
            )
            for t in at
        )
        findings = []
        # (index of the run that opened the interval, index of the run that closed it or None)
        spans: list[tuple[int, int | None, str, str]] = []
        for g in range(gaps):
            chk = checks[g % len(checks)]
            fp = f"{c:02d}{g:06d}".ljust(64, "0")
            day, regression = rng.randrange(0, days // 2), False
            while day < days:
                length = rng.randrange(20, days)
                closed = day + length
                run_open, run_close = runs[day], runs[closed] if closed < days else None
                spans.append((day, closed if run_close else None, chk.severity, chk.id))
                findings.append(
                    Finding(
                        cluster=cluster, fingerprint=fp, check_id=chk.id, severity=chk.severity,
                        object_kind="Deployment", object_namespace=f"ns-{g % 40}", object_name=f"app-{g}",
                        message=f"{chk.title} (app-{g})", evidence={"spec.replicas": 1},
                        opened_at=at[day], opened_by_run=run_open,
                        last_seen_at=at[closed] if run_close else at[-1], last_seen_run=run_close or runs[-1],
                        closed_at=at[closed] if run_close else None, closed_by_run=run_close,
                        is_regression=regression,
                    )
                )  # fmt: skip
                if run_close is None:
                    break
                day, regression = closed + rng.randrange(5, 60), True
        Finding.objects.bulk_create(findings, batch_size=5000)
        # Aggregates of each run, as the audits would have stored them (computed
        # here from the intervals open after that run).
        by_run: list[dict[str, dict[str, int]]] = [{"sev": {}, "chk": {}} for _ in runs]
        for opened, until, severity, check_id in spans:
            for i in range(opened, until if until is not None else len(runs)):
                by_run[i]["sev"][severity] = by_run[i]["sev"].get(severity, 0) + 1
                by_run[i]["chk"][check_id] = by_run[i]["chk"].get(check_id, 0) + 1
        for run, agg in zip(runs, by_run, strict=True):
            run.open_by_severity, run.open_by_check = agg["sev"], agg["chk"]
            run.findings_open = sum(agg["sev"].values())
            run.new_count = rng.randrange(0, 5)
        AuditRun.objects.bulk_update(runs, ["open_by_severity", "open_by_check", "findings_open", "new_count"], 1000)
        latest = runs[-1]
        AuditRun.objects.filter(pk=latest.pk).update(**run_aggregates(latest, timezone.now()))
        print(f"seeded {cluster.name}: {len(runs)} runs, {len(findings)} finding intervals", flush=True)


def measure(requests: int) -> dict[str, object]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    assert client.login(username="bench", password="bench-password-1")
    pages = {
        "overview": "/",
        "cluster": "/clusters/cluster-07/",
        "cluster filtered": "/clusters/cluster-07/?severity=high&status=all&q=app-1",
        "cluster page 5": "/clusters/cluster-07/?page=5",
    }
    report: dict[str, object] = {}
    for name, url in pages.items():
        for _ in range(3):  # warm up
            assert client.get(url).status_code == 200
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        with CaptureQueriesContext(connection) as queries:
            client.get(url)
        counting = [q["sql"][:120] for q in queries if "COUNT(" in q["sql"].upper() and "audits_finding" in q["sql"]]
        report[name] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(statistics.quantiles(times, n=20)[18], 1),
            "queries": len(queries),
            "queries_counting_findings": counting,
        }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--gaps", type=int, default=1000, help="distinct gaps per cluster over the year")
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from tests.services import start_postgres

    with tempfile.TemporaryDirectory(prefix="kubegap-dash-") as tmp:
        base = Path(tmp)
        base.chmod(0o755)
        server = start_postgres(base)
        try:
            os.environ.update(
                DATABASE_URL=server.url, SECRET_KEY="benchmark-only", KUBEGAP_VAR_DIR=str(base / "var"),
                ALLOWED_HOSTS="testserver", DJANGO_SETTINGS_MODULE="kubegap_web.settings",
            )  # fmt: skip
            import django

            django.setup()
            from django.core.management import call_command
            from django.db import connection

            call_command("migrate", verbosity=0)
            started = time.monotonic()
            seed(args.clusters, args.days, args.gaps)
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
                cursor.execute("SELECT count(*) FROM audits_finding")
                findings = cursor.fetchone()[0]
                cursor.execute("SELECT count(*) FROM audits_auditrun")
                runs = cursor.fetchone()[0]
            print(
                f"seeded {runs} runs and {findings} finding intervals in {time.monotonic() - started:.0f}s", flush=True
            )
            report = {"clusters": args.clusters, "runs": runs, "finding_intervals": findings, **measure(args.requests)}
            print(json.dumps(report, indent=2))
            connection.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
