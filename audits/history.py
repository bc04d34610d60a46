"""Reads of findings history: what was open at a moment, what changed in a
window, and what changed between two runs of a cluster.

History is stored as intervals (see ``audits.models.Finding``), and every
question here is answered from the intervals alone, so it stays exact after the
runs that observed them are pruned.

Boundary semantics (one rule everywhere):

* An interval is half-open, ``[opened_at, closed_at)``. A run that captured the
  cluster at T and found a gap opens its interval at exactly T; a run at T that
  no longer finds it closes the interval at exactly T.
* So a finding is **open at T** when ``opened_at <= T`` and (``closed_at`` is
  null or ``closed_at > T``). At the capture time of a run, "open at" lists
  exactly what that run found.
* A **window** of changes is ``(since, until]``: an event at ``since`` is not in
  it, an event at ``until`` is. Then, for every gap, what was open at ``since``
  plus what opened in the window minus what closed in it is what was open at
  ``until``; consecutive windows never count an event twice.
"""

from __future__ import annotations

import datetime as dt
import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from django.db.models import Exists, OuterRef, Q, QuerySet

from audits.models import COUNTED_STATUSES, AuditRun, Cluster, Finding
from audits.moments import parse_utc
from audits.selectors import SEVERITY_RANK, counted_runs

# Rows fetched per round trip when a history read is streamed.
CHUNK_SIZE = 500

# Readers see the most severe gaps first, then by check and object.
READING_ORDER = (SEVERITY_RANK, "check_id", "cluster__name", "object_namespace", "object_kind", "object_name", "id")

# Runs whose findings were reconciled, so the intervals reflect what they saw.


class MomentError(ValueError):
    """A timestamp given by a user that cannot be read; names the parameter."""

    def __init__(self, parameter: str, value: str) -> None:
        self.parameter = parameter
        super().__init__(
            f"{parameter}: {value!r} is not a timestamp; expected ISO 8601 such as 2026-09-01T14:51:00Z "
            "(a time without an offset is taken as UTC; a date alone means its midnight UTC)"
        )


def parse_moment(value: str, *, parameter: str) -> dt.datetime:
    """Read an ISO 8601 timestamp a user typed, as an aware UTC datetime."""
    try:
        return parse_utc(value)
    except ValueError:
        raise MomentError(parameter, value) from None


def iso(moment: dt.datetime | None) -> str:
    """A timestamp as exports write it: UTC, seconds precision or finer, with Z."""
    if moment is None:
        return ""
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def open_at_filter(at: dt.datetime, prefix: str = "") -> Q:
    """The condition "open at `at`" on Finding intervals (see the module docstring)."""
    return Q(**{f"{prefix}opened_at__lte": at}) & (
        Q(**{f"{prefix}closed_at__isnull": True}) | Q(**{f"{prefix}closed_at__gt": at})
    )


def findings_open_at(clusters: QuerySet[Cluster], at: dt.datetime) -> QuerySet[Finding]:
    """Exactly the findings of these clusters that were open at `at`, most severe first."""
    return (
        Finding.objects.filter(cluster__in=clusters)
        .filter(open_at_filter(at))
        .select_related("cluster")
        .order_by(*READING_ORDER)
    )


class ChangeKind(StrEnum):
    OPENED = "opened"  # a gap seen for the first time
    REGRESSED = "regressed"  # a gap that had been fixed and came back
    CLOSED = "closed"  # a gap no longer found
    UNCHANGED = "unchanged"  # open before and after (only in run diffs)


@dataclass(frozen=True)
class Change:
    """One event of a finding interval: when it happened and which interval."""

    kind: ChangeKind
    at: dt.datetime
    finding: Finding


def _opened_in(clusters: QuerySet[Cluster], since: dt.datetime, until: dt.datetime) -> QuerySet[Finding]:
    return (
        Finding.objects.filter(cluster__in=clusters, opened_at__gt=since, opened_at__lte=until)
        .select_related("cluster")
        .order_by("opened_at", *READING_ORDER)
    )


def _closed_in(clusters: QuerySet[Cluster], since: dt.datetime, until: dt.datetime) -> QuerySet[Finding]:
    return (
        Finding.objects.filter(cluster__in=clusters, closed_at__gt=since, closed_at__lte=until)
        .select_related("cluster")
        .order_by("closed_at", *READING_ORDER)
    )


def finding_changes(clusters: QuerySet[Cluster], since: dt.datetime, until: dt.datetime) -> Iterator[Change]:
    """Every open, regression and close in the window ``(since, until]``, oldest first.

    Two streamed queries merged by time, so a year of history is read in
    constant memory. An interval that opened and closed inside the window
    yields two changes.
    """
    opened = (
        Change(ChangeKind.REGRESSED if f.is_regression else ChangeKind.OPENED, f.opened_at, f)
        for f in _opened_in(clusters, since, until).iterator(chunk_size=CHUNK_SIZE)
    )
    closed = (
        Change(ChangeKind.CLOSED, f.closed_at, f)
        for f in _closed_in(clusters, since, until).iterator(chunk_size=CHUNK_SIZE)
        if f.closed_at is not None
    )
    # At one instant a close sorts before an open, as the run that made both saw it.
    return heapq.merge(closed, opened, key=lambda c: (c.at, c.kind != ChangeKind.CLOSED))


