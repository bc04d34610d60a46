"""The diff between two runs of a cluster as CSV or JSON, streamed."""

from __future__ import annotations

from collections.abc import Iterator

from audits.exports.records import CSV_FINDING_COLUMNS, finding_csv_values, finding_record, run_record
from audits.exports.streaming import buffered, csv_row, json_array, json_value
from audits.history import RunDiff


def diff_filename(diff: RunDiff, extension: str) -> str:
    return f"kubegap-{diff.cluster.slug}-diff-{diff.base.pk}-{diff.target.pk}.{extension}"


def diff_csv(diff: RunDiff) -> Iterator[str]:
    """A row per gap open after either run; `change` says which group it falls in."""

    def rows() -> Iterator[str]:
        yield csv_row(["change", *CSV_FINDING_COLUMNS])
        for kind, finding in diff.changes():
            yield csv_row([kind.value, *finding_csv_values(finding)])

    return buffered(rows())


def diff_json(diff: RunDiff) -> Iterator[str]:
    def pieces() -> Iterator[str]:
        header = {
            "format": "kubegap.run-diff/1",
            "cluster": diff.cluster.slug,
            "from_run": run_record(diff.base),
            "to_run": run_record(diff.target),
            "summary": {kind.value: findings.count() for kind, findings in diff.groups()},
        }
        yield json_value(header)[:-1] + ', "changes": '
        yield from json_array({"change": kind.value, "finding": finding_record(f)} for kind, f in diff.changes())
        yield "}\n"

    return buffered(pieces())
