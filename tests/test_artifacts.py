"""Incident artifacts (cluster-info dumps, support bundles, must-gathers), each built here in its tool's layout."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
import os
import struct
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from audits import checks
from audits.collect.artifacts import ArtifactError, summary_of
from audits.collect.artifacts.yaml_items import read_yaml_items
from audits.collect.documents import SnapshotAssembler
from audits.collect.files import snapshot_dump, snapshot_load
from audits.collect.reading import LimitedReader
from audits.collect.snapshot import Snapshot
from audits.collect.yaml_stream import ManifestLoader
from audits.demo import builders as b

LIMIT = 50_000_000
UTC = dt.UTC
CAPTURE = dt.datetime(2025, 3, 2, 10, 15, tzinfo=UTC)
Obj = dict[str, Any]


# --- building artifacts -------------------------------------------------------------------------------


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


class Tree:
    """An artifact being built: its files' contents by path."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.mtimes: dict[str, dt.datetime] = {}

    def json(self, path: str, document: Any) -> Tree:
        self.files[path] = json.dumps(document, indent=2).encode()
        return self

    def yaml(self, path: str, document: Any) -> Tree:
        # Go's YAML writers sort keys (a List's "items" comes before its "kind") and never write aliases.
        self.files[path] = yaml.dump(document, Dumper=_NoAliases, sort_keys=True).encode()
        return self

    def text(self, path: str, text: str | bytes) -> Tree:
        self.files[path] = text.encode() if isinstance(text, str) else text
        return self

    def at(self, path: str, moment: dt.datetime) -> Tree:
        self.mtimes[path] = moment
        return self

    def directory(self, root: Path) -> Path:
        for path, data in self.files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        return root

    def tar(self, path: Path, compression: str = "gz", default_mtime: dt.datetime | None = None) -> Path:
        mode = f"w:{compression}" if compression else "w"
        with tarfile.open(path, mode) as archive:  # type: ignore[call-overload]
            for name, data in self.files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = int(
                    self.mtimes.get(name, default_mtime or dt.datetime(1980, 1, 1, tzinfo=UTC)).timestamp()
                )
                archive.addfile(info, io.BytesIO(data))
        return path

    def zip(self, path: Path) -> Path:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in self.files.items():
                info = zipfile.ZipInfo(name, date_time=(2001, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                if name in self.mtimes:
                    # The "extended timestamp" field: UTC seconds, which the classic zip date is not.
                    info.extra = struct.pack("<HHBi", 0x5455, 5, 1, int(self.mtimes[name].timestamp()))
                archive.writestr(info, data)
        return path


def typed_list(kind: str, items: list[Obj], api_version: str = "v1", *, kindless: bool = True) -> Obj:
    """A typed List as client-go writes it: its items carry no kind or apiVersion."""
    if kindless:
        items = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in items]
    return {"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": "1"}, "items": items}


def generic_list(items: list[Obj]) -> Obj:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


class Incident:
    """The cluster at the moment of the incident: two nodes, a single-replica api, a two-replica web without PDB."""

    def __init__(self) -> None:
        self.nodes = [b.node("n1", zone="zone-a"), b.node("n2", zone="zone-b")]
        self.api = b.workload("Deployment", "api", "shop", replicas=1, containers=[b.container("app", "shop/api:1.2")])
        self.web = b.workload("Deployment", "web", "shop", replicas=2, containers=[b.container("app", "shop/web:1.2")])
        self.replicaset = b.replicaset_for(self.web)
        self.pods = [b.pod_for(self.replicaset, 0, "n1"), b.pod_for(self.replicaset, 1, "n2")]
        self.namespace = b.namespace("shop")
        self.secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db", "namespace": "shop"},
            "data": {"password": "aHVudGVyMg=="},
        }
        self.coredns = b.config_map("coredns", "kube-system", {"Corefile": ".:53 { forward . /etc/resolv.conf }"})

    @property
    def deployments(self) -> list[Obj]:
        return [self.api, self.web]

    def pod_names(self) -> list[str]:
        return sorted(p["metadata"]["name"] for p in self.pods)


