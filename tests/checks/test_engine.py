"""The engine: not-evaluated checks, the opt-out annotation, stable fingerprints."""

from __future__ import annotations

import pytest

from audits.checks import CATALOG, evaluate
from audits.checks.engine import check
from audits.demo import builders as b
from audits.severity import Severity
from tests.checks.helpers import findings_of, snapshot_of

APP = [b.container("app", "shop/api:1.2.3")]


def test_a_check_whose_kind_was_not_collected_is_not_evaluated() -> None:
    snap = snapshot_of(b.workload("Deployment", "api", "shop", replicas=3, containers=APP), kinds=())
    snap.not_collected["PodDisruptionBudget"] = "forbidden: the identity may not list poddisruptionbudgets"

    evaluation = evaluate(snap, [CATALOG["KG-DIS-002"]])

    assert evaluation.findings == []
    assert "forbidden" in evaluation.not_evaluated["KG-DIS-002"]


def test_a_check_that_needs_the_capture_time_is_not_evaluated_without_it() -> None:
    snap = snapshot_of(b.namespace("shop"))
    snap.captured_at = None

    evaluation = evaluate(snap, [CATALOG["KG-CRT-001"]])

    assert evaluation.not_evaluated == {
        "KG-CRT-001": "the snapshot records no capture time to compare expiry dates with"
    }


def test_the_ignore_annotation_marks_findings_without_dropping_them() -> None:
    api = b.workload(
        "Deployment",
        "api",
        "shop",
        replicas=1,
        containers=APP,
        annotations={"kubegap.io/ignore": "KG-DIS-002, KG-DIS-001", "kubegap.io/ignore-reason": "batch API, no SLO"},
    )

    [finding] = findings_of("KG-DIS-001", snapshot_of(api))

    assert finding.ignored is True
    assert finding.ignore_reason == "batch API, no SLO"


def test_an_object_ignoring_another_check_is_still_reported() -> None:
    api = b.workload(
        "Deployment", "api", "shop", replicas=1, containers=APP, annotations={"kubegap.io/ignore": "KG-DIS-002"}
    )

    [finding] = findings_of("KG-DIS-001", snapshot_of(api))

    assert finding.ignored is False


def test_fingerprints_are_stable_and_distinguish_objects() -> None:
    one = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP))
    again = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP))
    other = snapshot_of(b.workload("Deployment", "api", "shop-2", replicas=1, containers=APP))

    fp = findings_of("KG-DIS-001", one)[0].fingerprint
    assert findings_of("KG-DIS-001", again)[0].fingerprint == fp
    assert findings_of("KG-DIS-001", other)[0].fingerprint != fp


def test_findings_carry_the_checks_severity_and_cases() -> None:
    [finding] = findings_of(
        "KG-DIS-001", snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP))
    )

    assert finding.severity == Severity.HIGH
    assert finding.cases == CATALOG["KG-DIS-001"].cases


def test_a_check_id_must_name_an_area_and_a_number() -> None:
    with pytest.raises(ValueError, match="KG-<AREA>-<NNN>"):
        check(id="KG-dis-1", title="", area="", severity=Severity.LOW, needs=(), cases=("KC-001",), why="", fix="")(
            lambda index: []
        )


def test_a_check_that_fails_on_odd_data_is_not_evaluated_and_the_others_still_run() -> None:
    odd = b.pdb("api", "shop", {"app": "api"}, max_unavailable=0)
    odd["status"]["disruptionsAllowed"] = "zero"
    snap = snapshot_of(odd, b.workload("Deployment", "api", "shop", replicas=1, containers=APP))

    evaluation = evaluate(snap, [CATALOG["KG-DIS-003"], CATALOG["KG-DIS-001"]])

    assert evaluation.not_evaluated["KG-DIS-003"].startswith("failed on this snapshot: TypeError")
    assert [f.check_id for f in evaluation.findings] == ["KG-DIS-001"]
