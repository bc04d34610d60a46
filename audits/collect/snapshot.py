"""A snapshot: what was read from one cluster at one moment, projected for checks.

Objects are kept as plain dicts of the Kubernetes JSON, minus the bulk no check
reads (managedFields, last-applied annotations). A snapshot also records which
kinds were collected: a kind that is absent is "not collected", and checks that
need it are reported as not evaluated rather than silently passing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from audits.collect.projection import Obj, project

FORMAT = "kubegap.snapshot/v1"

__all__ = ["FORMAT", "Obj", "Snapshot", "SnapshotError", "project"]


class SnapshotError(ValueError):
    """A snapshot that cannot be read, with what to fix."""


@dataclass
class Snapshot:
    objects: dict[str, list[Obj]] = field(default_factory=dict)
    # kind -> why it was not collected (forbidden, not served, not in the file).
    not_collected: dict[str, str] = field(default_factory=dict)
    captured_at: dt.datetime | None = None
    source: str = ""
    server_version: str = ""
    # kind -> {objects, pages, bytes, seconds, retries, errors}
    stats: dict[str, dict[str, float]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def collected(self) -> frozenset[str]:
        return frozenset(self.objects)

    def add(self, obj: Obj, kind: str | None = None) -> bool:
        """Project and keep one object; False when it is not kept."""
        kind = kind or obj.get("kind") or ""
        projected = project(kind, obj)
        if projected is None:
            return False
        self.objects.setdefault(kind, []).append(projected)
        return True

    def mark_collected(self, kind: str) -> None:
        """Record that every object of a kind was read, even if there were none."""
        self.objects.setdefault(kind, [])
        self.not_collected.pop(kind, None)

    def count(self) -> int:
        return sum(len(items) for items in self.objects.values())
