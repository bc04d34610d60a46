"""Artifacts teams already hold: kubectl cluster-info dumps, support bundles, OpenShift must-gathers.

An artifact is the state of a cluster at one moment, captured by another tool
and kept as a directory or an archive. It is read in place (never extracted),
its layout recognised from its paths, what it lacks reported as not collected,
and the moment it was captured found, so that its audit takes its place in the
cluster's history. See load.py for the steps.
"""

from __future__ import annotations

from audits.collect.artifacts.archives import ArtifactError, archive_kind
from audits.collect.artifacts.load import SUMMARY_KEY, artifact_load, summary_of

__all__ = ["SUMMARY_KEY", "ArtifactError", "archive_kind", "artifact_load", "summary_of"]
