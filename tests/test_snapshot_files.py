from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
import yaml

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


# Streaming: large files are projected item by item, never held whole.


def _padded_node(name: str, padding: int = 2000) -> dict:
    node = b.node(name)
    node["metadata"]["annotations"] = {"example.com/padding": "x" * padding}
    return node


def _typed_list(kind: str, items: list[dict]) -> dict:
    """What the API server returns for one kind: kind first, items without kind of their own."""
    bare = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in items]
    return {"kind": f"{kind}List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": bare}


def test_it_streams_a_kubectl_list_whose_kind_comes_after_its_items(tmp_path: Path) -> None:
    nodes = [_padded_node(f"n{i}") for i in range(600)]
    document = {"apiVersion": "v1", "items": nodes, "kind": "List", "metadata": {"resourceVersion": ""}}
    path = _write(tmp_path, "cluster.json", json.dumps(document, indent=2))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert [n["metadata"]["name"] for n in snapshot.objects["Node"]] == [f"n{i}" for i in range(600)]


def test_it_reads_several_lists_one_after_another_with_kindless_items(tmp_path: Path) -> None:
    """`kubectl cluster-info dump` writes typed Lists back to back; each item takes its List's kind."""
    deployment = b.workload("StatefulSet", "db", "shop", replicas=3, containers=[])
    pods = [b.pod_for(deployment, i, f"n{i % 7}") for i in range(400)]
    for pod in pods:
        pod["metadata"]["annotations"] = {"example.com/padding": "y" * 1500}
    content = "\n".join(
        json.dumps(doc, indent=1)
        for doc in (
            _typed_list("Node", [_padded_node(f"n{i}") for i in range(300)]),
            _typed_list("Pod", pods),
            _typed_list("PodDisruptionBudget", []),
            _typed_list("Node", [_padded_node("late")]),
        )
    )
    path = _write(tmp_path, "dump.json", content + "\n" + json.dumps(deployment))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert len(snapshot.objects["Node"]) == 301
    assert [p["metadata"]["name"] for p in snapshot.objects["Pod"]] == [f"db-{i}" for i in range(400)]
    assert snapshot.objects["PodDisruptionBudget"] == []
    assert [s["metadata"]["name"] for s in snapshot.objects["StatefulSet"]] == ["db"]
    assert snapshot.warnings == []


def test_it_never_holds_the_raw_document(tmp_path: Path) -> None:
    import tracemalloc

    secrets = [
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": f"s{i}", "namespace": "shop"},
            "data": {"k": "z" * 10_000},
        }
        for i in range(800)
    ]
    path = _write(tmp_path, "secrets.json", json.dumps(b.kube_list([*secrets, b.node("n1")])))
    size = path.stat().st_size

    tracemalloc.start()
    snapshot = snapshot_load(path, max_bytes=LIMIT)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert snapshot.collected == {"Node"}
    assert peak < size / 4, f"peak {peak:,} bytes while reading {size:,}"


def test_a_large_export_streams_back_exactly(tmp_path: Path) -> None:
    original = snapshot_load(
        _write(tmp_path, "c.json", json.dumps(b.kube_list([b.node(f"n{i}") for i in range(2500)]))),
        max_bytes=LIMIT,
    )
    buffer = io.BytesIO()

    snapshot_dump(original, buffer)
    again = snapshot_load(_write(tmp_path, "c.json.gz", buffer.getvalue()), max_bytes=LIMIT)

    assert again.objects == original.objects


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}}, {"kind": "No', "is truncated"),
        ('{"kind": "List", "items": [}', "is not valid JSON"),
        ('{"kind": "PodList", "items": []} 42', "found int"),
        ("   \n\t ", "the file is empty"),
    ],
)
def test_it_names_the_problem_of_a_streamed_file(tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, "prod-eu.json", content)

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(path, max_bytes=LIMIT)

    assert str(raised.value).startswith("prod-eu.json")
    assert message in str(raised.value)