def names(snapshot: Snapshot) -> dict[str, list[str]]:
    return {kind: sorted(o["metadata"]["name"] for o in objects) for kind, objects in snapshot.objects.items()}


def found(snapshot: Snapshot, check_id: str) -> list[str]:
    evaluation = checks.evaluate(snapshot, [checks.CATALOG[check_id]])
    if check_id in evaluation.not_evaluated:
        return [f"not evaluated: {evaluation.not_evaluated[check_id]}"]
    return sorted(f"{f.kind} {f.namespace}/{f.name}" for f in evaluation.findings)


# Layouts, as the tools write them.


def cluster_info_dump(incident: Incident, top: str = "cluster-state") -> Tree:
    tree = Tree()
    tree.json(f"{top}/nodes.json", typed_list("NodeList", incident.nodes))
    for namespace in ("shop", "kube-system"):
        mine = [o for o in incident.deployments if o["metadata"]["namespace"] == namespace]
        tree.json(f"{top}/{namespace}/deployments.json", typed_list("DeploymentList", mine, "apps/v1"))
        tree.json(f"{top}/{namespace}/daemonsets.json", typed_list("DaemonSetList", [], "apps/v1"))
        tree.json(f"{top}/{namespace}/services.json", typed_list("ServiceList", []))
        tree.json(f"{top}/{namespace}/events.json", typed_list("EventList", []))
        tree.json(f"{top}/{namespace}/replicationcontrollers.json", typed_list("ReplicationControllerList", []))
    tree.json(f"{top}/shop/replicasets.json", typed_list("ReplicaSetList", [incident.replicaset], "apps/v1"))
    tree.json(f"{top}/kube-system/replicasets.json", typed_list("ReplicaSetList", [], "apps/v1"))
    tree.json(f"{top}/shop/pods.json", typed_list("PodList", incident.pods))
    tree.json(f"{top}/kube-system/pods.json", typed_list("PodList", []))
    for pod in incident.pods:
        tree.text(f"{top}/shop/{pod['metadata']['name']}/logs.txt", "==== START logs ====\nnot JSON at all\n")
    return tree


def troubleshoot_bundle(incident: Incident, *, bare_arrays: bool = False) -> Tree:
    """Replicated troubleshoot: typed Lists with kinds set, or (older bundles) the bare array of items."""

    def listing(kind: str, items: list[Obj], api_version: str = "v1") -> Any:
        if bare_arrays:
            return [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in items]
        return typed_list(kind, items, api_version, kindless=False)

    top = "support-bundle-2025-03-02T10_15_00/cluster-resources"
    tree = Tree()
    tree.json(f"{top}/nodes.json", listing("NodeList", incident.nodes))
    tree.json(f"{top}/namespaces.json", listing("NamespaceList", [incident.namespace]))
    tree.json(f"{top}/deployments/shop.json", listing("DeploymentList", incident.deployments, "apps/v1"))
    tree.json(f"{top}/replicasets/shop.json", listing("ReplicaSetList", [incident.replicaset], "apps/v1"))
    tree.json(f"{top}/pods/shop.json", listing("PodList", incident.pods))
    tree.json(f"{top}/pod-disruption-budgets/shop.json", listing("PodDisruptionBudgetList", [], "policy/v1"))
    tree.json(f"{top}/configmaps/kube-system.json", listing("ConfigMapList", [incident.coredns]))
    tree.json(f"{top}/pods-errors.json", {"kube-system": 'pods is forbidden: User "support" cannot list pods'})
    tree.json(f"{top}/statefulsets-errors.json", ['statefulsets.apps is forbidden: User "support" cannot list'])
    tree.json(f"{top}/deployments-errors.json", [])
    tree.text(f"{top}/image-pull-secrets/shop/regcred.json", b"\x00 never opened: not even JSON")
    tree.json(f"{top}/events/shop.json", listing("EventList", []))
    tree.text(f"{top}/pods/logs/shop/web-0/app.log", "a log line")
    tree.json(
        "support-bundle-2025-03-02T10_15_00/cluster-info/cluster_version.json",
        {"info": {"gitVersion": "v1.29.3", "major": "1", "minor": "29"}, "string": "v1.29.3"},
    )
    tree.json("support-bundle-2025-03-02T10_15_00/version.yaml", {"apiVersion": "troubleshoot.sh/v1beta2"})
    return tree


