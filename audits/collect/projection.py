"""Projection: the parts of each Kubernetes object that checks may read.

Every object passes through here on its way into a snapshot, from a live LIST
page, a file or an artifact, so this module is the single contract between
collection and checks. What is not kept here no check can see, and memory stays
bounded on clusters with 150,000 pods.
"""

from __future__ import annotations

from typing import Any

from audits.collect.kinds import FORBIDDEN_KINDS

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# The only ConfigMaps checks read; every other ConfigMap is dropped unread.
WANTED_CONFIGMAPS = frozenset({("kube-system", "kube-proxy"), ("kube-system", "coredns")})


def project(kind: str, obj: Obj) -> Obj | None:
    """The parts of an object checks may read, or None for an object never kept."""
    if not kind or kind in FORBIDDEN_KINDS:
        return None
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        return None
    if kind == "ConfigMap" and (metadata.get("namespace"), metadata.get("name")) not in WANTED_CONFIGMAPS:
        return None
    slim_meta = {k: v for k, v in metadata.items() if k not in ("managedFields", "selfLink")}
    annotations = slim_meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED in annotations:
        slim_meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    projected = {k: v for k, v in obj.items() if k != "metadata"}
    projected["kind"] = kind
    projected["metadata"] = slim_meta
    return projected