def test_it_refuses_a_gzip_that_expands_past_the_limit_while_streaming(tmp_path: Path) -> None:
    nodes = b.kube_list([_padded_node(f"n{i}", padding=5000) for i in range(400)])
    path = _write(tmp_path, "big.json.gz", gzip.compress(json.dumps(nodes).encode()))
    assert path.stat().st_size < 1_000_000

    with pytest.raises(SnapshotError, match=r"big.json.gz: more than 1,000,000 bytes .* once decompressed"):
        snapshot_load(path, max_bytes=1_000_000)


def test_it_reads_past_a_utf8_byte_order_mark(tmp_path: Path) -> None:
    path = _write(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(b.kube_list([b.node("n1")])).encode())

    assert snapshot_load(path, max_bytes=LIMIT).collected == {"Node"}


def test_it_refuses_utf16_with_what_to_do(tmp_path: Path) -> None:
    path = _write(tmp_path, "ps.json", json.dumps(b.kube_list([b.node("n1")])).encode("utf-16"))

    with pytest.raises(SnapshotError, match="UTF-16 encoded; save it as UTF-8"):
        snapshot_load(path, max_bytes=LIMIT)


# YAML.

SERVICE_YAML = """\
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  creationTimestamp: 2024-05-01T10:00:00Z
spec:
  selector: {app: web}
  ports: [{port: 80}]
"""


def test_it_reads_multi_document_yaml_manifests(tmp_path: Path) -> None:
    deployment = b.workload("Deployment", "web", "shop", containers=[b.container("app", "shop/web:1")])
    content = f"---\n{SERVICE_YAML}---\n{yaml.safe_dump(deployment)}---\n# only a comment\n"
    path = _write(tmp_path, "app.yaml", content)

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert snapshot.collected == {"Service", "Deployment"}
    assert snapshot.objects["Deployment"][0]["spec"] == deployment["spec"]
    # Timestamps stay strings, as in the JSON the API serves.
    assert snapshot.objects["Service"][0]["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z"


def test_it_reads_a_kubectl_yaml_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "cluster.yml", yaml.safe_dump(_typed_list("Node", [b.node("n1"), b.node("n2")])))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert [n["metadata"]["name"] for n in snapshot.objects["Node"]] == ["n1", "n2"]


