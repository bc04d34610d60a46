"""Which parser reads a file: YAML by its name, otherwise JSON unless it does not look like JSON."""

from __future__ import annotations

from audits.collect.documents import SnapshotAssembler
from audits.collect.json_stream import read_json_documents
from audits.collect.reading import LimitedReader
from audits.collect.yaml_stream import read_yaml_documents

YAML_SUFFIXES = (".yaml", ".yml", ".yaml.gz", ".yml.gz")
JSON_SUFFIXES = (".json", ".json.gz")


def read_documents(reader: LimitedReader, assembler: SnapshotAssembler, *, name: str) -> None:
    """Add every document of one file to the assembler's snapshot."""
    lowered = name.lower()
    if lowered.endswith(YAML_SUFFIXES):
        read_yaml_documents(reader, assembler, name=name)
    elif lowered.endswith(JSON_SUFFIXES) or reader.first_byte() in (b"{", b"[", b""):
        reader.skip_log_sections()
        read_json_documents(reader, assembler, name=name)
    else:
        read_yaml_documents(reader, assembler, name=name)