def support_bundle_kit(incident: Incident) -> Tree:
    """Rancher's support-bundle-kit: YAML Lists by namespace, group and version; items carry their kind."""
    top = "supportbundle_08a4d_2025-03-02T10-15-00Z"
    tree = Tree()
    tree.yaml(f"{top}/yamls/cluster/v1/nodes.yaml", generic_list(incident.nodes))
    tree.yaml(f"{top}/yamls/cluster/v1/namespaces.yaml", generic_list([incident.namespace]))
    tree.yaml(f"{top}/yamls/namespaced/shop/apps/v1/deployments.yaml", generic_list(incident.deployments))
    tree.yaml(f"{top}/yamls/namespaced/shop/apps/v1/replicasets.yaml", generic_list([incident.replicaset]))
    tree.yaml(f"{top}/yamls/namespaced/shop/v1/pods.yaml", generic_list(incident.pods))
    tree.yaml(f"{top}/yamls/namespaced/shop/v1/secrets.yaml", generic_list([incident.secret]))
    tree.yaml(f"{top}/yamls/namespaced/shop/v1/configmaps.yaml", generic_list([b.config_map("app", "shop", {})]))
    tree.yaml(f"{top}/yamls/namespaced/kube-system/v1/configmaps.yaml", generic_list([incident.coredns]))
    tree.yaml(f"{top}/yamls/namespaced/shop/policy/v1/poddisruptionbudgets.yaml", generic_list([]))
    tree.yaml(f"{top}/yamls/namespaced/shop/harvesterhci.io/v1beta1/keypairs.yaml", generic_list([]))
    tree.text(f"{top}/logs/shop/web-0/app.log", "a log line")
    tree.yaml(
        f"{top}/metadata.yaml",
        {"projectName": "Rancher", "kubernetesVersion": "v1.28.9+rke2r1", "bundleCreatedAt": "2025-03-02T10:15:00Z"},
    )
    return tree


MUST_GATHER_IMAGE = "quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-5f9c"


def must_gather(incident: Incident, *, images: tuple[str, ...] = (MUST_GATHER_IMAGE,)) -> Tree:
    """`oc adm must-gather`: a folder per gather image, YAML Lists by namespace and group (core: the core group)."""
    top = "must-gather.local.5327491627913"
    tree = Tree()
    tree.text(
        f"{top}/timestamp",
        "2025-03-02 10:11:02.31 +0000 UTC m=+0.061\n2025-03-02 10:15:00.12 +0000 UTC m=+238.1\n",
    )
    tree.text(f"{top}/event-filter.html", "<html></html>")
    for image in images:
        root = f"{top}/{image}"
        for node in incident.nodes:
            tree.yaml(f"{root}/cluster-scoped-resources/core/nodes/{node['metadata']['name']}.yaml", node)
        tree.yaml(f"{root}/namespaces/shop/shop.yaml", incident.namespace)
        tree.yaml(f"{root}/namespaces/shop/apps/deployments.yaml", generic_list(incident.deployments))
        tree.yaml(f"{root}/namespaces/shop/apps/replicasets.yaml", generic_list([incident.replicaset]))
        tree.yaml(f"{root}/namespaces/shop/core/pods.yaml", generic_list(incident.pods))
        tree.yaml(f"{root}/namespaces/shop/core/secrets.yaml", generic_list([incident.secret]))
        tree.yaml(f"{root}/namespaces/shop/policy/poddisruptionbudgets.yaml", generic_list([]))
        for pod in incident.pods:
            name = pod["metadata"]["name"]
            tree.yaml(f"{root}/namespaces/shop/pods/{name}/{name}.yaml", pod)
            tree.text(f"{root}/namespaces/shop/pods/{name}/app/app/logs/current.log", "a log line")
    return tree