def test_it_names_the_line_of_invalid_yaml(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", SERVICE_YAML + "\tsessionAffinity: None\n")

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(path, max_bytes=LIMIT)

    assert str(raised.value).startswith("app.yaml: line 10, column 1: is not valid YAML (while scanning")
    assert "cannot start any token" in str(raised.value)


def test_it_names_where_an_unclosed_yaml_structure_started(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", SERVICE_YAML + "  externalIPs: [10.0.0.1\n")

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(path, max_bytes=LIMIT)

    assert "while parsing a flow sequence that starts at line 10" in str(raised.value)


def test_it_says_a_yaml_file_is_truncated(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.yaml", 'apiVersion: v1\nkind: Service\nmetadata:\n  name: "web')

    with pytest.raises(SnapshotError, match=r"^app.yaml: line 4, column \d+: is truncated"):
        snapshot_load(path, max_bytes=LIMIT)


def test_it_refuses_a_yaml_alias_bomb(tmp_path: Path) -> None:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: lol, namespace: kube-system}", "data:"]
    lines.append('  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    lines += [f"  a{i}: &a{i} [{','.join(f'*a{i - 1}' for _ in range(9))}]" for i in range(1, 9)]
    path = _write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(path, max_bytes=LIMIT)

    assert str(raised.value).startswith("bomb.yaml: line 1: ")
    assert "alias bombs" in str(raised.value)


def test_it_refuses_a_yaml_document_that_contains_itself(tmp_path: Path) -> None:
    path = _write(tmp_path, "loop.yaml", "apiVersion: v1\nkind: Service\nmetadata: &m {name: web, self: *m}\n")

    with pytest.raises(SnapshotError, match=r"loop\.yaml: line 1: the document contains itself"):
        snapshot_load(path, max_bytes=LIMIT)


def test_a_few_yaml_aliases_are_fine(tmp_path: Path) -> None:
    content = "apiVersion: v1\nkind: Service\nmetadata: {name: web, labels: &l {app: web}}\nspec: {selector: *l}\n"
    snapshot = snapshot_load(_write(tmp_path, "web.yaml", content), max_bytes=LIMIT)

    assert snapshot.objects["Service"][0]["spec"]["selector"] == {"app": "web"}


def test_it_refuses_yaml_tags_it_cannot_read(tmp_path: Path) -> None:
    path = _write(tmp_path, "cfn.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: !Ref Name\n")

    with pytest.raises(SnapshotError, match=r"cfn.yaml: line 4, column 9: is not valid YAML .*'!Ref'"):
        snapshot_load(path, max_bytes=LIMIT)


# Manifest directories.


def _manifests(tmp_path: Path) -> Path:
    root = tmp_path / "deploy"
    (root / "apps" / "web").mkdir(parents=True)
    (root / ".github").mkdir()
    web = b.workload("Deployment", "web", "shop", replicas=3, containers=[b.container("app", "shop/web:1")])
    (root / "apps" / "web" / "deployment.yaml").write_text(yaml.safe_dump(web))
    (root / "apps" / "web" / "service.yml").write_text(SERVICE_YAML)
    (root / "apps" / "pdb.json").write_text(json.dumps(b.pdb("web", "shop", {"app": "web"})))
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "stringData": {"password": "hunter2"}}
    pod = b.pod_for(web, 0, "n1")
    (root / "apps" / "extras.yaml").write_text(yaml.safe_dump_all([secret, pod]))
    (root / "apps" / "values.yaml").write_text("replicaCount: 3\nimage: {tag: latest}\n")
    (root / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [apps]\n"
    )
    (root / ".github" / "ci.yaml").write_text("{{ this is not yaml")
    (root / ".hidden.yaml").write_text("{{ nor this")
    (root / "README.md").write_text("# not a manifest")
    return root


def test_a_manifest_directory_is_the_whole_desired_state(tmp_path: Path) -> None:
    snapshot = snapshot_load(_manifests(tmp_path), max_bytes=LIMIT)

    assert {k: len(v) for k, v in snapshot.objects.items() if v} == {
        "Deployment": 1,
        "Service": 1,
        "PodDisruptionBudget": 1,
    }
    # Declared kinds count as collected even when no file declares one...
    assert {"HorizontalPodAutoscaler", "StatefulSet", "Ingress"} <= snapshot.collected
    # ...cluster state does not, whatever the files hold.
    assert not snapshot.collected & {"Node", "Pod", "EndpointSlice", "ReplicaSet", "Namespace"}
    assert snapshot.not_collected["Pod"].startswith("cluster state")
    assert "hunter2" not in json.dumps(snapshot.objects)
    assert snapshot.warnings == [
        "deploy/kustomization.yaml: line 1: a Kustomization of kustomize.config.k8s.io is not the Kustomization "
        "of kustomize.toolkit.fluxcd.io kubegap-web reads; skipped.",
        'deploy/apps/values.yaml: line 1: not a Kubernetes object or List: it has no "kind". Skipped.',
        "deploy: 1 Pod object(s) skipped: Pod is cluster state, not audited from manifests.",
    ]


def test_a_manifest_directory_names_its_bad_file(tmp_path: Path) -> None:
    root = _manifests(tmp_path)
    (root / "apps" / "web" / "broken.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n name: x\n  bad: 1\n")

    with pytest.raises(SnapshotError) as raised:
        snapshot_load(root, max_bytes=LIMIT)

    assert str(raised.value).startswith("deploy/apps/web/broken.yaml: line 5, column 6: is not valid YAML")


def test_a_manifest_directory_is_bounded_as_a_whole(tmp_path: Path) -> None:
    root = _manifests(tmp_path)

    with pytest.raises(SnapshotError, match=r"^deploy: the manifests add up to more than 1,000 bytes"):
        snapshot_load(root, max_bytes=1_000)


def test_an_empty_manifest_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty" / ".git").mkdir(parents=True)
    (tmp_path / "empty" / ".git" / "config.yaml").write_text("kind: Service\n")

    with pytest.raises(SnapshotError, match=r"^empty: no manifests in this directory"):
        snapshot_load(tmp_path / "empty", max_bytes=LIMIT)
