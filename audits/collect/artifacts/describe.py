"""What a snapshot read from an artifact contains and lacks, and when it was captured, in words.

The audit and cluster_add commands print it; the add-a-cluster page says the capture sentence.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from audits.collect.artifacts.load import summary_of
from audits.collect.snapshot import Snapshot

NAMESPACES_LISTED = 10


def capture_sentence(snapshot: Snapshot, *, given: bool = False) -> str:
    """ "captured at 2024-03-02 10:15:00 UTC, from the must-gather's timestamp file (…)"."""
    summary = summary_of(snapshot)
    basis = "as given" if given else summary["captured_at_from"] if summary else "as the snapshot records it"
    if snapshot.captured_at is None:
        return f"captured at an unknown time ({basis})" if summary else "captured at an unknown time"
    return f"captured at {snapshot.captured_at:%Y-%m-%d %H:%M:%S} UTC, {basis}"


def describe(snapshot: Snapshot, *, given: bool = False) -> list[str]:
    """Lines saying what the artifact was, when it was captured, what it held and what it lacked."""
    summary = summary_of(snapshot)
    lines: list[str] = []
    if summary is not None:
        lines.append(
            f"Read {summary['label']}: {summary['files_read']:,} file(s) read; {summary['files_not_read']:,} not "
            "read (logs, events, Secrets, repeats and kinds kubegap-web does not read)."
        )
        if summary["namespace_count"]:
            shown = ", ".join(summary["namespaces"][:NAMESPACES_LISTED])
            more = summary["namespace_count"] - min(NAMESPACES_LISTED, len(summary["namespaces"]))
            rest = f" and {more:,} more" if more else ""
            lines.append(
                f"It covers {summary['namespace_count']:,} namespace(s): {shown}{rest}; "
                "other namespaces of the cluster are not in it."
            )
    sentence = capture_sentence(snapshot, given=given)
    lines.append(f"{sentence[0].upper()}{sentence[1:]}.")
    held = ", ".join(f"{kind} {len(objects):,}" for kind, objects in sorted(snapshot.objects.items()))
    lines.append(f"Contains (objects by kind): {held or 'nothing'}.")
    for reason, kinds in _by_reason(snapshot.not_collected).items():
        lines.append(f"Not collected ({reason}): {', '.join(kinds)}.")
    return lines


def snapshot_facts(snapshot: Snapshot, *, given: bool = False) -> dict[str, Any]:
    """The same, as data for JSON reports."""
    summary = summary_of(snapshot)
    return {
        "source": snapshot.source,
        "artifact": summary,
        "captured_at": snapshot.captured_at.isoformat() if snapshot.captured_at else None,
        "captured_at_from": "as given" if given else summary["captured_at_from"] if summary else None,
        "server_version": snapshot.server_version,
        "collected": {kind: len(objects) for kind, objects in sorted(snapshot.objects.items())},
        "not_collected": dict(sorted(snapshot.not_collected.items())),
        "warnings": list(snapshot.warnings),
    }


def _by_reason(not_collected: dict[str, str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for kind, reason in sorted(not_collected.items()):
        grouped[reason].append(kind)
    return dict(grouped)
