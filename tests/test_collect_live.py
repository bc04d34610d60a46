"""Collection from a real kube-apiserver, and the read-only promise proven by its audit log."""

from __future__ import annotations

import io
import math

import pytest
import yaml

from audits.checks import evaluate
from audits.collect import live
from audits.collect.files import snapshot_dump, snapshot_parse
from audits.collect.kinds import KINDS
from audits.collect.projection import WANTED_CONFIGMAPS
from tests.conftest import READONLY_USER, LiveCluster
from tests.kube_cluster import RBAC


def readonly_client(cluster: LiveCluster) -> live.k8s_client.ApiClient:
    return live.api_client_from_kubeconfig(yaml.safe_load(cluster.readonly_kubeconfig_text))


def names(snapshot: live.Snapshot, kind: str) -> set[str]:
    return {o["metadata"]["name"] for o in snapshot.objects.get(kind, [])}


def test_it_collects_what_the_cluster_holds_page_by_page(live_cluster: LiveCluster) -> None:
    snapshot = live.collect(readonly_client(live_cluster))

    seeded = live_cluster.seeded
    assert seeded["Pod"] > 1200
    assert len(snapshot.objects["Pod"]) == seeded["Pod"]
    assert snapshot.stats["Pod"]["pages"] == math.ceil(seeded["Pod"] / 500)
    assert len(snapshot.objects["Deployment"]) == seeded["Deployment"]
    assert len(snapshot.objects["PodDisruptionBudget"]) == seeded["PodDisruptionBudget"]
    assert {f"node-{i}" for i in range(12)} <= names(snapshot, "Node")
    assert "policy-gate" in names(snapshot, "ValidatingWebhookConfiguration")
    pod = next(p for p in snapshot.objects["Pod"] if p["metadata"]["name"].startswith("svc-00-"))
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert pod["spec"]["nodeName"].startswith("node-")
    assert "managedFields" not in pod["metadata"]
    assert snapshot.server_version.startswith("v1.")
    assert snapshot.not_collected == {}
    # Custom resources the server does not serve count as collected: there are none.
    assert snapshot.objects["NetworkAttachmentDefinition"] == []


def test_every_request_of_kubegap_is_a_read_and_none_touches_secrets(live_cluster: LiveCluster) -> None:
    live.collect(readonly_client(live_cluster))

    events = live_cluster.reader_events()
    verbs = {e["verb"] for e in events}
    resources = {e.get("objectRef", {}).get("resource") for e in events}
    assert len(events) > 20
    assert verbs <= {"get", "list", "watch"}, verbs
    assert "secrets" not in resources
    assert not [e for e in events if "secret" in e["requestURI"].lower()]
    assert all(e["user"]["username"] == READONLY_USER for e in events)


def test_the_secret_in_the_cluster_never_reaches_the_snapshot(live_cluster: LiveCluster) -> None:
    snapshot = live.collect(readonly_client(live_cluster))
    buffer = io.BytesIO()

    snapshot_dump(snapshot, buffer)

    assert b"kubegap-must-never-read-this" not in buffer.getvalue()
    assert "Secret" not in snapshot.objects


def test_the_role_grants_exactly_the_collected_kinds_and_no_secrets(live_cluster: LiveCluster) -> None:
    role = live_cluster.admin.cluster_role()

    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    expected = {(k.group, k.plural) for k in KINDS if k.name != "ConfigMap"}
    assert granted == expected
    assert all(set(rule["verbs"]) == {"get", "list", "watch"} for rule in role["rules"])
    assert not any("*" in str(rule) for rule in role["rules"])


def test_the_kube_system_role_names_exactly_the_configmaps_checks_read() -> None:
    role = next(d for d in yaml.safe_load_all(RBAC.read_text()) if d["kind"] == "Role")

    [rule] = role["rules"]
    assert role["metadata"]["namespace"] == "kube-system"
    assert (rule["resources"], rule["verbs"]) == (["configmaps"], ["get"])
    assert {("kube-system", name) for name in rule["resourceNames"]} == WANTED_CONFIGMAPS


def test_an_exported_snapshot_reproduces_the_same_audit(live_cluster: LiveCluster) -> None:
    snapshot = live.collect(readonly_client(live_cluster))
    buffer = io.BytesIO()
    snapshot_dump(snapshot, buffer)
    buffer.seek(0)

    again = snapshot_parse(buffer, name="export.json.gz", max_bytes=1 << 30)

    first, second = evaluate(snapshot), evaluate(again)
    assert first.findings
    assert [f.fingerprint for f in first.findings] == [f.fingerprint for f in second.findings]
    assert first.not_evaluated == second.not_evaluated


def test_a_kind_the_identity_may_not_read_is_named_and_the_rest_collected(live_cluster: LiveCluster) -> None:
    admin = live_cluster.admin
    original = admin.cluster_role()
    reduced = {**original, "rules": [r for r in original["rules"] if "poddisruptionbudgets" not in r["resources"]]}
    admin.replace(reduced)
    try:
        snapshot = live.collect(readonly_client(live_cluster))
    finally:
        admin.replace({**original, "metadata": {"name": original["metadata"]["name"]}})

    assert "forbidden" in snapshot.not_collected["PodDisruptionBudget"]
    assert "poddisruptionbudgets" in snapshot.not_collected["PodDisruptionBudget"]
    assert len(snapshot.objects["Pod"]) == live_cluster.seeded["Pod"]
    evaluation = evaluate(snapshot)
    assert "PodDisruptionBudget" in evaluation.not_evaluated["KG-DIS-002"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda cfg: cfg["clusters"][0]["cluster"].update(server="https://127.0.0.1:1"), "connection refused"),
        (lambda cfg: cfg["users"][0]["user"].update(token="not-a-valid-token"), "rejected the credentials (401"),
    ],
    ids=["unreachable", "bad-token"],
)
def test_a_cluster_that_cannot_be_read_gets_a_clear_error(
    live_cluster: LiveCluster, change, message: str, settings
) -> None:
    settings.COLLECT_MAX_RETRIES = 1
    config = yaml.safe_load(live_cluster.readonly_kubeconfig_text)
    change(config)

    with pytest.raises(live.CollectError) as raised:
        live.collect(live.api_client_from_kubeconfig(config))

    assert message in str(raised.value)


def test_a_certificate_from_another_authority_is_refused(live_cluster: LiveCluster, tmp_path) -> None:
    from tests.kube_cluster import other_ca_data

    config = yaml.safe_load(live_cluster.readonly_kubeconfig_text)
    config["clusters"][0]["cluster"]["certificate-authority-data"] = other_ca_data()

    with pytest.raises(live.CollectError, match="TLS certificate is not trusted"):
        live.collect(live.api_client_from_kubeconfig(config))
