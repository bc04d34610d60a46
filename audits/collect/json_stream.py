"""Streaming JSON: a List of 150,000 pods is projected one item at a time.

ijson's C backend (yajl2_c) parses the stream and builds the Python objects. It
is asked for whole top-level documents (so one file may hold several Lists one
after another, as `kubectl cluster-info dump` writes them), but the documents
are consumed while they are being built:

1. ijson creates every JSON object through our `map_type` factory, and puts a
   container into its parent as soon as it is opened. The factory records the
   objects opened since the last read, in order.
2. Before each read of more bytes, the document being built is located: the
   first object opened after the documents completed since the last read (or
   the first object of the file), and handed to the assembler, which projects
   the finished items of its `items` list and removes them from the list.
3. Complete documents come out of ijson as usual and are added whole.

So at any moment the raw JSON held is about one read's worth of items, never
the document.
"""

from __future__ import annotations

from typing import Any

import ijson  # type: ignore[import-untyped]

from audits.collect.documents import KUBECTL_HINT, SnapshotAssembler
from audits.collect.reading import CHUNK, LimitedReader
from audits.collect.snapshot import Obj, SnapshotError

try:
    from ijson.backends import yajl2_c as backend  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - wheels with the C backend exist for every platform we run on
    backend = ijson


class _DocumentFeed:
    """What ijson reads from: the file's bytes, and between reads, the documents so far."""

    def __init__(self, reader: LimitedReader, assembler: SnapshotAssembler, *, name: str) -> None:
        self.reader = reader
        self.assembler = assembler
        self.name = name
        self.documents = 0
        self.opened: list[Obj] = []
        self.completed: list[Any] = []
        self.current: Obj | None = None

    def new_object(self) -> Obj:
        obj: Obj = {}
        self.opened.append(obj)
        return obj

    def where(self) -> str:
        return self.name if self.documents <= 1 else f"{self.name} (document {self.documents})"

    def read(self, size: int) -> bytes:
        if self.completed:
            self.current = _top_of_next_document(self.opened, self.completed)
            self.completed.clear()
            if self.current is not None:
                self.documents += 1
        elif self.current is None and self.opened:
            self.current = self.opened[0]
            self.documents += 1
        self.opened.clear()
        if self.current is not None:
            self.assembler.stream(self.current, where=self.where())
        return self.reader.read(size)

    def complete(self, document: Any) -> None:
        if document is not self.current:
            self.documents += 1
        self.assembler.document(document, where=self.where())
        self.completed.append(document)


def read_json_documents(reader: LimitedReader, assembler: SnapshotAssembler, *, name: str) -> None:
    """Add every document of a JSON file (one or several, concatenated) to the assembler's snapshot."""
    first = reader.first_byte()
    if not first:
        raise SnapshotError(f"{name}: the file is empty. {KUBECTL_HINT}")
    if first == b"[":
        # A top-level array would be built whole before it could be refused.
        raise SnapshotError(f"{name}: expected a JSON object (a Kubernetes List), found list.")
    feed = _DocumentFeed(reader, assembler, name=name)
    documents = backend.items(feed, "", map_type=feed.new_object, multiple_values=True, use_float=True, buf_size=CHUNK)
    try:
        for document in documents:
            feed.complete(document)
    except ijson.JSONError as exc:
        detail = _first_line(exc.args[0] if exc.args else "") or "incomplete data"
        if reader.at_eof:
            raise SnapshotError(f"{name}: is truncated ({detail}). {KUBECTL_HINT}") from None
        raise SnapshotError(
            f"{name}: is not valid JSON ({detail}, within the first {reader.consumed:,} bytes). {KUBECTL_HINT}"
        ) from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{name}: is not valid JSON: it is not UTF-8 text ({exc.reason}).") from None


def _first_line(message: str | bytes) -> str:
    """yajl's messages span lines (the text around the error, and a caret); the first says what is wrong."""
    text = message.decode(errors="replace") if isinstance(message, bytes) else str(message)
    return text.strip().split("\n", 1)[0].strip()


def _top_of_next_document(opened: list[Obj], completed: list[Any]) -> Obj | None:
    """The first object opened after the last completed document: the top of the next document.

    Documents complete in order, so only the last one that has objects of its own
    needs walking: every object opened after its last one belongs to a later document.
    """
    last = next((doc for doc in reversed(completed) if isinstance(doc, dict | list)), None)
    inside: set[int] = set()
    stack: list[Any] = [last] if last is not None else []
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            inside.add(id(value))
            stack.extend(v for v in value.values() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, dict | list))
    after = 1 + max((i for i, obj in enumerate(opened) if id(obj) in inside), default=-1)
    return opened[after] if after < len(opened) else None
