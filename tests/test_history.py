"""History read from intervals: open at a moment, changes in a window, and the diff between two runs.

Boundary semantics under test: an interval is [opened_at, closed_at); a window of
changes is (since, until].
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group
from django.db.models import QuerySet

from audits import services
from audits.checks.engine import Finding as Found
from audits.history import (
    ChangeKind,
    MomentError,
    RunNotComparable,
    change_counts,
    finding_changes,
    findings_open_at,
    parse_moment,
    run_for_diff,
    runs_diff,
)
from audits.models import AuditRun, Cluster, Finding, RunStatus, RunTrigger, SourceKind
from audits.severity import Severity

T0 = dt.datetime(2025, 9, 1, 2, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
SEVERITY_OF = {"KG-DIS-001": Severity.HIGH, "KG-RES-001": Severity.MEDIUM, "KG-DNS-001": Severity.CRITICAL}


def gap(name: str, check: str = "KG-DIS-001", *, namespace: str = "shop", message: str = "") -> Found:
    """A finding of `check` on Deployment namespace/name, as the engine would produce it."""
    return Found(
        check, SEVERITY_OF.get(check, Severity.LOW), "Deployment", namespace, name, "",
        message or f"{name} has one replica", {"replicas": 1}, ("KC-079",),
    )  # fmt: skip


def make_cluster(team: Group, name: str = "payments-prod") -> Cluster:
    return Cluster.objects.create(team=team, name=name, slug=name, source_kind=SourceKind.SNAPSHOT)


def audit(cluster: Cluster, at: dt.datetime, *gaps: Found, status: RunStatus = RunStatus.SUCCEEDED) -> AuditRun:
    """A finished run captured at `at` that found `gaps`, reconciled and with its aggregates, as a worker leaves it."""
    run = AuditRun.objects.create(
        cluster=cluster, trigger=RunTrigger.SCHEDULE, status=status, captured_at=at,
        started_at=at, finished_at=at + dt.timedelta(seconds=42),
    )  # fmt: skip
    if status == RunStatus.FAILED:
        return run
    result = services.findings_reconcile(run=run, findings=list(gaps), at=at)
    run.open_by_check = dict(Counter(g.check_id for g in gaps))
    run.open_by_severity = dict(Counter(str(g.severity) for g in gaps))
    run.findings_open, run.score = len(gaps), 100 - 8 * len(run.open_by_check)
    run.new_count, run.resolved_count, run.regressed_count = result.new, result.resolved, result.regressed
    run.save()
    return run


@pytest.fixture
def cluster(team: Group) -> Cluster:
    return make_cluster(team)


def names(findings: object) -> list[str]:
    return sorted(f.object_name for f in findings)  # type: ignore[attr-defined]


def only(cluster: Cluster) -> QuerySet[Cluster]:
    return Cluster.objects.filter(pk=cluster.pk)


# Open at a moment


def test_a_gap_is_open_from_the_moment_the_run_that_found_it_captured_the_cluster(cluster: Cluster) -> None:
    audit(cluster, T0, gap("api"))

    assert names(findings_open_at(only(cluster), T0 - dt.timedelta(microseconds=1))) == []
    assert names(findings_open_at(only(cluster), T0)) == ["api"]


def test_a_gap_is_no_longer_open_at_the_moment_the_run_that_found_it_gone_captured_the_cluster(
    cluster: Cluster,
) -> None:
    audit(cluster, T0, gap("api"))
    audit(cluster, T0 + DAY)

    assert names(findings_open_at(only(cluster), T0 + DAY - dt.timedelta(microseconds=1))) == ["api"]
    assert names(findings_open_at(only(cluster), T0 + DAY)) == []


def test_open_at_a_run_lists_exactly_what_that_run_found(cluster: Cluster) -> None:
    audit(cluster, T0, gap("api"), gap("web"))
    audit(cluster, T0 + DAY, gap("web"), gap("db"))
    audit(cluster, T0 + 2 * DAY, gap("api"))

    assert names(findings_open_at(only(cluster), T0 + DAY)) == ["db", "web"]
    assert names(findings_open_at(only(cluster), T0 + 2 * DAY)) == ["api"]


def test_open_at_sees_only_the_clusters_asked_for(cluster: Cluster, team: Group) -> None:
    other = make_cluster(team, "payments-staging")
    audit(cluster, T0, gap("api"))
    audit(other, T0, gap("web"))

    assert names(findings_open_at(only(cluster), T0)) == ["api"]
    assert names(findings_open_at(Cluster.objects.filter(team=team), T0)) == ["api", "web"]


def test_open_at_lists_the_most_severe_gaps_first(cluster: Cluster) -> None:
    audit(cluster, T0, gap("a", "KG-RES-001"), gap("b", "KG-DNS-001"), gap("c", "KG-DIS-001"))

    assert [f.severity for f in findings_open_at(only(cluster), T0)] == ["critical", "high", "medium"]


# Changes in a window


def test_a_window_holds_the_changes_after_since_up_to_and_including_until(cluster: Cluster) -> None:
    audit(cluster, T0, gap("api"))
    audit(cluster, T0 + DAY)
    audit(cluster, T0 + 2 * DAY, gap("api"))

    changes = [(c.kind, c.at) for c in finding_changes(only(cluster), T0, T0 + 2 * DAY)]

    assert changes == [(ChangeKind.CLOSED, T0 + DAY), (ChangeKind.REGRESSED, T0 + 2 * DAY)]
    assert [c.kind for c in finding_changes(only(cluster), T0 - DAY, T0)] == [ChangeKind.OPENED]


def test_at_one_instant_a_close_comes_before_an_open(cluster: Cluster) -> None:
    audit(cluster, T0, gap("api"))
    audit(cluster, T0 + DAY, gap("web"))

    assert [c.kind for c in finding_changes(only(cluster), T0, T0 + DAY)] == [ChangeKind.CLOSED, ChangeKind.OPENED]


def test_change_counts_split_first_openings_from_regressions(cluster: Cluster) -> None:
    audit(cluster, T0, gap("api"))
    audit(cluster, T0 + DAY, gap("web"))
    audit(cluster, T0 + 2 * DAY, gap("api"), gap("web"))

    counts = change_counts(only(cluster), T0 - DAY, T0 + 2 * DAY)

    assert (counts.opened, counts.regressed, counts.closed) == (2, 1, 1)


# Timestamps users type


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-09-01T14:51:00Z", dt.datetime(2026, 9, 1, 14, 51, tzinfo=dt.UTC)),
        ("2026-09-01T16:51:00+02:00", dt.datetime(2026, 9, 1, 14, 51, tzinfo=dt.UTC)),
        ("2026-09-01T14:51", dt.datetime(2026, 9, 1, 14, 51, tzinfo=dt.UTC)),
        ("2026-09-01", dt.datetime(2026, 9, 1, tzinfo=dt.UTC)),
    ],
)
def test_it_reads_iso_timestamps_as_utc_unless_they_carry_an_offset(text: str, expected: dt.datetime) -> None:
    assert parse_moment(text, parameter="at") == expected


def test_a_bad_timestamp_names_the_parameter_and_the_expected_format() -> None:
    with pytest.raises(MomentError) as caught:
        parse_moment("yesterday", parameter="--since")

    assert str(caught.value).startswith("--since: 'yesterday' is not a timestamp; expected ISO 8601 such as ")


# Diff between two runs


def test_a_diff_puts_every_gap_in_one_group(cluster: Cluster) -> None:
    audit(cluster, T0, gap("kept"), gap("fixed"), gap("flapping"), gap("returning"))
    base = audit(cluster, T0 + DAY, gap("kept"), gap("fixed"), gap("flapping"))
    audit(cluster, T0 + 2 * DAY, gap("kept"), gap("new"))
    target = audit(cluster, T0 + 3 * DAY, gap("kept"), gap("new"), gap("flapping"), gap("returning"))

    diff = runs_diff(cluster, target, base)  # any order: the older run is the base

    assert (diff.base, diff.target) == (base, target)
    grouped = {kind.value: names(findings) for kind, findings in diff.groups()}
    assert grouped == {
        "regressed": ["flapping", "returning"],
        "opened": ["new"],
        "closed": ["fixed"],
        "unchanged": ["kept"],
    }
    assert sorted((k.value, f.object_name) for k, f in diff.changes()) == sorted(
        (kind, name) for kind, group in grouped.items() for name in group
    )


def test_a_run_that_failed_cannot_be_compared(cluster: Cluster) -> None:
    failed = audit(cluster, T0, status=RunStatus.FAILED)

    with pytest.raises(RunNotComparable, match=f"from: run {failed.pk} is failed; only succeeded or partial runs"):
        run_for_diff(cluster, failed.pk, parameter="from")


def test_a_run_of_another_cluster_cannot_be_compared(cluster: Cluster, team: Group) -> None:
    elsewhere = audit(make_cluster(team, "payments-staging"), T0)

    with pytest.raises(RunNotComparable, match=f"to: run {elsewhere.pk} is not a run of payments-prod"):
        run_for_diff(cluster, elsewhere.pk, parameter="to")


# A year of nightly history, checked against a brute-force replay of the runs


def seeded(seed: int) -> random.Random:
    """Reproducible pseudo-random test data (not for anything secret)."""
    return random.Random(seed)  # noqa: S311


class NightlyYear:
    """365 nightly audits of 40 gaps that each come and go at random (fixed seed).

    `times` and `sets` are the replay: when each run captured the cluster and the
    fingerprints it found. The history is stored either through the real
    reconcile (`reconcile`) or, faster, as the intervals the replay implies
    (`bulk_create`).
    """

    def __init__(self, days: int = 365, gaps: int = 40, seed: int = 7) -> None:
        rng = seeded(seed)
        self.gaps = [gap(f"app-{i:02d}", ("KG-DIS-001", "KG-RES-001", "KG-DNS-001")[i % 3]) for i in range(gaps)]
        self.name_of = {g.fingerprint: g.name for g in self.gaps}
        present = {g.fingerprint for g in self.gaps if rng.random() < 0.5}
        self.times: list[dt.datetime] = []
        self.sets: list[frozenset[str]] = []
        for day in range(days):
            # Each gap flips with a small chance, so intervals last days to weeks and many come back.
            present = {g.fingerprint for g in self.gaps if (g.fingerprint in present) != (rng.random() < 0.08)}
            self.times.append(T0 + day * DAY + dt.timedelta(minutes=rng.randrange(0, 90)))
            self.sets.append(frozenset(present))

    def reconcile(self, cluster: Cluster) -> list[AuditRun]:
        return [
            audit(cluster, at, *(g for g in self.gaps if g.fingerprint in found))
            for at, found in zip(self.times, self.sets, strict=True)
        ]

    def bulk_create(self, cluster: Cluster) -> None:
        """The intervals the replay implies, written in one statement (no runs)."""
        by_fp = {g.fingerprint: g for g in self.gaps}
        intervals: list[Finding] = []
        open_since: dict[str, dt.datetime] = {}
        seen: set[str] = set()
        previous: frozenset[str] = frozenset()
        for at, found in zip(self.times, self.sets, strict=True):
            for fp in found - previous:
                open_since[fp] = at
            for fp in previous - found:
                intervals.append(self._interval(cluster, by_fp[fp], open_since.pop(fp), at, seen))
            seen |= previous - found
            previous = found
        intervals += [self._interval(cluster, by_fp[fp], opened, None, seen) for fp, opened in open_since.items()]
        Finding.objects.bulk_create(intervals)

    @staticmethod
    def _interval(
        cluster: Cluster, g: Found, opened: dt.datetime, closed: dt.datetime | None, closed_before: set[str]
    ) -> Finding:
        # A gap closed before this interval opened makes it a regression.
        earlier = g.fingerprint in closed_before
        return Finding(
            cluster=cluster, fingerprint=g.fingerprint, check_id=g.check_id, severity=g.severity,
            object_kind=g.kind, object_namespace=g.namespace, object_name=g.name, message=g.message,
            evidence=g.evidence, opened_at=opened, last_seen_at=closed or opened, closed_at=closed,
            is_regression=earlier,
        )  # fmt: skip

    def open_at(self, moment: dt.datetime) -> list[str]:
        """What the newest run at or before `moment` found."""
        latest = None
        for at, found in zip(self.times, self.sets, strict=True):
            if at > moment:
                break
            latest = found
        return sorted(self.name_of[fp] for fp in latest or ())

    def changes(self, since: dt.datetime, until: dt.datetime) -> Counter[str]:
        seen: set[str] = set()
        previous: frozenset[str] = frozenset()
        events: Counter[str] = Counter()
        for at, found in zip(self.times, self.sets, strict=True):
            if since < at <= until:
                for fp in found - previous:
                    events["regressed" if fp in seen else "opened"] += 1
                events["closed"] += len(previous - found)
            seen |= found
            previous = found
        return events

    def diff(self, first: int, second: int) -> dict[str, set[str]]:
        """The groups of a diff between runs `first` < `second`, by replaying the runs in between."""
        groups: dict[str, set[str]] = {"opened": set(), "regressed": set(), "unchanged": set()}
        groups["closed"] = set(self.sets[first] - self.sets[second])
        for fp in self.sets[second]:
            # The run that opened the interval still open at `second`.
            start = second
            while start > first and fp in self.sets[start - 1]:
                start -= 1
            if start == first:
                groups["unchanged"].add(fp)
            elif any(fp in found for found in self.sets[:start]):
                groups["regressed"].add(fp)
            else:
                groups["opened"].add(fp)
        return groups

    def random_moments(self, rng: random.Random, count: int) -> list[dt.datetime]:
        start, end = self.times[0] - DAY, self.times[-1] + DAY
        moments = [start + (end - start) * rng.random() for _ in range(count)]
        # Exactly at capture times too, where the boundary rule decides.
        return moments + rng.sample(self.times, 20)


@pytest.fixture(scope="module")
def year(django_db_setup: None, django_db_blocker: object) -> Iterator[tuple[NightlyYear, Cluster, list[AuditRun]]]:
    """Built once for the module through the real reconcile (365 runs take seconds), removed after it."""
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        team = Group.objects.create(name="history-year")
        cluster = make_cluster(team, "history-year")
        history = NightlyYear()
        runs = history.reconcile(cluster)
    yield history, cluster, runs
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        cluster.delete()
        team.delete()


def test_the_year_has_hundreds_of_intervals_and_regressions(db: None, year: tuple[NightlyYear, Cluster, list]) -> None:
    _, cluster, _ = year

    assert Finding.objects.filter(cluster=cluster).count() > 300
    assert Finding.objects.filter(cluster=cluster, is_regression=True).count() > 200


def test_open_at_any_moment_of_a_year_equals_replaying_the_runs(
    db: None, year: tuple[NightlyYear, Cluster, list]
) -> None:
    history, cluster, _ = year
    for moment in history.random_moments(seeded(11), 150):
        assert names(findings_open_at(only(cluster), moment)) == history.open_at(moment), moment


def test_changes_in_any_window_of_a_year_equal_replaying_the_runs(
    db: None, year: tuple[NightlyYear, Cluster, list]
) -> None:
    history, cluster, _ = year
    rng = seeded(13)
    for _ in range(60):
        since, until = sorted(rng.sample(history.random_moments(rng, 2), 2))
        counts = change_counts(only(cluster), since, until)
        streamed = Counter(c.kind.value for c in finding_changes(only(cluster), since, until))
        expected = history.changes(since, until)
        assert Counter(opened=counts.opened, regressed=counts.regressed, closed=counts.closed) == expected
        assert streamed == expected


def test_open_at_since_plus_the_window_s_changes_is_open_at_until(
    db: None, year: tuple[NightlyYear, Cluster, list]
) -> None:
    history, cluster, _ = year
    since, until = history.times[100] + dt.timedelta(hours=3), history.times[200]
    state = {f.pk for f in findings_open_at(only(cluster), since)}

    for change in finding_changes(only(cluster), since, until):
        if change.kind == ChangeKind.CLOSED:
            state.remove(change.finding.pk)
        else:
            state.add(change.finding.pk)

    assert state == {f.pk for f in findings_open_at(only(cluster), until)}


def test_a_diff_between_any_two_runs_of_a_year_equals_replaying_the_runs(
    db: None, year: tuple[NightlyYear, Cluster, list]
) -> None:
    history, cluster, runs = year
    rng = seeded(17)
    for _ in range(25):
        first, second = sorted(rng.sample(range(len(runs)), 2))
        diff = runs_diff(cluster, runs[second], runs[first])
        groups = {kind.value: {f.fingerprint for f in findings} for kind, findings in diff.groups()}
        assert groups == history.diff(first, second), (first, second)


def test_the_intervals_the_replay_implies_are_those_reconcile_wrote(
    db: None, year: tuple[NightlyYear, Cluster, list], team: Group
) -> None:
    history, reconciled, _ = year
    replayed = make_cluster(team, "replayed")
    history.bulk_create(replayed)

    def intervals(cluster: Cluster) -> list[tuple[object, ...]]:
        rows = Finding.objects.filter(cluster=cluster).order_by("fingerprint", "opened_at")
        return list(rows.values_list("fingerprint", "opened_at", "closed_at", "is_regression"))

    assert intervals(replayed) == intervals(reconciled)
