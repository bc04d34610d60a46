"""The bytes of one snapshot or manifest file: gunzipped when compressed, and bounded.

Every reader of files goes through `LimitedReader`, so the size limit also holds
for what a gzip file expands to (a small file can be a decompression bomb) and
no parser ever sees more than the limit.
"""

from __future__ import annotations

import gc
import gzip
import io
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from audits.collect.snapshot import SnapshotError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
WHITESPACE = b" \t\r\n"
CHUNK = 256 * 1024
# `kubectl cluster-info dump` without --output-directory prints pod logs between its JSON Lists, each
# between these lines. JSON never holds a raw newline inside a string, so a line starting so is a log's.
LOG_START = b"\n==== START logs for container "
LOG_END = b"==== END logs for container "


class BinaryReadable(Protocol):
    """What a snapshot's bytes are read from: an open file, or a member of an archive."""

    def read(self, size: int = -1, /) -> bytes: ...


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a snapshot is built.

    Parsing allocates hundreds of thousands of dicts and lists that all stay
    alive; each automatic collection would scan every one of them again, which
    costs about a third of the parse time of a large snapshot. JSON trees hold
    no reference cycles, so nothing is left for the collector to find.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Prefixed:
    """A binary file whose first bytes were already read, to be read again."""

    def __init__(self, head: bytes, rest: BinaryReadable) -> None:
        self._head, self._rest = head, rest

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(size)
        if size < 0:
            data, self._head = self._head + self._rest.read(), b""
            return data
        data, self._head = self._head[:size], self._head[size:]
        if len(data) < size:
            data += self._rest.read(size - len(data))
        return data

    def seek(self, offset: int, /) -> int:
        raise io.UnsupportedOperation("a snapshot is read once, front to back")


class LimitedReader:
    """A file-like reader of a snapshot's bytes, gunzipped, at most `max_bytes` of them."""

    def __init__(self, fh: BinaryReadable, *, name: str, max_bytes: int, over_limit: str = "") -> None:
        self.name = name
        self.max_bytes = max_bytes
        # What to say when the limit is passed, if not that this file is too large.
        self.over_limit = over_limit
        self.consumed = 0
        self.at_eof = False
        head = fh.read(2)
        self.compressed = head == GZIP_MAGIC
        source = _Prefixed(head, fh)
        self._source: gzip.GzipFile | _Prefixed = (
            gzip.GzipFile(fileobj=source, mode="rb") if self.compressed else source
        )
        self._pending = b""
        # Bytes to hand out once the source is exhausted (see surround).
        self._suffix = b""
        # Skipping pod logs (see skip_log_sections): whether inside one, and bytes held back
        # because a marker may continue in the next chunk.
        self._skip_logs = False
        self._in_log = False
        self._held = b""

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        if size < 0:
            parts = [self._pending]
            self._pending = b""
            while chunk := self._read_source(CHUNK):
                parts.append(chunk)
            parts.append(self._suffix)
            self._suffix = b""
            return b"".join(parts)
        if self._pending:
            data, self._pending = self._pending[:size], self._pending[size:]
            return data
        data = self._read_source(size)
        if not data and self._suffix:
            data, self._suffix = self._suffix[:size], self._suffix[size:]
        return data

    def peek(self, size: int) -> bytes:
        """The next `size` bytes (fewer at the end of the file), left unread."""
        while len(self._pending) < size:
            chunk = self._read_source(CHUNK)
            if not chunk:
                break
            self._pending += chunk
        return self._pending[:size]

    def skip_log_sections(self) -> None:
        """Leave out the pod logs `kubectl cluster-info dump` prints between its JSON documents."""
        self._skip_logs = True
        self._pending = self._strip_logs(self._pending)

    def surround(self, prefix: bytes, suffix: bytes) -> None:
        """Read `prefix` before what is left unread and `suffix` after it, as if the file held them.

        A bare JSON array of objects becomes a List this way, and streams like one.
        """
        self._pending = prefix + self._pending
        self._suffix = suffix + self._suffix

    def first_byte(self) -> bytes:
        """The first byte that is not whitespace (b"" for an empty file), left unread.

        A UTF-8 byte order mark is dropped; UTF-16 (what Windows PowerShell's `>`
        writes) is refused with what to do instead.
        """
        while True:
            if self._pending.startswith(UTF8_BOM):
                self._pending = self._pending[len(UTF8_BOM) :]
            if self._pending.startswith(UTF16_BOMS):
                raise SnapshotError(
                    f"{self.name}: the file is UTF-16 encoded; save it as UTF-8 "
                    "(kubectl ... -o json | Out-File -Encoding utf8 FILE.json)."
                )
            stripped = self._pending.lstrip(WHITESPACE)
            if stripped:
                return stripped[:1]
            chunk = self._read_source(CHUNK)
            if not chunk:
                return b""
            self._pending += chunk

    def _read_source(self, size: int) -> bytes:
        while True:
            data = self._read_raw(size)
            if not self._skip_logs:
                return data
            data = self._strip_logs(data)
            if data or self.at_eof:
                return data

    def _strip_logs(self, data: bytes) -> bytes:
        """The bytes outside log sections; a marker cut by the chunk's end is held for the next chunk."""
        data, self._held = self._held + data, b""
        kept: list[bytes] = []
        position = 0
        while position < len(data):
            if not self._in_log:
                start = data.find(LOG_START, position)
                if start == -1:
                    hold = 0 if self.at_eof else _partial_marker(data, position)
                    kept.append(data[position : len(data) - hold])
                    self._held = data[len(data) - hold :]
                    break
                kept.append(data[position : start + 1])
                position, self._in_log = start + 1, True
            else:
                end = data.find(LOG_END, position)
                line_end = data.find(b"\n", end) if end != -1 else -1
                if line_end == -1:
                    if not self.at_eof:
                        # Keep what may be the start of the end marker, or the end marker's unfinished line.
                        self._held = data[end:] if end != -1 else data[max(position, len(data) - len(LOG_END)) :]
                    break
                # The end line's newline stays: it is the line start of a log that may follow at once.
                position, self._in_log = line_end, False
        return b"".join(kept)

    def _read_raw(self, size: int) -> bytes:
        try:
            data = self._source.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            raise SnapshotError(f"{self.name}: a damaged gzip file ({exc}).") from None
        if not data:
            self.at_eof = True
        self.consumed += len(data)
        if self.consumed > self.max_bytes:
            if self.over_limit:
                raise SnapshotError(self.over_limit)
            raise SnapshotError(
                f"{self.name}: more than {self.max_bytes:,} bytes (SNAPSHOT_MAX_BYTES)"
                f"{' once decompressed' if self.compressed else ''}. Split it, or raise the limit."
            )
        return data


def _partial_marker(data: bytes, start: int) -> int:
    """How many bytes at the end of data[start:] could begin a log section's start marker."""
    for length in range(min(len(LOG_START) - 1, len(data) - start), 0, -1):
        if LOG_START.startswith(data[len(data) - length :]):
            return length
    return 0
