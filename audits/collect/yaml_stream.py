"""YAML files: `kubectl get -o yaml` Lists and `---`-separated manifests.

Documents are parsed one at a time with libyaml (CSafeLoader) where it is
installed, and each is checked for alias bombs before it is built: YAML anchors
let a few hundred bytes describe billions of nodes ("billion laughs"), which
would exhaust memory as soon as anything walked the result.

Timestamps stay strings, as they are in the JSON the API serves.
"""

from __future__ import annotations

from typing import Any

import yaml

from audits.collect.documents import SnapshotAssembler
from audits.collect.reading import LimitedReader
from audits.collect.snapshot import SnapshotError

# A document may reuse anchors this often, and aliases may add this many
# nodes beyond the document's own; Kubernetes manifests rarely use either.
MAX_ALIASES = 100
MAX_ALIAS_EXPANSION = 10_000

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class ManifestLoader(_Loader):  # type: ignore[misc,valid-type]
    """Safe YAML 1.1, as Kubernetes reads it, but with timestamps left as strings."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
        for first, resolvers in _Loader.yaml_implicit_resolvers.items()
    }


def read_yaml_documents(reader: LimitedReader, assembler: SnapshotAssembler, *, name: str) -> None:
    """Add every document of a YAML file to the assembler's snapshot."""
    if not reader.first_byte():
        raise SnapshotError(f"{name}: the file is empty.")
    loader = ManifestLoader(reader)
    try:
        while loader.check_node():
            node = loader.get_node()
            where = f"{name}: line {node.start_mark.line + 1}"
            _refuse_alias_bombs(node, where=where)
            assembler.document(loader.construct_document(node), where=where)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f": line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        context = exc.context or ""
        if context and exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            context += f" that starts at line {exc.context_mark.line + 1}"
        problem = ", ".join(part for part in (context, exc.problem) if part)
        truncated = "end of stream" in problem and reader.at_eof
        what = "is truncated" if truncated else "is not valid YAML"
        raise SnapshotError(f"{name}{at}: {what} ({problem}).") from None
    except yaml.YAMLError as exc:
        raise SnapshotError(f"{name}: is not valid YAML ({exc}).") from None
    finally:
        loader.dispose()


def _refuse_alias_bombs(root: yaml.Node, *, where: str) -> None:
    """Refuse a document that reuses anchors too often, whose aliases expand too far, or that contains itself.

    An alias is the same node object met again. The expanded size of each node
    is computed once (post-order, iteratively), so the check itself costs one
    pass over the document's distinct nodes.
    """
    size: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        children = _children(node)
        if children_done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            continue
        if key in size:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise SnapshotError(
                    f"{where}: the document uses more than {MAX_ALIASES} YAML aliases (*name); refused, as a guard "
                    "against alias bombs. Write the repeated parts out."
                )
            continue
        if key in on_path:
            raise SnapshotError(f"{where}: the document contains itself through a YAML alias; refused.")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(children))
    expansion = size[id(root)] - len(size)
    if expansion > MAX_ALIAS_EXPANSION:
        raise SnapshotError(
            f"{where}: YAML aliases expand the document by {expansion:,} nodes (the limit is "
            f"{MAX_ALIAS_EXPANSION:,}); refused, as a guard against alias bombs."
        )


def _children(node: yaml.Node) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
