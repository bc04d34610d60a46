"""Audit results in the formats CI systems read: SARIF 2.1.0 and JUnit XML.

Both are built from the engine's findings and the catalog; cluster text goes
through json and ElementTree, which escape it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any

from django.conf import settings

from audits.checks import CATALOG, Evaluation, Finding
from audits.severity import Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://github.com/kubegap/kubegap-web"
LEVELS = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note"}


def _object_name(finding: Finding) -> str:
    return "/".join(part for part in (finding.namespace, finding.kind, finding.name) if part)


def _case_uri(case_id: str) -> str:
    return f"{settings.KUBEGAP_BASE_URL}/cases/{case_id}/"


def sarif(findings: list[Finding], evaluation: Evaluation, *, source: str, version: str = "0.1.0") -> dict[str, Any]:
    """A SARIF 2.1.0 log: one rule per check of the catalog, one result per finding.

    The snapshot (file or directory) is the result's artifact, the object is its
    logical location, and findings opted out by annotation carry an in-source
    suppression with the annotation's reason.
    """
    rule_ids = sorted(CATALOG)
    rules = [
        {
            "id": chk.id,
            "name": chk.title,
            "shortDescription": {"text": chk.title},
            "fullDescription": {"text": chk.why},
            "help": {"text": f"{chk.fix}\n\nIncidents: {', '.join(chk.cases)}"},
            "helpUri": _case_uri(chk.cases[0]),
            "defaultConfiguration": {"level": LEVELS[chk.severity]},
            "properties": {"tags": [chk.area, *chk.cases], "severity": str(chk.severity)},
        }
        for chk in (CATALOG[rule_id] for rule_id in rule_ids)
    ]
    results = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.check_id,
            "ruleIndex": rule_ids.index(finding.check_id),
            "level": LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": {"artifactLocation": {"uri": source}},
                    "logicalLocations": [{"fullyQualifiedName": _object_name(finding), "kind": "resource"}],
                }
            ],
            "partialFingerprints": {"kubegap/v1": finding.fingerprint},
            "properties": {
                "severity": str(finding.severity),
                "evidence": finding.evidence,
                "cases": list(finding.cases),
            },
        }
        if finding.ignored:
            result["suppressions"] = [
                {"kind": "inSource", "justification": finding.ignore_reason or "kubegap.io/ignore"}
            ]
        results.append(result)
    notifications = [
        {"level": "note", "message": {"text": f"{check_id} not evaluated: {reason}"}, "descriptor": {"id": check_id}}
        for check_id, reason in sorted(evaluation.not_evaluated.items())
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "kubegap", "version": version, "informationUri": TOOL_URI, "rules": rules}},
                "artifacts": [{"location": {"uri": source}}],
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
                "results": results,
            }
        ],
    }


def junit(findings: list[Finding], evaluation: Evaluation, *, source: str) -> bytes:
    """JUnit XML: a test case per check, failing with its findings, skipped when not evaluated.

    Findings opted out by annotation do not fail their check.
    """
    by_check: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if not finding.ignored:
            by_check[finding.check_id].append(finding)
    suite = ET.Element("testsuite", name=f"kubegap {source}", tests=str(len(CATALOG)))
    failures = skipped = 0
    for check_id in sorted(CATALOG):
        chk = CATALOG[check_id]
        case = ET.SubElement(suite, "testcase", classname=f"kubegap.{chk.area}", name=f"{chk.id} {chk.title}")
        if check_id in evaluation.not_evaluated:
            ET.SubElement(case, "skipped", message=evaluation.not_evaluated[check_id])
            skipped += 1
        elif by_check[check_id]:
            hits = by_check[check_id]
            failure = ET.SubElement(
                case, "failure", message=f"{len(hits)} finding(s), severity {chk.severity}", type=str(chk.severity)
            )
            failure.text = (
                "\n".join(f"{_object_name(f)}: {f.message}" for f in hits) + f"\nIncidents: {', '.join(chk.cases)}"
            )
            failures += 1
    counts = {"tests": str(len(CATALOG)), "failures": str(failures), "skipped": str(skipped), "errors": "0"}
    for name, value in counts.items():
        suite.set(name, value)
    root = ET.Element("testsuites", {k: v for k, v in counts.items() if k != "skipped"})
    root.append(suite)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
