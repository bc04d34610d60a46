"""KG-BAT: Jobs without ceilings, CronJobs that pile up."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

TASK = [b.container("task", "batch/reindex:3.2.0")]


def test_a_job_without_deadline_and_with_default_retries_is_found() -> None:
    [finding] = found("KG-BAT-001", b.job("reindex", "search", TASK))

    assert (finding.kind, finding.name) == ("Job", "reindex")
    assert "no activeDeadlineSeconds and the default backoffLimit of 6" in finding.message
    assert finding.evidence["spec.backoffLimit"] == 6


def test_bounded_or_finished_jobs_pass() -> None:
    assert found("KG-BAT-001", b.job("reindex", "search", TASK, active_deadline=3600)) == []
    assert found("KG-BAT-001", b.job("reindex", "search", TASK, backoff_limit=1)) == []
    assert found("KG-BAT-001", b.job("reindex", "search", TASK, complete=True)) == []


def test_a_cronjob_is_judged_on_its_job_template() -> None:
    [finding] = found("KG-BAT-001", b.cronjob("nightly", "search", TASK))

    assert (finding.kind, finding.name) == ("CronJob", "nightly")
    assert found("KG-BAT-001", b.cronjob("nightly", "search", TASK, active_deadline=1800)) == []


def test_a_cronjob_allowing_concurrent_runs_without_deadline_is_found() -> None:
    [finding] = found("KG-BAT-002", b.cronjob("nightly", "search", TASK, schedule="*/5 * * * *"))

    assert "CronJob (*/5 * * * *) allows concurrent runs and has no deadline" in finding.message
    assert finding.evidence["spec.concurrencyPolicy"] == "Allow (default)"
    assert found("KG-BAT-002", b.cronjob("nightly", "search", TASK, concurrency_policy="Forbid")) == []
