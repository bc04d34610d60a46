"""The check engine: a catalog of pure checks evaluated over one snapshot.

A check is a function from an indexed snapshot to hits, registered with its
metadata beside it. The engine adds what every finding shares: the check's
severity and cases, the stable fingerprint, and the object's opt-out
annotation. Nothing here touches the database, the network or the clock.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from audits.checks.index import SnapshotIndex
from audits.collect.snapshot import Obj, Snapshot
from audits.severity import Severity

IGNORE_ANNOTATION = "kubegap.io/ignore"
IGNORE_REASON_ANNOTATION = "kubegap.io/ignore-reason"
CHECK_ID = re.compile(r"^KG-([A-Z]+)-\d{3}$")


class NotEvaluated(Exception):
    """Raised by a check that cannot judge this snapshot for a reason other than a
    missing kind (no capture time to compare a certificate's expiry with, no server
    version); the check is then reported as not evaluated, with this message."""


@dataclass(frozen=True)
class Hit:
    """What a check yields: the object at fault, why, and the fields that prove it."""

    obj: Obj
    message: str
    evidence: dict[str, Any]
    # Distinguishes two hits of one check on one object (a container name).
    detail: str = ""


Evaluate = Callable[[SnapshotIndex], Iterable[Hit]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    area: str
    severity: Severity
    needs: tuple[str, ...]
    cases: tuple[str, ...]
    why: str
    fix: str
    evaluate: Evaluate = field(repr=False, compare=False)


@dataclass(frozen=True)
class Finding:
    """One gap in one snapshot, ready to be reconciled or printed."""

    check_id: str
    severity: Severity
    kind: str
    namespace: str
    name: str
    detail: str
    message: str
    evidence: dict[str, Any]
    cases: tuple[str, ...]
    ignored: bool = False
    ignore_reason: str = ""

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.check_id, self.kind, self.namespace, self.name, self.detail)


@dataclass
class Evaluation:
    findings: list[Finding]
    # check id -> why it was not evaluated
    not_evaluated: dict[str, str]


CATALOG: dict[str, Check] = {}


def check(
    *,
    id: str,
    title: str,
    area: str,
    severity: Severity,
    needs: tuple[str, ...],
    cases: tuple[str, ...],
    why: str,
    fix: str,
) -> Callable[[Evaluate], Evaluate]:
    """Register a check function in the catalog with its metadata."""

    def register(fn: Evaluate) -> Evaluate:
        if not CHECK_ID.match(id):
            raise ValueError(f"check id {id!r} does not look like KG-<AREA>-<NNN>")
        if id in CATALOG:
            raise ValueError(f"check id {id} is registered twice")
        if not cases:
            raise ValueError(f"check {id} cites no case; every check must cite at least one")
        CATALOG[id] = Check(id, title, area, severity, needs, cases, why, fix, fn)
        return fn

    return register


def fingerprint(check_id: str, kind: str, namespace: str, name: str, detail: str) -> str:
    key = "\x00".join((check_id, kind, namespace, name, detail))
    return hashlib.sha256(key.encode()).hexdigest()


def evaluate(snapshot: Snapshot, checks: Iterable[Check] | None = None) -> Evaluation:
    """Run every check over the snapshot; checks missing a kind are not evaluated."""
    index = SnapshotIndex(snapshot)
    findings: list[Finding] = []
    not_evaluated: dict[str, str] = {}
    for chk in checks if checks is not None else CATALOG.values():
        missing = [kind for kind in chk.needs if kind not in snapshot.collected]
        if missing:
            not_evaluated[chk.id] = "not collected: " + ", ".join(
                f"{kind} ({snapshot.not_collected.get(kind, 'absent from the snapshot')})" for kind in missing
            )
            continue
        try:
            hits = list(chk.evaluate(index))
        except NotEvaluated as reason:
            not_evaluated[chk.id] = str(reason)
            continue
        except Exception as exc:  # one odd object must not lose the whole audit
            not_evaluated[chk.id] = f"failed on this snapshot: {type(exc).__name__}: {exc}"
            continue
        findings.extend(_finding(chk, hit) for hit in hits)
    return Evaluation(findings=findings, not_evaluated=not_evaluated)


def _finding(chk: Check, hit: Hit) -> Finding:
    metadata = hit.obj.get("metadata", {})
    annotations = metadata.get("annotations") or {}
    ignored_ids = {part.strip() for part in str(annotations.get(IGNORE_ANNOTATION, "")).split(",")}
    ignored = chk.id in ignored_ids
    return Finding(
        check_id=chk.id,
        severity=chk.severity,
        kind=str(hit.obj.get("kind", "")),
        namespace=str(metadata.get("namespace") or ""),
        name=str(metadata.get("name", "")),
        detail=hit.detail,
        message=hit.message,
        evidence=hit.evidence,
        cases=chk.cases,
        ignored=ignored,
        ignore_reason=str(annotations.get(IGNORE_REASON_ANNOTATION, "")) if ignored else "",
    )
