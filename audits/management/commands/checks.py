from __future__ import annotations

from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandParser

from audits.checks import CATALOG


def catalog_rows() -> list[dict[str, Any]]:
    """The catalog as plain data, sorted by check id."""
    return [
        {"id": chk.id, "title": chk.title, "area": chk.area, "severity": str(chk.severity), "cases": list(chk.cases)}
        for chk in sorted(CATALOG.values(), key=lambda chk: chk.id)
    ]


class Command(BaseCommand):
    help = "List the check catalog: id, title, area, severity and the incident cases each check cites."
    # Reads no database: it works wherever the code is, CI included.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=("text", "json"), default="text", help="Output format.")

    def handle(self, *args: Any, **options: Any) -> None:
        rows = catalog_rows()
        if options["format"] == "json":
            self.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode())
            return
        self.stdout.write(_table(rows))
        self.stdout.write(f"\n{len(rows)} checks. `python manage.py audit --snapshot PATH` runs them.")


def _table(rows: list[dict[str, Any]]) -> str:
    headers = {"id": "ID", "severity": "SEVERITY", "area": "AREA", "title": "TITLE", "cases": "CASES"}
    cells = [headers] + [{**row, "cases": ", ".join(row["cases"])} for row in rows]
    widths = {column: max(len(str(cell[column])) for cell in cells) for column in headers}
    last = list(headers)[-1]
    return "\n".join(
        "  ".join(str(cell[c]) if c == last else str(cell[c]).ljust(widths[c]) for c in headers).rstrip()
        for cell in cells
    )
