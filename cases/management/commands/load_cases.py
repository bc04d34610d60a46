from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from cases.loader import CaseFileError, load_cases


class Command(BaseCommand):
    help = "Load the incident case library from cases/data/*.yaml (safe to run again)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = load_cases()
        except CaseFileError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Loaded {result.loaded} cases; removed {result.removed} no longer in the library.")
