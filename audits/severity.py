"""Severity of a gap, shared by the pure check engine and the models."""

from __future__ import annotations

from django.db import models


class Severity(models.TextChoices):
    CRITICAL = "critical", "Critical"
    HIGH = "high", "High"
    MEDIUM = "medium", "Medium"
    LOW = "low", "Low"


SEVERITY_ORDER: tuple[Severity, ...] = (Severity.CRITICAL, Severity.HIGH, Severity.MEDIUM, Severity.LOW)

# How much one failing check costs the cluster's score. A check counts once
# however many objects it flags, so the score compares clusters of any size.
SCORE_PENALTY = {Severity.CRITICAL: 15, Severity.HIGH: 8, Severity.MEDIUM: 4, Severity.LOW: 1}


def severity_rank(severity: str) -> int:
    """0 for critical up to 3 for low; for sorting and for --fail-on."""
    return SEVERITY_ORDER.index(Severity(severity))


def score_from_checks(severity_by_check: dict[str, str]) -> int:
    """A 0-100 score from the set of checks that fire, weighted by severity."""
    penalty = sum(SCORE_PENALTY[Severity(s)] for s in severity_by_check.values())
    return max(0, 100 - penalty)


def grade(score: int | None) -> str:
    if score is None:
        return "-"
    for threshold, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= threshold:
            return letter
    return "F"
