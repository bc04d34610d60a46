"""Small pieces every streamed export shares."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from audits.exports.escaping import csv_cell

# Bytes of text gathered before a chunk is handed to the web server: large
# enough to avoid a write per row, small enough to keep memory flat.
CHUNK_CHARS = 64 * 1024


def buffered(pieces: Iterable[str], size: int = CHUNK_CHARS) -> Iterator[str]:
    """Join small pieces of text into chunks of about `size` characters."""
    parts: list[str] = []
    length = 0
    for piece in pieces:
        parts.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(parts)
            parts, length = [], 0
    if parts:
        yield "".join(parts)


class _Echo:
    """A file-like object whose write returns the text, so csv.writer produces lines to yield."""

    def write(self, value: str) -> str:
        return value


_CSV = csv.writer(_Echo(), lineterminator="\r\n")


def csv_row(values: Iterable[object]) -> str:
    """One CSV line with every cell neutralised against formula injection."""
    return str(_CSV.writerow([csv_cell(v) for v in values]))


def json_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


def json_array(items: Iterable[Any]) -> Iterator[str]:
    """A JSON array written one element at a time."""
    yield "["
    for position, item in enumerate(items):
        yield ("\n" if position == 0 else ",\n") + json_value(item)
    yield "]"
