"""Audits of a live cluster through the worker: stored snapshots, partial runs, a server that dies."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import Group

from audits import services
from audits.collect import live
from audits.collect.files import snapshot_load
from audits.models import AuditRun, Cluster, Finding, RunStatus, RunTrigger
from tests.conftest import LiveCluster, Worker, start_kube_api, wait_for_run
from tests.kube_cluster import KubeAdmin, seed_realistic_cluster

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def register(kubeconfig_text: str, name: str = "live") -> Cluster:
    team, _ = Group.objects.get_or_create(name="platform")
    return services.cluster_register_kubeconfig(
        team=team, name=name, kubeconfig_text=kubeconfig_text, context="readonly"
    )


def test_a_live_cluster_is_audited_by_the_worker_and_its_snapshot_kept(
    live_cluster: LiveCluster, worker: Worker
) -> None:
    cluster = register(live_cluster.readonly_kubeconfig_text)
    run = services.audit_run_enqueue(cluster=cluster, trigger=RunTrigger.MANUAL)

    run = wait_for_run(run.pk)

    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.collection_stats["Pod"]["objects"] == live_cluster.seeded["Pod"]
    assert run.collection_stats["Pod"]["pages"] == 3
    assert run.server_version.startswith("v1.")
    assert run.findings_open > 0
    kept = snapshot_load(Path(run.snapshot_file.path), max_bytes=1 << 30)
    assert len(kept.objects["Pod"]) == live_cluster.seeded["Pod"]
    token = yaml.safe_load(live_cluster.readonly_kubeconfig_text)["users"][0]["user"]["token"]
    assert token.encode() not in bytes(cluster.kubeconfig_encrypted)


def test_a_forbidden_kind_makes_the_run_partial_and_names_it(live_cluster: LiveCluster, worker: Worker) -> None:
    admin = live_cluster.admin
    original = admin.cluster_role()
    admin.replace(
        {**original, "rules": [r for r in original["rules"] if "horizontalpodautoscalers" not in r["resources"]]}
    )
    try:
        run = services.audit_run_enqueue(
            cluster=register(live_cluster.readonly_kubeconfig_text), trigger=RunTrigger.MANUAL
        )
        run = wait_for_run(run.pk)
    finally:
        admin.replace({**original, "metadata": {"name": original["metadata"]["name"]}})

    assert run.status == RunStatus.PARTIAL
    assert list(run.not_collected) == ["HorizontalPodAutoscaler"]
    assert "forbidden" in run.not_collected["HorizontalPodAutoscaler"]


def test_an_api_server_that_dies_mid_collection_fails_the_run_and_keeps_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    """Runs in-process through the same runner the worker uses, so the server can be
    stopped at an exact point: right after the first page of pods."""
    server = start_kube_api(tmp_path / "api")
    try:
        admin = KubeAdmin(server.admin_kubeconfig)
        admin.apply_rbac("kubegap-reader")
        seed_realistic_cluster(admin, deployments=20, pods_each=30)
        cluster = register(server.readonly_kubeconfig.read_text(), name="doomed")
        first = AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.MANUAL)
        services.audit_run_execute(first.pk)
        before = list(Finding.objects.filter(cluster=cluster).values_list("id", "fingerprint", "closed_at"))
        assert before

        settings.COLLECT_MAX_RETRIES = 2
        real_get = live.ApiReader.get

        def get_then_die(self: live.ApiReader, path: str, *args, **kwargs):
            page = real_get(self, path, *args, **kwargs)
            if path.endswith("/pods") and server.running:
                server.stop()
            return page

        monkeypatch.setattr(live.ApiReader, "get", get_then_die)
        second = AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.MANUAL)
        services.audit_run_execute(second.pk)
    finally:
        server.stop()

    second.refresh_from_db()
    assert second.status == RunStatus.FAILED
    assert "connection refused" in second.error
    assert second.finished_at is not None
    first.refresh_from_db()
    assert first.status == RunStatus.SUCCEEDED
    assert list(Finding.objects.filter(cluster=cluster).values_list("id", "fingerprint", "closed_at")) == before