# --- kubectl cluster-info dump --------------------------------------------------------------------------


def test_a_cluster_info_dump_directory_is_read_as_cluster_state_and_its_logs_are_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    incident = Incident()
    root = cluster_info_dump(incident).directory(tmp_path / "dump")
    opened: list[str] = []
    real_open = os.open

    def spying_open(path: Any, *args: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args)

    monkeypatch.setattr("audits.collect.artifacts.archives.os.open", spying_open)

    snapshot = snapshot_load(root / "cluster-state", max_bytes=LIMIT)

    assert names(snapshot) == {
        "Node": ["n1", "n2"],
        "Deployment": ["api", "web"],
        "DaemonSet": [],
        "Service": [],
        "ReplicaSet": [incident.replicaset["metadata"]["name"]],
        "Pod": incident.pod_names(),
    }
    assert not any(path.endswith("logs.txt") or "events" in path for path in opened)
    assert len(opened) == 11  # nodes, and five files of kinds it reads in each of two namespaces
    assert snapshot.not_collected["PodDisruptionBudget"] == "absent from the artifact"
    assert snapshot.not_collected["StatefulSet"] == "absent from the artifact"
    assert "Service" not in snapshot.not_collected  # present as an empty list: collected
    assert found(snapshot, "KG-DIS-001") == ["Deployment shop/api"]
    assert found(snapshot, "KG-DIS-002") == [
        "not evaluated: not collected: PodDisruptionBudget (absent from the artifact)"
    ]
    summary = summary_of(snapshot)
    assert summary is not None
    assert (summary["layout"], summary["files_read"], summary["namespaces"]) == (
        "cluster-info-dump",
        11,
        ["kube-system", "shop"],
    )
    # A copied directory's file times say nothing; the objects here carry none either.
    assert snapshot.captured_at is None
    assert summary["captured_at_from"].startswith("unknown")
    assert snapshot.warnings == []


def test_a_cluster_info_dump_archive_is_placed_at_its_newest_file_time(tmp_path: Path) -> None:
    tree = cluster_info_dump(Incident())
    tree.at("cluster-state/nodes.json", CAPTURE - dt.timedelta(minutes=3))
    tree.at("cluster-state/shop/pods.json", CAPTURE)
    archive = tree.tar(tmp_path / "incident-4711.tar.gz", default_mtime=CAPTURE - dt.timedelta(minutes=5))

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert snapshot.captured_at == CAPTURE
    summary = summary_of(snapshot)
    assert summary is not None
    assert summary["captured_at_from"] == "from the newest file time in the archive (cluster-state/shop/pods.json)"
    assert snapshot.source == "incident-4711.tar.gz"
    assert found(snapshot, "KG-DIS-001") == ["Deployment shop/api"]


# --- support bundles ----------------------------------------------------------------------------------


@pytest.mark.parametrize("bare_arrays", [False, True], ids=["typed-lists", "older-bare-arrays"])
def test_a_troubleshoot_support_bundle_holds_what_its_collector_could_read(tmp_path: Path, bare_arrays: bool) -> None:
    incident = Incident()
    tree = troubleshoot_bundle(incident, bare_arrays=bare_arrays)
    tree.at("support-bundle-2025-03-02T10_15_00/cluster-resources/pods/shop.json", CAPTURE)
    archive = tree.zip(tmp_path / "bundle.zip")

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert names(snapshot) == {
        "Node": ["n1", "n2"],
        "Namespace": ["shop"],
        "Deployment": ["api", "web"],
        "ReplicaSet": [incident.replicaset["metadata"]["name"]],
        "Pod": incident.pod_names(),
        "PodDisruptionBudget": [],
        "ConfigMap": ["coredns"],
    }
    # The empty PodDisruptionBudget list is collected: web has none, and that is a finding.
    assert found(snapshot, "KG-DIS-002") == ["Deployment shop/web"]
    assert snapshot.not_collected["StatefulSet"] == (
        'the bundle\'s collector could not read it: statefulsets.apps is forbidden: User "support" cannot list'
    )
    assert snapshot.not_collected["Service"] == "absent from the artifact"
    assert snapshot.warnings == [
        'Pod: the bundle\'s collector could not read all of them (pods is forbidden: User "support" cannot list '
        "pods); those it could not read are not audited.",
        "1 file(s) of Secrets not opened: Secrets are never read.",
    ]
    assert snapshot.server_version == "v1.29.3"
    assert snapshot.captured_at == CAPTURE
    assert summary_of(snapshot)["layout"] == "troubleshoot"  # type: ignore[index]


