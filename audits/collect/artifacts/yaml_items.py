"""YAML Lists of an artifact, read item by item.

Must-gathers and support-bundle-kit write each kind of a namespace as one YAML
List, sometimes tens of megabytes. Composing such a document (what
yaml_stream.py does for manifests) builds a node for every scalar before any
object exists: about 35 times the file in memory, and a few seconds per ten
megabytes. Here the document is built from libyaml's events instead, the way
json_stream.py builds JSON: containers are put into their parent as soon as
they open, and between events the assembler takes the finished items of the
top-level `items` list and removes them. So memory holds one item at a time,
and parsing is several times faster.

Scalars are typed exactly as the manifest loader types them (YAML 1.1, with
timestamps left as strings). Aliases are refused: no tool writes them into an
artifact, and they are how YAML bombs are built.
"""

from __future__ import annotations

from typing import Any

import yaml

from audits.collect.documents import SnapshotAssembler
from audits.collect.reading import LimitedReader
from audits.collect.snapshot import SnapshotError
from audits.collect.yaml_stream import ManifestLoader

STR = "tag:yaml.org,2002:str"
# Events between two hand-overs to the assembler: a few items' worth.
STREAM_EVERY = 4096
# Plain scalars typed so far (most recur: "True", "TCP", "Always", "IfNotPresent").
CACHE_LIMIT = 50_000
_NO_KEY = object()


class _Refused(Exception):
    """Something in the document kubegap-web does not read; becomes a SnapshotError naming where."""


class _Builder:
    """Builds documents from events, containers first, so a document can be read while it is built."""

    def __init__(self, loader: ManifestLoader) -> None:
        self.loader = loader
        self.cache: dict[str, Any] = {}
        # Each open container, with the key waiting for its value (mappings only).
        self.stack: list[list[Any]] = []
        self.top: Any = None

    def scalar(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if event.style or not event.implicit[0]:
            # Quoted (or tagged): a string unless the tag says otherwise.
            if tag is None or tag in (STR, "!"):
                return event.value
            return self._construct(tag, event)
        value = event.value
        found = self.cache.get(value, _NO_KEY)
        if found is not _NO_KEY:
            return found
        tag = self.loader.resolve(yaml.ScalarNode, value, (True, False))
        typed = value if tag == STR else self._construct(tag, event)
        if len(self.cache) < CACHE_LIMIT:
            self.cache[value] = typed
        return typed

    def _construct(self, tag: str, event: yaml.ScalarEvent) -> Any:
        constructor = self.loader.yaml_constructors.get(tag)
        if constructor is None:
            raise _Refused(f"the YAML tag {tag} is not one kubegap-web reads")
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)  # type: ignore[arg-type]
        return constructor(self.loader, node)

    def put(self, value: Any) -> None:
        if not self.stack:
            self.top = value
            return
        frame = self.stack[-1]
        container = frame[0]
        if type(container) is dict:
            if frame[1] is _NO_KEY:
                try:
                    hash(value)
                except TypeError:
                    raise _Refused("a mapping key that is itself a mapping or list") from None
                frame[1] = value
            else:
                container[frame[1]] = value
                frame[1] = _NO_KEY
        else:
            container.append(value)


def read_yaml_items(reader: LimitedReader, assembler: SnapshotAssembler, *, name: str) -> None:
    """Add every document of a YAML file to the assembler's snapshot, taking List items as they are built."""
    if not reader.first_byte():
        raise SnapshotError(f"{name}: the file is empty.")
    loader = ManifestLoader(reader)
    builder = _Builder(loader)
    where = name
    events = 0
    try:
        while True:
            event = loader.get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                builder.put(builder.scalar(event))
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                container: Any = {} if kind is yaml.MappingStartEvent else []
                builder.put(container)
                builder.stack.append([container, _NO_KEY])
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                builder.stack.pop()
            elif kind is yaml.DocumentStartEvent:
                where = f"{name}: line {event.start_mark.line + 1}"
                builder.top = None
            elif kind is yaml.DocumentEndEvent:
                assembler.document(builder.top, where=where)
                builder.top = None
            elif kind is yaml.AliasEvent:
                raise SnapshotError(
                    f"{name}: line {event.start_mark.line + 1}: uses YAML aliases (*{event.anchor}), which no "
                    "Kubernetes tool writes; refused, as a guard against alias bombs."
                )
            elif kind is yaml.StreamEndEvent:
                return
            events += 1
            if events % STREAM_EVERY == 0 and type(builder.top) is dict:
                assembler.stream(builder.top, where=where)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = ", ".join(part for part in (exc.context, exc.problem) if part)
        what = "is truncated" if "end of stream" in problem and reader.at_eof else "is not valid YAML"
        raise SnapshotError(f"{name}{at}: {what} ({problem}).") from None
    except yaml.YAMLError as exc:
        raise SnapshotError(f"{name}: is not valid YAML ({exc}).") from None
    except (_Refused, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise  # the assembler's or the reader's own, already naming the file
        raise SnapshotError(f"{where}: {exc}; the file is skipped.") from None
    finally:
        loader.dispose()
