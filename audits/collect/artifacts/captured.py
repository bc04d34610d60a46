"""When an artifact was captured: the time its audit takes in the cluster's history.

In order of trust:
1. the time the user gives (`--captured-at`, or the form's field);
2. the layout's own record: a must-gather's `timestamp` file (one line when
   gathering started, one when it ended; the last is taken), support-bundle-kit's
   `metadata.yaml` (`bundleCreatedAt`);
3. the newest file time the archive records for the files read (tar records
   UTC seconds; zip only with its "extended timestamp" field). An unpacked
   directory's file times are not used: copying resets them;
4. the newest time written inside the objects (creation, status conditions'
   transitions and heartbeats, container starts and ends): the artifact was
   captured at that moment or after, usually minutes after, since nodes
   report a heartbeat every few minutes.
Without any of these the time is unknown, and saying so beats guessing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from audits.collect.snapshot import Obj
from audits.moments import parse_utc

# Go's time.Time printed with %v: "2024-03-02 10:15:00.123456789 +0000 UTC m=+0.01".
GO_TIME = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)? ([+-]\d{4})")
API_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
CONDITION_TIMES = ("lastTransitionTime", "lastHeartbeatTime", "lastProbeTime", "lastUpdateTime")
STATUS_TIMES = ("startTime", "completionTime", "lastScheduleTime", "lastSuccessfulTime")


@dataclass(frozen=True)
class CaptureTime:
    at: dt.datetime | None
    # How it was chosen, as a sentence fragment: "from the must-gather's timestamp file (…/timestamp)".
    basis: str


def moment_argument(text: str) -> dt.datetime:
    """A capture time given on the command line (an argparse type)."""
    try:
        return parse_utc(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time, such as 2024-03-02T10:15:00Z") from None


def go_time_last(text: str) -> dt.datetime | None:
    """The last Go-formatted time in a text (a must-gather's `timestamp` file)."""
    found = None
    for match in GO_TIME.finditer(text):
        day, clock, offset = match.groups()
        found = dt.datetime.strptime(f"{day} {clock} {offset}", "%Y-%m-%d %H:%M:%S %z")
    return found.astimezone(dt.UTC) if found else None


def api_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.UTC)


class NewestObjectTime:
    """The newest API time seen in objects, and where it was seen.

    API times are RFC 3339 in UTC, so their first 19 characters compare as text.
    """

    def __init__(self) -> None:
        self.value = ""
        self.where = ""

    def see(self, obj: Obj, kind: str) -> None:
        metadata = obj.get("metadata")
        newest = ""
        field = ""
        if isinstance(metadata, dict):
            newest, field = _later(newest, field, metadata.get("creationTimestamp"), "metadata.creationTimestamp")
        status = obj.get("status")
        if isinstance(status, dict):
            for name in STATUS_TIMES:
                newest, field = _later(newest, field, status.get(name), f"status.{name}")
            for condition in status.get("conditions") or ():
                if isinstance(condition, dict):
                    for name in CONDITION_TIMES:
                        newest, field = _later(newest, field, condition.get(name), f"status.conditions[].{name}")
            for container in status.get("containerStatuses") or ():
                state = container.get("state") if isinstance(container, dict) else None
                if isinstance(state, dict):
                    running = state.get("running") or {}
                    terminated = state.get("terminated") or {}
                    newest, field = _later(newest, field, running.get("startedAt"), "a container's startedAt")
                    newest, field = _later(newest, field, terminated.get("finishedAt"), "a container's finishedAt")
        if newest > self.value:
            name = metadata.get("name", "") if isinstance(metadata, dict) else ""
            namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
            self.value = newest
            self.where = f"{field} of {kind} {namespace + '/' if namespace else ''}{name}"

    def merge(self, other: NewestObjectTime) -> None:
        if other.value > self.value:
            self.value, self.where = other.value, other.where

    @property
    def at(self) -> dt.datetime | None:
        return api_time(self.value) if self.value else None


def _later(current: str, field: str, candidate: Any, name: str) -> tuple[str, str]:
    if isinstance(candidate, str) and API_TIME.match(candidate):
        trimmed = candidate[:19]
        if trimmed > current:
            return trimmed, name
    return current, field


def choose(
    *,
    given: dt.datetime | None,
    recorded: tuple[dt.datetime, str] | None,
    archive_times: tuple[float, str] | None,
    objects: NewestObjectTime,
) -> CaptureTime:
    """Apply the order of trust; see the module's docstring."""
    if given is not None:
        return CaptureTime(given, "as given")
    if recorded is not None:
        return CaptureTime(recorded[0], f"from {recorded[1]}")
    if archive_times is not None:
        mtime, member = archive_times
        return CaptureTime(
            dt.datetime.fromtimestamp(mtime, dt.UTC), f"from the newest file time in the archive ({member})"
        )
    if objects.at is not None:
        return CaptureTime(
            objects.at,
            f"from the newest time inside the objects ({objects.where}); the artifact was captured then or later",
        )
    return CaptureTime(None, "unknown: the artifact records no time; give it with --captured-at")