def test_a_support_bundle_kit_bundle_is_placed_at_its_recorded_creation_time(tmp_path: Path) -> None:
    incident = Incident()
    archive = support_bundle_kit(incident).tar(tmp_path / "supportbundle.tar.xz", compression="xz")

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert names(snapshot) == {
        "Node": ["n1", "n2"],
        "Namespace": ["shop"],
        "Deployment": ["api", "web"],
        "ReplicaSet": [incident.replicaset["metadata"]["name"]],
        "Pod": incident.pod_names(),
        "ConfigMap": ["coredns"],  # only kube-system's are read
        "PodDisruptionBudget": [],
    }
    assert snapshot.captured_at == CAPTURE
    summary = summary_of(snapshot)
    assert summary is not None
    assert summary["captured_at_from"] == (
        "from the bundle's metadata (supportbundle.tar.xz:supportbundle_08a4d_2025-03-02T10-15-00Z/metadata.yaml, "
        "bundleCreatedAt)"
    )
    assert snapshot.server_version == "v1.28.9+rke2r1"
    assert summary["secret_files"] == 1
    assert "aHVudGVyMg==" not in json.dumps(snapshot.objects)
    assert found(snapshot, "KG-DIS-002") == ["Deployment shop/web"]


# --- OpenShift must-gather ------------------------------------------------------------------------------


def test_a_must_gather_counts_each_object_once_and_takes_its_timestamp_file(tmp_path: Path) -> None:
    incident = Incident()
    second_image = "quay-io-openshift-cnv-must-gather-sha256-77aa"
    archive = must_gather(incident, images=(MUST_GATHER_IMAGE, second_image)).tar(tmp_path / "must-gather.tar.gz")

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert names(snapshot) == {
        "Node": ["n1", "n2"],
        "Namespace": ["shop"],
        "Deployment": ["api", "web"],
        "ReplicaSet": [incident.replicaset["metadata"]["name"]],
        "Pod": incident.pod_names(),
        "PodDisruptionBudget": [],
    }
    # The second gather image wrote every object again: 2 nodes, 1 namespace, 2 deployments, 1 replicaset, 2 pods.
    assert "8 object(s) written more than once in the artifact were counted once." in snapshot.warnings
    summary = summary_of(snapshot)
    assert summary is not None
    assert summary["repeated_objects"] == 8
    assert snapshot.captured_at == dt.datetime(2025, 3, 2, 10, 15, 0, tzinfo=UTC)
    assert summary["captured_at_from"] == (
        "from the must-gather's timestamp file (must-gather.tar.gz:must-gather.local.5327491627913/timestamp)"
    )
    assert "aHVudGVyMg==" not in json.dumps(snapshot.objects)
    assert "2 file(s) of Secrets not opened: Secrets are never read." in snapshot.warnings
    assert found(snapshot, "KG-DIS-001") == ["Deployment shop/api"]
    assert found(snapshot, "KG-DIS-002") == ["Deployment shop/web"]


def test_a_must_gather_pod_written_only_in_its_own_folder_is_read_from_there(tmp_path: Path) -> None:
    incident = Incident()
    tree = must_gather(incident)
    del tree.files[f"must-gather.local.5327491627913/{MUST_GATHER_IMAGE}/namespaces/shop/core/pods.yaml"]
    root = tree.directory(tmp_path)

    snapshot = snapshot_load(root / "must-gather.local.5327491627913", max_bytes=LIMIT)

    assert names(snapshot)["Pod"] == incident.pod_names()
    assert snapshot.captured_at == dt.datetime(2025, 3, 2, 10, 15, 0, tzinfo=UTC)


