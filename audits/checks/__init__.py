"""The check catalog. Importing this package registers every check.

Each module of this package other than the engine and the index is one area of
checks, named after the area; the id prefix says which:

    DIS disruption      SPR spread          DNS dns            ADM admission
    RES resources       CAP capacity        PRB probes         UPG upgrade
    PRI priority        BAT batch           SVC services       IMG images
    STA stateful        ING ingress         EXP exposure       RDMA rdma
    NET network         CP  control_plane   CRT certificates   GIT gitops

`python manage.py checks` prints the catalog.
"""

from __future__ import annotations

import importlib
import pkgutil

from audits.checks.engine import CATALOG, Check, Evaluation, Finding, Hit, NotEvaluated, evaluate

_INFRASTRUCTURE = {"engine", "index"}

# Id prefix -> the area (and module, with "-" as "_") its checks live in.
AREAS: dict[str, str] = {
    "DIS": "disruption",
    "SPR": "spread",
    "DNS": "dns",
    "ADM": "admission",
    "RES": "resources",
    "CAP": "capacity",
    "PRB": "probes",
    "UPG": "upgrade",
    "PRI": "priority",
    "BAT": "batch",
    "SVC": "services",
    "IMG": "images",
    "STA": "stateful",
    "ING": "ingress",
    "EXP": "exposure",
    "RDMA": "rdma",
    "NET": "network",
    "CP": "control-plane",
    "CRT": "certificates",
    "GIT": "gitops",
}

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _INFRASTRUCTURE and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["AREAS", "CATALOG", "Check", "Evaluation", "Finding", "Hit", "NotEvaluated", "evaluate"]
