"""Artifacts that are broken or built to hurt: each is refused with a clear error or skipped with a warning naming
the file; nothing crashes, nothing is written outside, and a bad file never leaves half its objects behind."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import lzma
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from audits.collect.artifacts import ArtifactError, archives
from audits.collect.files import snapshot_load
from audits.collect.snapshot import Snapshot
from tests.test_artifacts import LIMIT, MUST_GATHER_IMAGE, Incident, Tree, cluster_info_dump, must_gather, names

ZEROS = 4 * 1024**2


def add_entry(
    archive: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = ""
) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    archive.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def dump_with(tmp_path: Path, extra: list[tuple[str, bytes, bytes, str]]) -> Path:
    """A valid cluster-info dump, then extra entries: (name, tar type, data, link target)."""
    path = tmp_path / "dump.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in cluster_info_dump(Incident()).files.items():
            add_entry(archive, name, data=data)
        for name, kind, data, link in extra:
            add_entry(archive, name, kind, data, link)
    return path


def test_unsafe_paths_links_and_device_files_are_skipped_by_name_and_nothing_is_written(tmp_path: Path) -> None:
    escape = tmp_path.parent / "escaped-node-list.json"
    absolute = tmp_path / "absolute.json"
    nodes = json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": []}).encode()
    archive = dump_with(
        tmp_path,
        [
            (f"../{escape.name}", tarfile.REGTYPE, nodes, ""),
            (str(absolute), tarfile.REGTYPE, nodes, ""),
            ("cluster-state/kube-system/statefulsets.json", tarfile.SYMTYPE, b"", "/etc/passwd"),
            ("cluster-state/monitoring/pods.json", tarfile.LNKTYPE, b"", "cluster-state/nodes.json"),
            ("cluster-state/monitoring/console", tarfile.CHRTYPE, b"", ""),
            ("cluster-state/monitoring/fifo", tarfile.FIFOTYPE, b"", ""),
        ],
    )
    cwd = Path.cwd()

    snapshot = snapshot_load(archive, max_bytes=LIMIT)

    assert names(snapshot)["Node"] == ["n1", "n2"]
    assert snapshot.warnings[:6] == [
        f"dump.tar.gz: '../{escape.name}' is an unsafe path (absolute, or with ..), not read",
        f"dump.tar.gz: '{absolute}' is an unsafe path (absolute, or with ..), not read",
        "dump.tar.gz:cluster-state/kube-system/statefulsets.json: a symbolic link to '/etc/passwd', not read",
        "dump.tar.gz:cluster-state/monitoring/pods.json: a hard link to 'cluster-state/nodes.json', not read",
        "dump.tar.gz:cluster-state/monitoring/console: a device file, not read",
        "dump.tar.gz:cluster-state/monitoring/fifo: a FIFO, not read",
    ]
    assert not escape.exists() and not absolute.exists()
    assert not (cwd / escape.name).exists()
    assert snapshot.not_collected["StatefulSet"] == "absent from the artifact"


def test_an_unpacked_artifact_never_follows_links_nor_opens_fifos(tmp_path: Path) -> None:
    root = cluster_info_dump(Incident()).directory(tmp_path / "dump") / "cluster-state"
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"kind": "StatefulSetList", "apiVersion": "apps/v1", "items": []}))
    (root / "shop" / "statefulsets.json").symlink_to(outside)
    os.mkfifo(root / "shop" / "services.json.fifo")
    (root / "shop" / "services.json").unlink()
    os.mkfifo(root / "shop" / "services.json")

    snapshot = snapshot_load(root, max_bytes=LIMIT)

    assert "dump/shop/services.json: a FIFO, not read" in " ".join(snapshot.warnings).replace("cluster-state/", "dump/")
    assert any(w.endswith("shop/statefulsets.json: a symbolic link, not read") for w in snapshot.warnings)
    assert snapshot.not_collected["StatefulSet"] == "absent from the artifact"
    assert "Service" in snapshot.objects  # kube-system's services.json is an ordinary file


def test_an_archive_expanding_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    archive = Tree().text("cluster-state/nodes.json", b" " * ZEROS).tar(tmp_path / "big.tar.gz")

    with pytest.raises(ArtifactError, match=r"^big.tar.gz: expands past 1,000,000 bytes \(SNAPSHOT_MAX_BYTES\)"):
        snapshot_load(archive, max_bytes=1_000_000)


def test_a_tar_bomb_is_refused_by_its_expansion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "RATIO_FLOOR", 1024**2)
    archive = Tree().text("cluster-state/nodes.json", b"\x00" * ZEROS).tar(tmp_path / "bomb.tar.gz")

    with pytest.raises(ArtifactError, match=r"^bomb.tar.gz: expands more than 250 times its compressed size"):
        snapshot_load(archive, max_bytes=LIMIT)


def test_a_zip_member_bomb_is_refused_naming_the_member(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "RATIO_FLOOR", 1024**2)
    tree = cluster_info_dump(Incident()).text("cluster-state/shop/pods.json", b" " * ZEROS)
    archive = tree.zip(tmp_path / "bomb.zip")

    with pytest.raises(ArtifactError, match=r"^bomb.zip:cluster-state/shop/pods.json: expands more than 250 times"):
        snapshot_load(archive, max_bytes=LIMIT)


def test_a_zip_whose_entries_overlap_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = cluster_info_dump(Incident()).zip(tmp_path / "overlap.zip")
    data = bytearray(path.read_bytes())
    # Point the second central directory entry at the first entry's data: the shape of an overlapping zip bomb.
    entries = [i for i in range(len(data)) if data[i : i + 4] == b"PK\x01\x02"]
    first_offset = data[entries[0] + 42 : entries[0] + 46]
    data[entries[1] + 42 : entries[1] + 46] = first_offset
    path.write_bytes(bytes(data))

    with pytest.raises(ArtifactError, match=r"^overlap.zip: entries .* overlap, which only a zip bomb does; refused"):
        snapshot_load(path, max_bytes=LIMIT)


def test_an_archive_of_too_many_entries_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBERS", 20)
    tree = cluster_info_dump(Incident())
    for i in range(30):
        tree.text(f"cluster-state/shop/pod-{i}/logs.txt", "log")

    with pytest.raises(ArtifactError, match=r"^many.tar: more than 20 entries; refused"):
        snapshot_load(tree.tar(tmp_path / "many.tar", compression=""), max_bytes=LIMIT)


def test_a_file_over_the_limit_of_one_file_is_not_read_and_its_kind_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives, "MAX_MEMBER_BYTES", 2_000)
    tree = cluster_info_dump(Incident())
    tree.text("cluster-state/shop/pods.json", tree.files["cluster-state/shop/pods.json"] + b" " * 3_000)
    del tree.files["cluster-state/kube-system/pods.json"]

    snapshot = snapshot_load(tree.tar(tmp_path / "dump.tgz"), max_bytes=LIMIT)

    size = len(tree.files["cluster-state/shop/pods.json"])
    assert f"dump.tgz:cluster-state/shop/pods.json: {size:,} bytes is over the limit of one file; not read." in (
        snapshot.warnings
    )
    assert snapshot.not_collected["Pod"] == (
        "its file(s) in the artifact could not be read: dump.tgz:cluster-state/shop/pods.json"
    )


def test_a_truncated_archive_is_refused_naming_where_it_breaks(tmp_path: Path) -> None:
    tree = cluster_info_dump(Incident())
    for i in range(40):  # logs that do not compress, so the cut falls well inside the archive
        tree.text(f"cluster-state/shop/pod-{i}/logs.txt", hashlib.sha512(str(i).encode()).hexdigest() * 40)
    path = tree.tar(tmp_path / "cut.tar.gz")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])

    with pytest.raises(ArtifactError, match=r"^cut.tar.gz: the archive is damaged or truncated after cluster-state/"):
        snapshot_load(path, max_bytes=LIMIT)


def test_damaged_protobuf_binary_and_internal_form_files_are_skipped_by_name_and_leave_nothing_behind(
    tmp_path: Path,
) -> None:
    incident = Incident()
    tree = cluster_info_dump(incident)
    pods = tree.files["cluster-state/shop/pods.json"]
    # One whole pod, then the file stops: the pod before the damage is not kept either.
    tree.text("cluster-state/shop/pods.json", pods[: pods.index(b'"name": "web-', pods.index(b"}\n    },") + 10)])
    tree.text("cluster-state/nodes.json", b"k8s\x00\n\x0f\n\x02v1\x12\x08NodeList")
    tree.text("cluster-state/kube-system/services.json", b"\x89\x00\x13garbage")
    internal = {"kind": "Deployment", "ObjectMeta": {"Name": "coredns"}, "Spec": {"Replicas": 2}}
    tree.json("cluster-state/kube-system/deployments.json", {"kind": "DeploymentList", "items": [internal]})

    snapshot = snapshot_load(tree.tar(tmp_path / "dump.tar.gz"), max_bytes=LIMIT)

    skipped = {w.split(":")[1].split(" ")[0]: w for w in snapshot.warnings}
    assert set(skipped) == {
        "cluster-state/shop/pods.json",
        "cluster-state/nodes.json",
        "cluster-state/kube-system/services.json",
        "cluster-state/kube-system/deployments.json",
    }
    assert "is truncated" in skipped["cluster-state/shop/pods.json"]
    assert skipped["cluster-state/nodes.json"] == (
        "dump.tar.gz:cluster-state/nodes.json: Kubernetes protobuf (the API's binary encoding), not JSON or YAML; "
        "collect with -o json; the file is skipped, its Node objects are not audited."
    )
    assert skipped["cluster-state/kube-system/services.json"] == (
        "dump.tar.gz:cluster-state/kube-system/services.json: binary data, not JSON or YAML; "
        "the file is skipped, its Service objects are not audited."
    )
    assert (
        "Kubernetes' internal form (Go field names such as ObjectMeta)"
        in (skipped["cluster-state/kube-system/deployments.json"])
    )
    assert snapshot.objects["Pod"] == []  # kube-system's pods.json was read: an empty list
    assert names(snapshot)["Deployment"] == ["api", "web"]
    assert snapshot.not_collected["Node"] == (
        "its file(s) in the artifact could not be read: dump.tar.gz:cluster-state/nodes.json"
    )


def test_a_single_object_without_api_version_is_skipped_as_internal_form(tmp_path: Path) -> None:
    incident = Incident()
    tree = must_gather(incident)
    root = f"must-gather.local.5327491627913/{MUST_GATHER_IMAGE}"
    del tree.files[f"{root}/namespaces/shop/core/pods.yaml"]
    first = incident.pods[0]["metadata"]["name"]
    unversioned = {k: v for k, v in incident.pods[0].items() if k != "apiVersion"}
    tree.yaml(f"{root}/namespaces/shop/pods/{first}/{first}.yaml", unversioned)

    snapshot = snapshot_load(tree.tar(tmp_path / "mg.tar.gz"), max_bytes=LIMIT)

    assert names(snapshot)["Pod"] == [incident.pods[1]["metadata"]["name"]]
    assert any(
        f"pods/{first}/{first}.yaml: line 1: a Pod without apiVersion is in Kubernetes' internal form" in w
        for w in snapshot.warnings
    )


def test_a_yaml_alias_bomb_in_an_artifact_is_skipped(tmp_path: Path) -> None:
    tree = must_gather(Incident())
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n"
    path = f"must-gather.local.5327491627913/{MUST_GATHER_IMAGE}/namespaces/shop/apps/statefulsets.yaml"
    tree.text(path, "kind: List\napiVersion: v1\nitems:\n- " + bomb.replace("\n", "\n  "))

    snapshot = snapshot_load(tree.tar(tmp_path / "mg.tar.gz"), max_bytes=LIMIT)

    assert any(w.startswith(f"mg.tar.gz:{path}: line 5: uses YAML aliases (*a)") for w in snapshot.warnings)
    assert snapshot.not_collected["StatefulSet"] == f"its file(s) in the artifact could not be read: mg.tar.gz:{path}"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x28\xb5\x2f\xfd" + b"\x00" * 600, "zstd-compressed archives cannot be read; recompress it as .tar.gz."),
        (lzma.compress(b'{"kind": "List", "items": []}' * 30), "a compressed file that is not a tar archive"),
    ],
    ids=["zstd", "xz-not-tar"],
)
def test_compressed_files_that_cannot_be_read_are_refused_with_what_to_do(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "artifact.bin"
    path.write_bytes(content)

    with pytest.raises(ArtifactError, match=message):
        snapshot_load(path, max_bytes=LIMIT)


def test_an_empty_archive_is_refused(tmp_path: Path) -> None:
    path = Tree().tar(tmp_path / "empty.tar")

    with pytest.raises(ArtifactError, match=r"Found 0 file\(s\): no files at all"):
        snapshot_load(path, max_bytes=LIMIT)


def test_an_artifact_none_of_whose_files_can_be_read_is_refused_as_a_whole(tmp_path: Path) -> None:
    tree = Tree().text("dump/nodes.json", b"k8s\x00protobuf").text("dump/shop/pods.json", "{not json")
    tree.text("dump/shop/events.json", "{}").text("dump/shop/replicationcontrollers.json", "{}")

    with pytest.raises(ArtifactError) as raised:
        snapshot_load(tree.tar(tmp_path / "dump.tar.gz"), max_bytes=LIMIT)

    assert str(raised.value).startswith(
        "dump.tar.gz: a kubectl cluster-info dump, but none of its files of kinds kubegap-web reads could be read."
    )
    assert "dump.tar.gz:dump/nodes.json: Kubernetes protobuf" in str(raised.value)


def test_a_gzip_snapshot_file_is_still_read_as_a_snapshot_not_an_archive(tmp_path: Path) -> None:
    path = tmp_path / "cluster.json.gz"
    path.write_bytes(gzip.compress(json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": []}).encode()))

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert isinstance(snapshot, Snapshot) and snapshot.collected == {"Node"}


def test_a_zip_of_unix_links_is_read_without_following_them(tmp_path: Path) -> None:
    path = cluster_info_dump(Incident()).zip(tmp_path / "links.zip")
    with zipfile.ZipFile(path, "a") as archive:
        link = zipfile.ZipInfo("cluster-state/shop/statefulsets.json")
        link.external_attr = (0o120777 << 16) | 0x20
        archive.writestr(link, "/etc/passwd")

    snapshot = snapshot_load(path, max_bytes=LIMIT)

    assert "links.zip:cluster-state/shop/statefulsets.json: a symbolic link, not read" in snapshot.warnings
    assert snapshot.not_collected["StatefulSet"] == "absent from the artifact"
