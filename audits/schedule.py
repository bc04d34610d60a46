"""Cron schedules in a cluster's own timezone."""

from __future__ import annotations

import datetime as dt
import zoneinfo

from croniter import croniter
from croniter.croniter import CroniterError


class ScheduleError(ValueError):
    """A cron expression or timezone that cannot be used, with what to fix."""


def validate_schedule(cron: str, timezone: str) -> None:
    if not croniter.is_valid(cron) or len(cron.split()) != 5:
        raise ScheduleError(
            f"{cron!r} is not a cron expression of five fields (minute hour day-of-month month day-of-week), "
            "for example '0 2 * * *' for 02:00 every day."
        )
    try:
        zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"{timezone!r} is not a known timezone; use an IANA name such as 'Europe/Berlin' or 'UTC'."
        ) from None


def next_slot(cron: str, timezone: str, after: dt.datetime) -> dt.datetime:
    """The first time strictly after `after` that the schedule fires, in UTC."""
    validate_schedule(cron, timezone)
    local = after.astimezone(zoneinfo.ZoneInfo(timezone))
    try:
        fire = croniter(cron, local).get_next(dt.datetime)
    except CroniterError as exc:
        raise ScheduleError(f"{cron!r}: {exc}") from None
    return fire.astimezone(dt.UTC)
