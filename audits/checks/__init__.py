"""The check catalog. Importing this package registers every check."""

from __future__ import annotations

from audits.checks import disruption, ingress, rdma, resources
from audits.checks.engine import CATALOG, Check, Evaluation, Finding, Hit, evaluate

__all__ = ["CATALOG", "Check", "Evaluation", "Finding", "Hit", "disruption", "evaluate", "ingress", "rdma", "resources"]