# --- when it was captured ------------------------------------------------------------------------------


def test_without_a_recorded_time_the_newest_time_in_the_objects_places_the_artifact(tmp_path: Path) -> None:
    incident = Incident()
    incident.api["metadata"]["creationTimestamp"] = "2025-01-10T08:00:00Z"
    for node, heartbeat in zip(incident.nodes, ("2025-03-02T10:13:44Z", "2025-03-02T10:14:09Z"), strict=True):
        for condition in node["status"]["conditions"]:
            condition["lastHeartbeatTime"] = heartbeat
    root = cluster_info_dump(incident).directory(tmp_path)

    snapshot = snapshot_load(root / "cluster-state", max_bytes=LIMIT)

    assert snapshot.captured_at == dt.datetime(2025, 3, 2, 10, 14, 9, tzinfo=UTC)
    assert summary_of(snapshot)["captured_at_from"] == (  # type: ignore[index]
        "from the newest time inside the objects (status.conditions[].lastHeartbeatTime of Node n2); "
        "the artifact was captured then or later"
    )


def test_a_given_capture_time_wins_and_a_recorded_time_older_than_the_objects_is_doubted(tmp_path: Path) -> None:
    incident = Incident()
    incident.pods[0]["status"]["startTime"] = "2025-03-02T11:30:00Z"
    archive = must_gather(incident).tar(tmp_path / "mg.tar.gz")
    given = dt.datetime(2025, 3, 2, 12, 0, tzinfo=UTC)

    recorded = snapshot_load(archive, max_bytes=LIMIT)
    overridden = snapshot_load(archive, max_bytes=LIMIT, captured_at=given)

    assert recorded.captured_at == dt.datetime(2025, 3, 2, 10, 15, tzinfo=UTC)
    pod = incident.pods[0]["metadata"]["name"]
    assert (
        f"objects carry times up to 2025-03-02 11:30:00 UTC (status.startTime of Pod shop/{pod}), after the capture "
        "time 2025-03-02 10:15:00 UTC taken from the must-gather's timestamp file "
        "(mg.tar.gz:must-gather.local.5327491627913/timestamp); if that is wrong, give the time with --captured-at."
    ) in recorded.warnings
    assert overridden.captured_at == given
    assert summary_of(overridden)["captured_at_from"] == "as given"  # type: ignore[index]
    assert not any(w.startswith("objects carry times") for w in overridden.warnings)


def test_an_artifact_round_trips_through_our_export_with_its_time_and_what_it_lacked(tmp_path: Path) -> None:
    snapshot = snapshot_load(must_gather(Incident()).tar(tmp_path / "mg.tgz"), max_bytes=LIMIT)
    buffer = io.BytesIO()
    snapshot_dump(snapshot, buffer)
    (tmp_path / "export.json.gz").write_bytes(buffer.getvalue())

    again = snapshot_load(tmp_path / "export.json.gz", max_bytes=LIMIT)

    assert names(again) == names(snapshot)
    assert again.captured_at == snapshot.captured_at
    assert again.not_collected == snapshot.not_collected
    assert summary_of(again) == summary_of(snapshot)


# --- manifests and unknown layouts -------------------------------------------------------------------


def test_an_archive_of_manifests_is_read_as_desired_state_like_a_directory(tmp_path: Path) -> None:
    incident = Incident()
    tree = Tree().yaml("deploy/api.yaml", incident.api).yaml("deploy/web.yaml", incident.web)
    archive = tree.tar(tmp_path / "deploy.tar.gz")

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert names(snapshot)["Deployment"] == ["api", "web"]
    assert snapshot.not_collected["Pod"] == "cluster state: a manifest directory declares desired state only"
    assert found(snapshot, "KG-DIS-002") == ["Deployment shop/web"]
    assert summary_of(snapshot) is None


