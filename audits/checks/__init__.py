"""The check catalog. Importing this package registers every check.

Each module of this package other than the engine is one area of checks; they
are imported here so that their checks register in the catalog.
"""

from __future__ import annotations

import importlib
import pkgutil

from audits.checks.engine import CATALOG, Check, Evaluation, Finding, Hit, evaluate

_INFRASTRUCTURE = {"engine", "index"}

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _INFRASTRUCTURE and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["CATALOG", "Check", "Evaluation", "Finding", "Hit", "evaluate"]