@dataclass(frozen=True)
class ChangeCounts:
    opened: int
    regressed: int
    closed: int


def change_counts(clusters: QuerySet[Cluster], since: dt.datetime, until: dt.datetime) -> ChangeCounts:
    opened = Finding.objects.filter(cluster__in=clusters, opened_at__gt=since, opened_at__lte=until)
    return ChangeCounts(
        opened=opened.filter(is_regression=False).count(),
        regressed=opened.filter(is_regression=True).count(),
        closed=Finding.objects.filter(cluster__in=clusters, closed_at__gt=since, closed_at__lte=until).count(),
    )


class RunNotComparable(ValueError):
    """A run that cannot be one side of a diff, with the reason."""


def run_for_diff(cluster: Cluster, run_id: int, *, parameter: str) -> AuditRun:
    """One of the cluster's runs whose findings were reconciled, or a clear reason why not."""
    run = AuditRun.objects.filter(cluster=cluster, pk=run_id).first()
    if run is None:
        raise RunNotComparable(f"{parameter}: run {run_id} is not a run of {cluster.name}.")
    if run.status not in COUNTED_STATUSES or run.captured_at is None:
        raise RunNotComparable(
            f"{parameter}: run {run_id} is {run.status}; only succeeded or partial runs have findings to compare."
        )
    return run


@dataclass(frozen=True)
class RunDiff:
    """What was open after run `base` versus after run `target` of one cluster.

    The older run is always the base. Every gap open after either run falls in
    exactly one group:

    * opened: open after target, absent after base, never seen before;
    * regressed: open after target through an interval that opened after base
      and reopens a gap fixed earlier (also when it was open after base, was
      fixed in between and came back);
    * closed: open after base, absent after target;
    * unchanged: the same interval open after both.
    """

    cluster: Cluster
    base: AuditRun
    target: AuditRun

    @property
    def _base_at(self) -> dt.datetime:
        assert self.base.captured_at is not None  # checked by run_for_diff
        return self.base.captured_at

    @property
    def _target_at(self) -> dt.datetime:
        assert self.target.captured_at is not None
        return self.target.captured_at

    def _findings(self) -> QuerySet[Finding]:
        return Finding.objects.filter(cluster=self.cluster).select_related("cluster").order_by(*READING_ORDER)

    def opened(self) -> QuerySet[Finding]:
        return self._findings().filter(
            open_at_filter(self._target_at), opened_at__gt=self._base_at, is_regression=False
        )

    def regressed(self) -> QuerySet[Finding]:
        return self._findings().filter(open_at_filter(self._target_at), opened_at__gt=self._base_at, is_regression=True)

    def closed(self) -> QuerySet[Finding]:
        still_open = Finding.objects.filter(cluster=self.cluster, fingerprint=OuterRef("fingerprint")).filter(
            open_at_filter(self._target_at)
        )
        return self._findings().filter(open_at_filter(self._base_at)).exclude(Exists(still_open))

    def unchanged(self) -> QuerySet[Finding]:
        return (
            self._findings()
            .filter(open_at_filter(self._base_at))
            .filter(Q(closed_at__isnull=True) | Q(closed_at__gt=self._target_at))
        )

    def groups(self) -> list[tuple[ChangeKind, QuerySet[Finding]]]:
        """The groups in the order a reader wants them: what got worse first."""
        return [
            (ChangeKind.REGRESSED, self.regressed()),
            (ChangeKind.OPENED, self.opened()),
            (ChangeKind.CLOSED, self.closed()),
            (ChangeKind.UNCHANGED, self.unchanged()),
        ]

    def changes(self) -> Iterator[tuple[ChangeKind, Finding]]:
        """Every gap of the diff with its group, streamed."""
        for kind, findings in self.groups():
            for finding in findings.iterator(chunk_size=CHUNK_SIZE):
                yield kind, finding


def runs_diff(cluster: Cluster, first: AuditRun, second: AuditRun) -> RunDiff:
    """The diff between two runs of a cluster, the older one as base whichever order they come in."""
    assert first.captured_at is not None and second.captured_at is not None
    base, target = sorted((first, second), key=lambda run: (run.captured_at, run.pk))
    return RunDiff(cluster=cluster, base=base, target=target)


def evaluated_runs(cluster: Cluster) -> QuerySet[AuditRun]:
    """The cluster's runs that can be compared, newest first."""
    return counted_runs(cluster).filter(captured_at__isnull=False)
