"""`manage.py audit` and `manage.py checks`: what CI runs, with no database at hand."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from audits.checks import CATALOG
from audits.demo import builders as b
from benchmarks.generate_cluster import Tier, generate
from tests.services import free_port

ROOT = Path(__file__).resolve().parent.parent
APP = [b.container("app", "shop/api:1.2.3")]


def _single_replica(name: str, **annotations: str) -> dict[str, Any]:
    return b.workload("Deployment", name, "shop", replicas=1, containers=APP, annotations=annotations or None)


def _cluster(tmp_path: Path) -> Path:
    """Two single-replica Deployments, one of them opting out of KG-DIS-001 with a reason."""
    items = [
        _single_replica("api"),
        _single_replica(
            "batch", **{"kubegap.io/ignore": "KG-DIS-001", "kubegap.io/ignore-reason": "a queue worker, retried"}
        ),
    ]
    path = tmp_path / "prod.json"
    path.write_text(json.dumps(b.kube_list(items)))
    return path


def _audit(*args: str) -> tuple[dict[str, Any], int]:
    """Run the audit command in this process; its JSON output and exit code."""
    out = io.StringIO()
    try:
        call_command("audit", *args, "--format", "json", stdout=out, stderr=io.StringIO())
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return json.loads(out.getvalue()), code


def _manage(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


# checks


def test_checks_lists_the_catalog_as_json_sorted_by_id() -> None:
    out = io.StringIO()

    call_command("checks", "--format", "json", stdout=out)

    rows = json.loads(out.getvalue())
    assert [row["id"] for row in rows] == sorted(CATALOG)
    first = CATALOG[rows[0]["id"]]
    assert rows[0] == {
        "id": first.id,
        "title": first.title,
        "area": first.area,
        "severity": str(first.severity),
        "cases": list(first.cases),
    }
    assert all(row["cases"] for row in rows)


def test_checks_prints_a_readable_table() -> None:
    out = io.StringIO()

    call_command("checks", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["ID", "SEVERITY", "AREA", "TITLE", "CASES"]
    single = CATALOG["KG-DIS-001"]
    [row] = [line for line in lines if line.startswith("KG-DIS-001 ")]
    assert row.split()[:3] == ["KG-DIS-001", str(single.severity), single.area]
    assert single.title in row
    assert row.endswith(", ".join(single.cases))
    assert lines[-1] == f"{len(CATALOG)} checks. `python manage.py audit --snapshot PATH` runs them."


# audit


def test_it_reports_findings_not_evaluated_checks_and_stats_as_json(tmp_path: Path) -> None:
    report, code = _audit("--snapshot", str(_cluster(tmp_path)))

    single = CATALOG["KG-DIS-001"]
    found = [f for f in report["findings"] if f["check"] == "KG-DIS-001"]
    assert found == [
        {
            "check": "KG-DIS-001",
            "severity": str(single.severity),
            "kind": "Deployment",
            "namespace": "shop",
            "name": "api",
            "message": found[0]["message"],
            "evidence": found[0]["evidence"],
            "cases": list(single.cases),
            "suppressed": False,
        },
        {**found[0], "name": "batch", "suppressed": True},
    ]
    assert "single replica" in found[0]["message"]
    assert found[0]["evidence"]["spec.replicas"] == 1
    not_evaluated = {entry["check"]: entry["reason"] for entry in report["not_evaluated"]}
    needs_nodes = [c.id for c in CATALOG.values() if "Node" in c.needs]
    assert needs_nodes and all("Node (absent from the snapshot)" in not_evaluated[c] for c in needs_nodes)
    assert "KG-DIS-001" not in not_evaluated
    stats = report["stats"]
    assert (stats["objects"], stats["kinds"], stats["findings"]) == (2, {"Deployment": 2}, len(report["findings"]))
    assert stats["parse_seconds"] >= 0 and stats["evaluate_seconds"] >= 0
    assert code == 0


def test_it_prints_findings_grouped_by_severity_as_text(tmp_path: Path) -> None:
    out = io.StringIO()

    call_command("audit", "--snapshot", str(_cluster(tmp_path)), stdout=out, stderr=io.StringIO())

    text = out.getvalue()
    single = CATALOG["KG-DIS-001"]
    heading = f"{single.severity.label.upper()} ("
    assert text.startswith(f"Audit of {tmp_path / 'prod.json'}: 2 objects of 1 kinds")
    section = text[text.index(heading) :]
    assert "  KG-DIS-001  Deployment shop/api\n" in section
    assert "  KG-DIS-001  Deployment shop/batch  [suppressed: a queue worker, retried]\n" in section
    assert f"      cases: {', '.join(single.cases)}\n" in section
    report, _ = _audit("--snapshot", str(tmp_path / "prod.json"))
    assert f"\nNOT EVALUATED ({len(report['not_evaluated'])})\n" in text
    unsuppressed = sum(not f["suppressed"] for f in report["findings"])
    assert text.rstrip().splitlines()[-1].startswith(f"{unsuppressed} finding(s) (")
    assert text.rstrip().endswith(f", 1 suppressed, {len(report['not_evaluated'])} check(s) not evaluated.")


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("high", 1), ("low", 1), ("critical", 0)],
)
def test_fail_on_exits_1_when_an_unsuppressed_finding_is_that_severe(
    tmp_path: Path, fail_on: str, expected: int
) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(b.kube_list([_single_replica("api")])))
    assert CATALOG["KG-DIS-001"].severity == "high"

    report, code = _audit("--snapshot", str(path), "--fail-on", fail_on)

    assert any(f["check"] == "KG-DIS-001" and not f["suppressed"] for f in report["findings"])
    assert not any(f["severity"] == "critical" for f in report["findings"])
    assert code == expected


def test_fail_on_ignores_suppressed_findings(tmp_path: Path) -> None:
    path = tmp_path / "quiet.json"
    everything = ",".join(CATALOG)
    path.write_text(json.dumps(b.kube_list([_single_replica("api", **{"kubegap.io/ignore": everything})])))

    report, code = _audit("--snapshot", str(path), "--fail-on", "low")

    assert report["findings"] and all(f["suppressed"] for f in report["findings"])
    assert code == 0


def test_bad_input_exits_2_with_the_error_and_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}}, {"ki')

    result = _manage("audit", "--snapshot", str(path), "--format", "json")

    assert result.returncode == 2
    assert result.stdout == ""
    assert "cut.json: is truncated" in result.stderr
    assert "Traceback" not in result.stderr


def test_fail_on_exit_code_from_the_command_line(tmp_path: Path) -> None:
    result = _manage("audit", "--snapshot", str(_cluster(tmp_path)), "--format", "json", "--fail-on", "high")

    assert result.returncode == 1
    assert json.loads(result.stdout)["stats"]["objects"] == 2
    assert "finding(s) of severity high or worse (--fail-on high)" in result.stderr


def test_it_never_touches_the_database() -> None:
    """Both commands run in CI where no database is reachable."""
    unreachable = {"DATABASE_URL": f"postgres://kubegap@127.0.0.1:{free_port()}/kubegap", "SECRET_KEY": "ci-only"}
    demo = ROOT / "audits" / "demo" / "data" / "web-shop" / "01.json"

    audited = _manage("audit", "--snapshot", str(demo), "--format", "json", env=unreachable)
    listed = _manage("checks", "--format", "json", env=unreachable)

    assert audited.returncode == 0, audited.stderr
    assert json.loads(audited.stdout)["stats"]["objects"] > 0
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == len(CATALOG)


def test_it_audits_a_manifest_directory(tmp_path: Path) -> None:
    root = tmp_path / "deploy"
    root.mkdir()
    (root / "api.yaml").write_text(yaml.safe_dump(_single_replica("api")))

    report, code = _audit("--snapshot", str(root), "--fail-on", "high")

    assert [(f["check"], f["name"]) for f in report["findings"] if f["check"] == "KG-DIS-001"] == [
        ("KG-DIS-001", "api")
    ]
    not_evaluated = {entry["check"]: entry["reason"] for entry in report["not_evaluated"]}
    assert "Pod (cluster state" in not_evaluated["KG-SPR-001"]
    assert code == 1


def test_manifests_flag_reads_one_file_as_desired_state(tmp_path: Path) -> None:
    path = tmp_path / "rendered.yaml"
    path.write_text(yaml.safe_dump_all([_single_replica("api"), b.pod_for(_single_replica("api"), 0, "n1")]))

    report, _ = _audit("--snapshot", str(path), "--manifests")

    assert report["stats"]["kinds"]["Deployment"] == 1
    assert "Pod" not in report["stats"]["kinds"]
    assert "PodDisruptionBudget" in report["stats"]["kinds"]


def test_it_refuses_input_over_the_size_limit(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="over the limit of 100 bytes") as raised:
        call_command("audit", "--snapshot", str(_cluster(tmp_path)), "--max-bytes", "100", stdout=io.StringIO())

    assert raised.value.returncode == 2


def test_a_generated_cluster_audits_the_same_from_a_list_and_from_our_export(tmp_path: Path) -> None:
    tier = Tier(nodes=6, pods=90, services=8, namespaces=6)
    written = generate(tmp_path / "small.json", tier, seed=7)
    generate(tmp_path / "small.json.gz", tier, seed=7, fmt="export")

    from_list, _ = _audit("--snapshot", str(tmp_path / "small.json"))
    from_export, _ = _audit("--snapshot", str(tmp_path / "small.json.gz"))

    kinds = from_list["stats"]["kinds"]
    assert kinds["Pod"] == 90 and kinds["Node"] == 6 and kinds["Service"] == 8
    # Only ConfigMaps other than kube-proxy's and CoreDNS's are dropped.
    assert from_list["stats"]["objects"] == written - 1
    # The export also lists the kinds it read and found none of.
    assert {kind: n for kind, n in from_export["stats"]["kinds"].items() if n} == kinds
    # The export also records the server version and capture time, so it can evaluate more.
    evaluated_by_list = set(CATALOG) - {e["check"] for e in from_list["not_evaluated"]}
    assert {e["check"] for e in from_export["not_evaluated"]} <= {e["check"] for e in from_list["not_evaluated"]}
    assert [f for f in from_export["findings"] if f["check"] in evaluated_by_list] == from_list["findings"]
    assert from_list["findings"]
