"""SARIF 2.1.0 (validated against the official schema) and JUnit XML outputs of an audit."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from audits.checks import CATALOG, evaluate
from audits.ci_formats import junit, sarif
from audits.collect.snapshot import Snapshot
from audits.demo import builders as b

ROOT = Path(__file__).resolve().parent.parent
# The OASIS SARIF 2.1.0 schema, as Microsoft's SARIF test package ships it.
SCHEMA_PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
SCHEMA_MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"
HOSTILE = '<x> & "y" ]]> --'


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    """Fetched once from the npm registry and cached under var/cache."""
    cached = ROOT / "var" / "cache" / "sarif-2.1.0-rtm.5.json"
    if not cached.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("npm is needed once to fetch the official SARIF 2.1.0 schema (install Node.js).")
        cached.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "pack", SCHEMA_PACKAGE, "--silent"], cwd=cached.parent, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        tarball = cached.parent / done.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(SCHEMA_MEMBER)
            assert member is not None
            cached.write_bytes(member.read())
        tarball.unlink()
    return json.loads(cached.read_text())


@pytest.fixture
def audit() -> tuple[list, object]:
    snap = Snapshot(source="test")
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "PodDisruptionBudget", "Pod", "Node"):
        snap.mark_collected(kind)
    snap.add(b.workload("Deployment", HOSTILE, "shop", replicas=1, containers=[b.container("app", "a:1")]))
    opt_out = {"kubegap.io/ignore": "KG-DIS-001", "kubegap.io/ignore-reason": "nightly batch"}
    app = [b.container("app", "a:1")]
    snap.add(b.workload("Deployment", "batch", "shop", replicas=1, containers=app, annotations=opt_out))
    evaluation = evaluate(snap)
    return evaluation.findings, evaluation


def test_the_sarif_log_is_valid_sarif_2_1_0_with_a_rule_per_check(sarif_schema: dict, audit) -> None:
    findings, evaluation = audit

    log = json.loads(json.dumps(sarif(findings, evaluation, source="deploy/")))

    jsonschema.validate(log, sarif_schema)
    [run] = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == sorted(CATALOG)
    single = [r for r in run["results"] if r["ruleId"] == "KG-DIS-001"]
    assert {r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in single} == {
        f"shop/Deployment/{HOSTILE}",
        "shop/Deployment/batch",
    }
    assert all(r["level"] == "error" for r in single)
    [ignored] = [r for r in single if "batch" in r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]]
    assert ignored["suppressions"] == [{"kind": "inSource", "justification": "nightly batch"}]
    assert run["tool"]["driver"]["rules"][sorted(CATALOG).index("KG-DIS-001")]["helpUri"].endswith("/cases/KC-079/")


def test_junit_fails_each_check_with_findings_and_skips_those_not_evaluated(audit) -> None:
    findings, evaluation = audit

    root = ET.fromstring(junit(findings, evaluation, source="deploy/"))

    [suite] = root.findall("testsuite")
    cases = {case.get("name", "").split(" ")[0]: case for case in suite.findall("testcase")}
    assert set(cases) == set(CATALOG)
    failure = cases["KG-DIS-001"].find("failure")
    assert failure is not None and HOSTILE in (failure.text or "")
    assert "shop/Deployment/batch" not in (failure.text or "")
    skipped = [check_id for check_id, case in cases.items() if case.find("skipped") is not None]
    assert sorted(skipped) == sorted(evaluation.not_evaluated)
    assert suite.get("failures") == str(sum(1 for c in cases.values() if c.find("failure") is not None))


def test_the_audit_command_writes_sarif_and_junit(tmp_path: Path, sarif_schema: dict) -> None:
    from io import StringIO

    from django.core.management import call_command

    manifests = tmp_path / "deploy"
    manifests.mkdir()
    (manifests / "api.json").write_text(
        json.dumps(b.workload("Deployment", "api", "shop", replicas=1, containers=[b.container("app", "a:1")]))
    )
    outputs = {}
    for fmt in ("sarif", "junit"):
        out = StringIO()
        call_command("audit", "--snapshot", str(manifests), "--format", fmt, stdout=out)
        outputs[fmt] = out.getvalue()

    log = json.loads(outputs["sarif"])
    jsonschema.validate(log, sarif_schema)
    assert "KG-DIS-001" in {r["ruleId"] for r in log["runs"][0]["results"]}
    suite = ET.fromstring(outputs["junit"].encode()).find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) >= 1
