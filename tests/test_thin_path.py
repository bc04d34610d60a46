"""From a kubectl snapshot to findings on a page, through a real Celery worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from audits.demo import builders as b
from audits.models import AuditRun, Cluster, Finding, RunStatus
from cases.loader import load_cases
from tests.conftest import Worker, wait_for_run

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def write_snapshot(path: Path) -> Path:
    ingress = b.workload(
        "Deployment",
        "ingress-nginx-controller",
        "ingress-nginx",
        replicas=1,
        containers=[b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2")],
    )
    rs = b.replicaset_for(ingress)
    api = b.workload(
        "Deployment", "api", "shop", replicas=3, containers=[b.container("app", "shop/api:1", memory_limit=None)]
    )
    objects = [
        b.node("n1"),
        b.node("n2"),
        ingress,
        rs,
        b.pod_for(rs, 0, "n1"),
        api,
        b.pdb("unrelated", "shop", {"app": "other"}),
    ]
    path.write_text(json.dumps(b.kube_list(objects)))
    return path


def test_a_registered_snapshot_is_audited_by_the_worker_and_listed_with_its_cases(
    worker: Worker, tmp_path: Path, teammate: User, client: Client
) -> None:
    load_cases()
    call_command(
        "cluster_add",
        "--name",
        "prod-eu",
        "--team",
        "payments",
        "--snapshot",
        str(write_snapshot(tmp_path / "prod.json")),
    )
    run = AuditRun.objects.get(cluster__name="prod-eu")

    run = wait_for_run(run.pk)

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.open_by_check == {
        "KG-DIS-001": 1,  # the ingress controller runs a single replica
        "KG-DIS-002": 1,  # api: three replicas, no PodDisruptionBudget
        "KG-DIS-004": 1,  # the "unrelated" PodDisruptionBudget selects no pod
        "KG-ING-001": 1,  # one ready ingress controller replica
        "KG-ING-003": 1,  # the ingress controller has no PodDisruptionBudget
        "KG-RES-001": 1,  # api has no memory limit
        "KG-SPR-003": 1,  # both nodes are in one zone
        "KG-SPR-004": 1,  # api declares no spread
    }
    assert Finding.objects.filter(cluster__name="prod-eu", closed_at__isnull=True).count() == 8
    client.force_login(teammate)
    page = client.get("/clusters/prod-eu/").content.decode()
    assert "KG-ING-001" in page and "Ingress controller has 1 ready replica(s) of 1" in page
    assert '<a href="/cases/IL-0256/">IL-0256</a>' in page
    assert client.get("/cases/IL-0256/").status_code == 200


def test_a_broken_snapshot_is_refused_and_nothing_is_stored(tmp_path: Path, worker: Worker) -> None:
    bad = tmp_path / "prod.json"
    bad.write_text('{"kind": "List", "items": [')

    with pytest.raises(CommandError, match=r"prod.json: is truncated"):
        call_command("cluster_add", "--name", "prod", "--team", "payments", "--snapshot", str(bad))

    assert Cluster.objects.count() == 0
    assert AuditRun.objects.count() == 0
