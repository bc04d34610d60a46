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
from typing import IO

from audits.collect.snapshot import SnapshotError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
WHITESPACE = b" \t\r\n"
CHUNK = 256 * 1024


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

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
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

    def __init__(self, fh: IO[bytes], *, name: str, max_bytes: int, over_limit: str = "") -> None:
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

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""
        if size < 0:
            parts = [self._pending]
            self._pending = b""
            while chunk := self._read_source(CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        if self._pending:
            data, self._pending = self._pending[:size], self._pending[size:]
            return data
        return self._read_source(size)

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
