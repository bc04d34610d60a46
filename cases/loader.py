"""Load the case library from its YAML files, idempotently.

Each file under cases/data/ is one case. Loading again updates what changed
and removes cases whose file is gone, so the database mirrors the files.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from cases.models import Case, CaseSource, Tag

DATA_DIR = Path(__file__).resolve().parent / "data"
REQUIRED = (
    "id",
    "org",
    "date",
    "title",
    "summary",
    "trigger",
    "root_cause",
    "remediation",
    "lessons",
    "tags",
    "sources",
)
DATE_RE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


class CaseFileError(ValueError):
    """A case file that cannot be loaded, naming the file and the field."""


@dataclass(frozen=True)
class LoadResult:
    loaded: int
    removed: int


def read_case_file(path: Path) -> dict[str, Any]:
    """Parse and validate one case file."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CaseFileError(f"{path.name}: not valid YAML ({exc}).") from None
    if not isinstance(data, dict):
        raise CaseFileError(f"{path.name}: expected a mapping of case fields.")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise CaseFileError(f"{path.name}: missing {', '.join(missing)}.")
    if data["id"] != path.stem:
        raise CaseFileError(f"{path.name}: id {data['id']!r} does not match the file name.")
    date = data["date"]
    if date is not None and not DATE_RE.match(str(date)):
        raise CaseFileError(f"{path.name}: date {date!r} must be YYYY, YYYY-MM, YYYY-MM-DD or null.")
    sources = data["sources"]
    if not isinstance(sources, list) or not sources:
        raise CaseFileError(f"{path.name}: a case needs at least one source.")
    for source in sources:
        if not isinstance(source, dict) or not str(source.get("url", "")).startswith(("https://", "http://")):
            raise CaseFileError(f"{path.name}: every source needs an http(s) url.")
    return data


def occurred_on(label: str | None) -> dt.date | None:
    if not label:
        return None
    parts = [int(p) for p in label.split("-")] + [1, 1]
    return dt.date(parts[0], parts[1], parts[2])


def load_cases(data_dir: Path = DATA_DIR) -> LoadResult:
    """Validate every file first, then write all of them in one transaction."""
    files = sorted(data_dir.glob("*.yaml"))
    parsed = [read_case_file(path) for path in files]
    with transaction.atomic():
        for data in parsed:
            _upsert(data)
        removed, _ = Case.objects.exclude(pk__in=[d["id"] for d in parsed]).delete()
    return LoadResult(loaded=len(parsed), removed=removed)


def _upsert(data: dict[str, Any]) -> None:
    label = str(data["date"]) if data["date"] is not None else ""
    case, _ = Case.objects.update_or_create(
        pk=data["id"],
        defaults={
            "org": data["org"],
            "date_label": label,
            "occurred_on": occurred_on(label),
            "title": data["title"],
            "summary": str(data["summary"]).strip(),
            "trigger": str(data["trigger"]).strip(),
            "root_cause": str(data["root_cause"]).strip(),
            "remediation": str(data["remediation"]).strip(),
            "lessons": str(data["lessons"]).strip(),
            "gaps": list(data.get("gaps") or []),
        },
    )
    case.tags.set([Tag.objects.get_or_create(name=str(name))[0] for name in data["tags"]])
    case.sources.all().delete()
    CaseSource.objects.bulk_create(
        CaseSource(
            case=case, url=s["url"], title=s.get("title") or s["url"], primary=bool(s.get("primary")), position=i
        )
        for i, s in enumerate(data["sources"])
    )
