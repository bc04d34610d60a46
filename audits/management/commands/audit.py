from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from audits import checks
from audits.checks import Evaluation, Finding
from audits.ci_formats import junit, sarif
from audits.collect.artifacts.captured import moment_argument
from audits.collect.artifacts.describe import describe, snapshot_facts
from audits.collect.artifacts.load import summary_of
from audits.collect.files import snapshot_load
from audits.collect.manifests import manifests_load
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.severity import SEVERITY_ORDER, severity_rank

EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2


class Command(BaseCommand):
    help = (
        "Audit a snapshot file (kubectl get -o json|yaml, or our export), an incident artifact (a kubectl "
        "cluster-info dump, a support bundle or an OpenShift must-gather, as an archive or a directory) or a "
        "directory of manifests, without the database. Exit 1 when --fail-on is met by a finding that is not "
        "suppressed, 2 when the input cannot be read."
    )
    # Reads no database: it must run in CI with none reachable.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--snapshot",
            required=True,
            type=Path,
            help="A snapshot file (.json, .yaml, .gz), an artifact (.tar.gz, .tar.xz, .zip, or unpacked) "
            "or a manifest directory.",
        )
        parser.add_argument(
            "--captured-at",
            type=moment_argument,
            help="When the data was captured (ISO 8601, e.g. 2024-03-02T10:15:00Z; UTC if no zone is given), "
            "instead of what the artifact records.",
        )
        parser.add_argument(
            "--format",
            choices=("text", "json", "sarif", "junit"),
            default="text",
            help="Output format: text, json, SARIF 2.1.0 (code scanning) or JUnit XML (test reports).",
        )
        parser.add_argument(
            "--fail-on",
            choices=[str(s) for s in SEVERITY_ORDER],
            help="Exit 1 when a finding of this severity or worse is not suppressed.",
        )
        parser.add_argument(
            "--manifests",
            action="store_true",
            help="Read a single file as manifests (desired state), like a directory; e.g. `helm template` output.",
        )
        parser.add_argument(
            "--max-bytes",
            type=int,
            default=settings.SNAPSHOT_MAX_BYTES,
            help="Refuse input larger than this, also once decompressed (default: SNAPSHOT_MAX_BYTES).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["snapshot"]
        given = options["captured_at"]
        started = time.process_time()
        try:
            if options["manifests"]:
                snapshot = manifests_load(path, max_bytes=options["max_bytes"], display_name=str(path))
                snapshot.captured_at = given or snapshot.captured_at
            else:
                snapshot = snapshot_load(
                    path, max_bytes=options["max_bytes"], display_name=str(path), captured_at=given
                )
        except SnapshotError as exc:
            raise CommandError(str(exc), returncode=EXIT_BAD_INPUT) from None
        parsed = time.process_time()
        # Spare the snapshot the garbage collector's rescans while checks run: it holds no cycles.
        gc.freeze()
        try:
            evaluation = checks.evaluate(snapshot)
        finally:
            gc.unfreeze()
        evaluated = time.process_time()
        stats = _stats(snapshot, evaluation, parse_seconds=parsed - started, evaluate_seconds=evaluated - parsed)
        findings = sorted(evaluation.findings, key=_finding_order)
        for warning in snapshot.warnings:
            self.stderr.write(f"warning: {warning}")
        if options["format"] == "sarif":
            log = sarif(findings, evaluation, source=str(path))
            self.stdout.write(orjson.dumps(log, option=orjson.OPT_INDENT_2).decode())
        elif options["format"] == "junit":
            self.stdout.write(junit(findings, evaluation, source=str(path)).decode())
        elif options["format"] == "json":
            report = _report(findings, evaluation, stats)
            report["snapshot"] = snapshot_facts(snapshot, given=given is not None)
            self.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        else:
            about = describe(snapshot, given=given is not None) if summary_of(snapshot) or given else []
            self.stdout.write(_text(str(path), findings, evaluation, stats, about))
        fail_on = options["fail_on"]
        if fail_on:
            failing = [f for f in findings if not f.ignored and severity_rank(f.severity) <= severity_rank(fail_on)]
            if failing:
                self.stderr.write(f"{len(failing)} finding(s) of severity {fail_on} or worse (--fail-on {fail_on}).")
                sys.stdout.flush()
                raise SystemExit(EXIT_FINDINGS)


def _finding_order(finding: Finding) -> tuple[int, str, str, str, str, str]:
    return (
        severity_rank(finding.severity),
        finding.check_id,
        finding.kind,
        finding.namespace,
        finding.name,
        finding.detail,
    )


def _stats(
    snapshot: Snapshot, evaluation: Evaluation, *, parse_seconds: float, evaluate_seconds: float
) -> dict[str, Any]:
    return {
        "objects": snapshot.count(),
        "kinds": {kind: len(snapshot.objects[kind]) for kind in sorted(snapshot.objects)},
        # CPU seconds of this process: reading and projecting, then evaluating every check.
        "parse_seconds": round(parse_seconds, 3),
        "evaluate_seconds": round(evaluate_seconds, 3),
        "findings": len(evaluation.findings),
    }


def _report(findings: list[Finding], evaluation: Evaluation, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "findings": [
            {
                "check": f.check_id,
                "severity": str(f.severity),
                "kind": f.kind,
                "namespace": f.namespace,
                "name": f.name,
                "message": f.message,
                "evidence": f.evidence,
                "cases": list(f.cases),
                "suppressed": f.ignored,
            }
            for f in findings
        ],
        "not_evaluated": [
            {"check": check_id, "reason": reason} for check_id, reason in sorted(evaluation.not_evaluated.items())
        ],
        "stats": stats,
    }


def _object(finding: Finding) -> str:
    where = f"{finding.namespace}/{finding.name}" if finding.namespace else finding.name
    return f"{finding.kind} {where}"


def _text(source: str, findings: list[Finding], evaluation: Evaluation, stats: dict[str, Any], about: list[str]) -> str:
    lines = [
        f"Audit of {source}: {stats['objects']:,} objects of {len(stats['kinds'])} kinds "
        f"(parse {stats['parse_seconds']:.1f} s, evaluation {stats['evaluate_seconds']:.1f} s CPU).",
        *about,
    ]
    by_severity = Counter(str(f.severity) for f in findings if not f.ignored)
    for severity in SEVERITY_ORDER:
        group = [f for f in findings if f.severity == severity]
        if not group:
            continue
        lines += ["", f"{severity.label.upper()} ({len(group)})"]
        for f in group:
            suppressed = f"  [suppressed: {f.ignore_reason or 'kubegap.io/ignore'}]" if f.ignored else ""
            lines.append(f"  {f.check_id}  {_object(f)}{suppressed}")
            lines.append(f"      {f.message}")
            lines.append(f"      cases: {', '.join(f.cases)}")
    if evaluation.not_evaluated:
        lines += ["", f"NOT EVALUATED ({len(evaluation.not_evaluated)})"]
        lines += [f"  {check_id}  {reason}" for check_id, reason in sorted(evaluation.not_evaluated.items())]
    counts = ", ".join(f"{by_severity[str(s)]} {s}" for s in SEVERITY_ORDER if by_severity[str(s)])
    suppressed_count = sum(1 for f in findings if f.ignored)
    lines += [
        "",
        f"{len(findings) - suppressed_count} finding(s)" + (f" ({counts})" if counts else "") + f", "
        f"{suppressed_count} suppressed, {len(evaluation.not_evaluated)} check(s) not evaluated.",
    ]
    return "\n".join(lines)
