"""Adding a cluster from the dashboard: kubeconfig (upload or paste), context, connection test, snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from audits.demo import builders as b
from audits.models import AuditRun, Cluster, SourceKind
from tests.conftest import LiveCluster


@pytest.fixture
def form(team: Group) -> dict[str, object]:
    return {"team": team.pk, "name": "live-eu", "source": "kubeconfig"}


def test_a_viewer_may_not_add_clusters(client: Client, teammate: User) -> None:
    client.force_login(teammate)

    assert client.get("/clusters/add/").status_code == 403


def test_a_pasted_kubeconfig_asks_for_a_context_then_tests_then_saves(
    client: Client, owner: User, form: dict[str, object], live_cluster: LiveCluster, django_capture_on_commit_callbacks
) -> None:
    client.force_login(owner)
    text = live_cluster.server.kubeconfig.read_text()

    choose = client.post("/clusters/add/", {**form, "kubeconfig_text": text})
    tested = client.post("/clusters/add/", {**form, "kubeconfig_text": text, "context": "readonly", "test": "1"})
    stored_before_saving = Cluster.objects.count()
    with django_capture_on_commit_callbacks(execute=False):
        saved = client.post("/clusters/add/", {**form, "kubeconfig_text": text, "context": "readonly", "save": "1"})

    assert "Choose the context" in choose.content.decode()
    assert '<option value="readonly">readonly</option>' in choose.content.decode()
    page = tested.content.decode()
    assert "What this identity may read" in page
    assert '<td>Pod</td><td class="ok">readable</td>' in page
    assert stored_before_saving == 0
    assert saved.status_code == 302
    cluster = Cluster.objects.get(name="live-eu")
    assert (cluster.source_kind, cluster.kube_context) == (SourceKind.KUBECONFIG, "readonly")
    assert AuditRun.objects.filter(cluster=cluster).count() == 1
    token = yaml.safe_load(live_cluster.readonly_kubeconfig_text)["users"][0]["user"]["token"]
    assert token.encode() not in bytes(cluster.kubeconfig_encrypted)


@pytest.mark.parametrize(
    ("kubeconfig", "message"),
    [
        ("clusters: [\n  - name: a\n   oops", "not valid YAML at line"),
        ("kind: Config\nclusters: []\n", "has no clusters"),
    ],
)
def test_a_bad_kubeconfig_upload_is_explained_and_nothing_is_stored(
    client: Client, owner: User, form: dict[str, object], kubeconfig: str, message: str
) -> None:
    client.force_login(owner)

    response = client.post(
        "/clusters/add/", {**form, "kubeconfig_file": SimpleUploadedFile("prod.yaml", kubeconfig.encode())}
    )

    assert response.status_code == 400
    assert message in response.content.decode()
    assert Cluster.objects.count() == 0


def test_an_exec_plugin_kubeconfig_is_refused(
    client: Client, owner: User, form: dict[str, object], live_cluster: LiveCluster
) -> None:
    config = yaml.safe_load(live_cluster.server.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"exec": {"command": "/bin/sh", "apiVersion": "client.authentication.k8s.io/v1"}}
    client.force_login(owner)

    response = client.post(
        "/clusters/add/", {**form, "kubeconfig_text": yaml.safe_dump(config), "context": "readonly", "save": "1"}
    )

    assert response.status_code == 400
    assert "would run a program on the kubegap-web worker" in response.content.decode()
    assert Cluster.objects.count() == 0


def test_a_snapshot_upload_registers_the_cluster_and_a_broken_one_names_the_file(
    client: Client, owner: User, team: Group, tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    client.force_login(owner)
    good = json.dumps(b.kube_list([b.node("n1")])).encode()
    data = {"team": team.pk, "source": "snapshot"}

    broken = client.post(
        "/clusters/add/",
        {**data, "name": "a", "snapshot": SimpleUploadedFile("prod-eu.json", b'{"kind": "List", "items": [')},
    )
    with django_capture_on_commit_callbacks(execute=False):
        saved = client.post(
            "/clusters/add/", {**data, "name": "b", "snapshot": SimpleUploadedFile("prod-us.json", good)}
        )

    assert broken.status_code == 400
    assert "prod-eu.json: is truncated" in broken.content.decode()
    assert saved.status_code == 302
    assert list(Cluster.objects.values_list("name", "source_kind")) == [("b", SourceKind.SNAPSHOT)]
