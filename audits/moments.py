"""Reading times people and files give us."""

from __future__ import annotations

import datetime as dt


def parse_utc(text: str) -> dt.datetime:
    """An ISO 8601 time as an aware UTC datetime; one without an offset is UTC.

    Raises ValueError; callers word the error for where the time came from.
    """
    moment = dt.datetime.fromisoformat(text.strip())
    return moment.astimezone(dt.UTC) if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
