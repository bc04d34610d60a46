from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from audits.collect.files import snapshot_dump, snapshot_load
from audits.collect.projection import LAST_APPLIED
from audits.collect.snapshot import SnapshotError
from audits.demo import builders as b

LIMIT = 10_000_000


def _write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def test_it_reads_a_kubectl_list_and_drops_bulk_and_secrets(tmp_path: Path) -> None:
    deployment = b.workload("Deployment", "api", "shop", containers=[b.container("app", "shop/api:1")])
    deployment["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    deployment["metadata"]["annotations"] = {LAST_APPLIED: "{...}", "team": "payments"}
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop"},
        "data": {"password": "aHVudGVyMg=="},
    }
    path = _write(tmp_path, "cluster.json", json.dumps(b.kube_list([deployment, secret, b.node("n1")])))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert set(snapshot.objects) == {"Deployment", "Node"}
    kept = snapshot.objects["Deployment"][0]
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["annotations"] == {"team": "payments"}
    assert "aHVudGVyMg==" not in json.dumps(snapshot.objects)


def test_it_takes_the_kind_of_kindless_items_from_a_typed_list(tmp_path: Path) -> None:
    pod = b.pod_for(b.workload("StatefulSet", "db", "shop", containers=[]), 0, "n1")
    del pod["kind"]
    path = _write(tmp_path, "pods.json", json.dumps({"kind": "PodList", "apiVersion": "v1", "items": [pod]}))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert [p["metadata"]["name"] for p in snapshot.objects["Pod"]] == ["db-0"]


def test_an_empty_typed_list_counts_as_collected(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "pdbs.json", json.dumps({"kind": "PodDisruptionBudgetList", "apiVersion": "policy/v1", "items": []})
    )

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert snapshot.collected == {"PodDisruptionBudget"}
    assert snapshot.count() == 0


def test_a_list_with_nothing_to_audit_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "empty.json", json.dumps(b.kube_list([])))

    with pytest.raises(SnapshotError, match="holds no Kubernetes objects"):
        snapshot_load(path, max_bytes=LIMIT)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        ('{"kind": "List", "items": [', "is truncated"),
        ("<html>not json</html>", "is not valid JSON"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('{"apiVersion": "v1", "items": []}', 'it has no "kind"'),
        ('{"kind": "List", "items": {}}', 'has no "items" array'),
    ],
)
def test_it_names_the_file_and_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, "prod-eu.json", content)

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(path, max_bytes=LIMIT)

    assert str(raised.value).startswith("prod-eu.json: ")
    assert message in str(raised.value)


def test_it_refuses_files_over_the_size_limit(tmp_path: Path) -> None:
    path = _write(tmp_path, "big.json", json.dumps(b.kube_list([b.node(f"n{i}") for i in range(50)])))

    with pytest.raises(SnapshotError, match="over the limit of 2,000 bytes"):
        snapshot_load(path, max_bytes=2000)


def test_it_refuses_a_gzip_that_expands_past_the_limit(tmp_path: Path) -> None:
    bomb = gzip.compress(b"{" + b" " * 5_000_000 + b"}")
    path = _write(tmp_path, "bomb.json.gz", bomb)

    with pytest.raises(SnapshotError, match="more than 1,000,000 bytes"):
        snapshot_load(path, max_bytes=1_000_000)


def test_its_own_export_round_trips_exactly(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.json", json.dumps(b.kube_list([b.node("n1"), b.namespace("shop")])))
    original = snapshot_load(path, max_bytes=LIMIT)
    original.not_collected["Pod"] = "forbidden"
    buffer = io.BytesIO()

    snapshot_dump(original, buffer)
    again = snapshot_load(_write(tmp_path, "c.json.gz", buffer.getvalue()), max_bytes=LIMIT)

    assert again.objects == original.objects
    assert again.not_collected == {"Pod": "forbidden"}