def test_an_archive_of_no_known_layout_is_refused_with_what_was_looked_for(tmp_path: Path) -> None:
    archive = (
        Tree()
        .text("notes/incident.txt", "the pager went off")
        .text("graphs/cpu.png", b"\x89PNG")
        .zip(tmp_path / "notes.zip")
    )

    with pytest.raises(ArtifactError) as raised:
        snapshot_load(archive, max_bytes=LIMIT)

    assert str(raised.value).startswith("notes.zip: not an artifact kubegap-web recognises, and no manifests in it.")
    assert "Found 2 file(s): notes/incident.txt, graphs/cpu.png." in str(raised.value)


# --- the YAML reader for large Lists -------------------------------------------------------------------


def test_the_streaming_yaml_reader_types_values_as_the_manifest_loader_does() -> None:
    text = """\
apiVersion: v1
items:
- kind: ConfigMap
  apiVersion: v1
  metadata: {name: coredns, namespace: kube-system, creationTimestamp: 2025-03-02T10:15:00Z}
  data:
    quoted: "yes"
    plain_yes: yes
    number: 0x1F
    octal: 010
    float: 1.5e3
    infinity: .inf
    empty:
    tilde: ~
    list: [1, "2", three, null]
    text: |
      .:53 {
          forward . /etc/resolv.conf
      }
kind: List
---
kind: ConfigMap
apiVersion: v1
metadata: {name: kube-proxy, namespace: kube-system}
data: {on: off}
"""
    expected = list(yaml.load_all(text, Loader=ManifestLoader))
    seen: list[Obj] = []

    class Recorder(SnapshotAssembler):
        def admit(self, obj: Obj, kind: str, *, where: str) -> bool:
            seen.append(copy.deepcopy(obj))
            return True

    reader = LimitedReader(io.BytesIO(text.encode()), name="cm.yaml", max_bytes=LIMIT)
    read_yaml_items(reader, Recorder(Snapshot()), name="cm.yaml")

    assert seen == [expected[0]["items"][0], expected[1]]


def test_a_cluster_info_dump_printed_to_a_file_is_read_without_its_pod_logs(tmp_path: Path) -> None:
    incident = Incident()
    api_pod = b.pod_for(b.replicaset_for(incident.api), 0, "n1")
    # kubectl prints each List indented, then each container's log between two marker lines; a log that does
    # not end with a newline has the end marker on its last line, and a long one spans many reads.
    parts = [json.dumps(typed_list("NodeList", incident.nodes), indent=4)]
    for namespace, pods in (("shop", incident.pods), ("kube-system", [api_pod])):
        parts += [json.dumps(typed_list("EventList", []), indent=4)]
        parts += [json.dumps(typed_list("DeploymentList", incident.deployments, "apps/v1"), indent=4)]
        parts += [json.dumps(typed_list("PodList", pods), indent=4)]
        for pod in pods:
            marker = f"container app of pod {namespace}/{pod['metadata']['name']} ===="
            log = '{"level": "info", "msg": "not a Kubernetes object"}\n' + "x" * 300_000
            parts += [f"==== START logs for {marker}\n{log}==== END logs for {marker}"]
    path = tmp_path / "cluster-info.dump"
    path.write_text("\n".join(parts) + "\n")

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert names(snapshot)["Pod"] == sorted([*incident.pod_names(), api_pod["metadata"]["name"]])
    assert names(snapshot)["Node"] == ["n1", "n2"]


def test_log_sections_are_left_out_wherever_the_reads_cut_their_markers() -> None:
    logs = "==== START logs for container a of pod x/y ====\n{oops\n==== END logs for container a of pod x/y ====\n"
    text = f'{{"kind": "PodList"}}\n{logs}{logs}{{"kind": "NodeList"}}\n{logs.rstrip()}'.encode()
    reader = LimitedReader(io.BytesIO(text), name="dump", max_bytes=LIMIT)
    reader.skip_log_sections()

    parts = []
    while chunk := reader.read(5):
        parts.append(chunk)

    assert b"".join(parts).split() == [b'{"kind":', b'"PodList"}', b'{"kind":', b'"NodeList"}']
