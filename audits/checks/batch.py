"""Batch: Jobs and CronJobs that retry or pile up without a ceiling."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, condition_status, controller_ref
from audits.severity import Severity

DEFAULT_BACKOFF_LIMIT = 6


def _finished(job: dict[str, Any]) -> bool:
    return condition_status(job, "Complete") == "True" or condition_status(job, "Failed") == "True"


def _unbounded(job_spec: dict[str, Any]) -> bool:
    return "activeDeadlineSeconds" not in job_spec and job_spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT) == (
        DEFAULT_BACKOFF_LIMIT
    )


@check(
    id="KG-BAT-001",
    title="Job has no deadline and the default retries",
    area="batch",
    severity=Severity.MEDIUM,
    needs=("Job", "CronJob"),
    cases=("KC-015", "KC-052"),
    why=(
        "A Job without activeDeadlineSeconds runs for as long as it takes, and the default backoffLimit retries a "
        "failing pod six times, each retry often on another node. A retried reindex Job exhausted node after node "
        "this way."
    ),
    fix="Set activeDeadlineSeconds to a generous bound on the run time and a backoffLimit that fits the work "
    "(often 1 to 3).",
)
def job_without_deadline(index: SnapshotIndex) -> Iterator[Hit]:
    for job in index.of_kind("Job"):
        if controller_ref(job) is not None or _finished(job):
            continue  # CronJob-made Jobs are judged on their CronJob; finished ones can do no more harm
        spec = job.get("spec", {})
        if _unbounded(spec):
            yield Hit(
                job,
                "Job has no activeDeadlineSeconds and the default backoffLimit of 6: a failing run keeps retrying "
                "with no time limit.",
                {"spec.activeDeadlineSeconds": None, "spec.backoffLimit": spec.get("backoffLimit", 6)},
            )
    for cronjob in index.of_kind("CronJob"):
        spec = cronjob.get("spec", {}).get("jobTemplate", {}).get("spec", {})
        if _unbounded(spec):
            yield Hit(
                cronjob,
                "CronJob's Jobs have no activeDeadlineSeconds and the default backoffLimit of 6: a failing run keeps "
                "retrying with no time limit.",
                {
                    "jobTemplate.spec.activeDeadlineSeconds": None,
                    "jobTemplate.spec.backoffLimit": spec.get("backoffLimit", 6),
                },
            )


@check(
    id="KG-BAT-002",
    title="CronJob allows concurrent runs with no deadline",
    area="batch",
    severity=Severity.MEDIUM,
    needs=("CronJob",),
    cases=("KC-052", "KC-015"),
    why=(
        "With concurrencyPolicy: Allow (the default) a new run starts on schedule even when the previous one has "
        "not finished. When runs slow down, they pile up and compete for the same nodes and dependencies."
    ),
    fix="Set concurrencyPolicy: Forbid (or Replace), and an activeDeadlineSeconds shorter than the schedule interval.",
)
def cronjob_pile_up(index: SnapshotIndex) -> Iterator[Hit]:
    for cronjob in index.of_kind("CronJob"):
        spec = cronjob.get("spec", {})
        if spec.get("suspend") or spec.get("concurrencyPolicy", "Allow") != "Allow":
            continue
        if "activeDeadlineSeconds" in spec.get("jobTemplate", {}).get("spec", {}):
            continue
        yield Hit(
            cronjob,
            f"CronJob ({spec.get('schedule')}) allows concurrent runs and has no deadline: slow runs pile up on "
            "top of each other.",
            {
                "spec.concurrencyPolicy": spec.get("concurrencyPolicy", "Allow (default)"),
                "spec.schedule": spec.get("schedule"),
            },
        )
