"""The postmortem report of a bundled demo cluster, audited through the real runner."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from audits import services
from audits.demo.clusters import DEMO_CLUSTERS
from audits.demo.generate import snapshot_path
from audits.models import Cluster, RunStatus
from cases.loader import load_cases

NOW = dt.datetime(2026, 9, 1, 9, 0, tzinfo=dt.UTC)


def audited_demo(team: Group, name: str) -> Cluster:
    """A demo cluster's captures imported as `setup_demo` does, each audited in order by the runner."""
    demo = next(d for d in DEMO_CLUSTERS if d.name == name)
    files = [(snapshot_path(name, i), NOW - dt.timedelta(days=days)) for i, (days, _) in enumerate(demo.captures)]
    cluster = services.cluster_register_snapshot(
        team=team, name=name, snapshot_path=files[-1][0], description=demo.description
    )
    for run in services.audit_runs_import(cluster=cluster, snapshots=files):
        services.audit_run_execute(run.pk)
        run.refresh_from_db()
        assert run.status in (RunStatus.SUCCEEDED, RunStatus.PARTIAL), run.error
    return cluster


@pytest.fixture
def gpu_training(team: Group, settings: Any, tmp_path: Path) -> Cluster:
    settings.MEDIA_ROOT = tmp_path
    load_cases()
    return audited_demo(team, "gpu-training")


def test_the_demo_postmortem_report_shows_the_regression_and_why_it_matters(gpu_training: Cluster) -> None:
    out = io.StringIO()

    # The incident: an hour after the newest capture; the window: the three weeks before it.
    call_command(
        "export", "--cluster", "gpu-training", "--since", "2026-08-01T00:00:00Z", "--until", "2026-09-01T09:00:00Z",
        "--at", "2026-08-30T10:00:00Z", "--format", "markdown", stdout=out,
    )  # fmt: skip

    report = out.getvalue()
    assert report.startswith("# Reliability gaps of gpu-training at 2026-08-30T10:00:00Z\n")
    open_then = report.split("## Gaps open at 2026-08-30T10:00:00Z")[1].split("## What changed")[0]
    assert (
        "| high | `KG-RDMA-001` RDMA workload hard-codes NCCL\\_IB\\_GID\\_INDEX | StatefulSet training/llm-pretrain | "
        "Container 'trainer' pins NCCL\\_IB\\_GID\\_INDEX=3; a GID change after a RoCE port flap breaks the job's "
        "communicator. | 2026-08-30T09:00:00Z (regression) | IL-0481, KC-086 |"
    ) in open_then
    changes = report.split("## What changed from 2026-08-01T00:00:00Z to 2026-09-01T09:00:00Z")[1]
    changes = changes.split("## Why these gaps matter")[0]
    assert "| 2026-08-11T09:00:00Z | closed (fixed or gone) | high | `KG-RDMA-001`" in changes
    assert "| 2026-08-30T09:00:00Z | regressed (came back) | high | `KG-RDMA-001`" in changes
    explanations = report.split("## Why these gaps matter")[1]
    assert "### `KG-RDMA-001` RDMA workload hard-codes NCCL\\_IB\\_GID\\_INDEX\n" in explanations
    assert (
        "- [IL-0481](http://127.0.0.1:8000/cases/IL-0481/) RoCE port flaps move the RDMA GID index and crash GPU "
        "training jobs (Infrawaves, 2026). Reported in: [NCCL issue 1333: GID index change causes training to stop]"
        "(https://github.com/NVIDIA/nccl/issues/1333)"
    ) in explanations
