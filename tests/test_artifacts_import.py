"""Importing an incident artifact: `manage.py audit`, `manage.py cluster_add`, and the add-a-cluster page."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from audits import services
from audits.models import AuditRun, Cluster, Finding, RunStatus, RunTrigger
from tests.test_artifacts import CAPTURE, Incident, Tree, cluster_info_dump, must_gather, troubleshoot_bundle

ROOT = Path(__file__).resolve().parent.parent
MUST_GATHER_TIME = dt.datetime(2025, 3, 2, 10, 15, tzinfo=dt.UTC)


def audit_json(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.suppress(SystemExit):  # --fail-on's exit code is not what these tests look at
        call_command("audit", *args, "--format", "json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


# --- manage.py audit -----------------------------------------------------------------------------------


def test_audit_reports_what_the_artifact_held_lacked_and_when_it_was_captured(tmp_path: Path) -> None:
    tree = cluster_info_dump(Incident())
    tree.at("cluster-state/shop/pods.json", CAPTURE)
    archive = tree.tar(tmp_path / "incident.tar.gz")

    report = audit_json("--snapshot", str(archive))

    facts = report["snapshot"]
    assert facts["captured_at"] == "2025-03-02T10:15:00+00:00"
    assert facts["captured_at_from"] == "from the newest file time in the archive (cluster-state/shop/pods.json)"
    assert facts["artifact"]["layout"] == "cluster-info-dump"
    assert facts["collected"] == {"DaemonSet": 0, "Deployment": 2, "Node": 2, "Pod": 2, "ReplicaSet": 1, "Service": 0}
    assert facts["not_collected"]["PodDisruptionBudget"] == "absent from the artifact"
    assert [(f["check"], f["name"]) for f in report["findings"] if f["check"] == "KG-DIS-001"] == [
        ("KG-DIS-001", "api")
    ]
    not_evaluated = {entry["check"]: entry["reason"] for entry in report["not_evaluated"]}
    assert not_evaluated["KG-DIS-002"] == "not collected: PodDisruptionBudget (absent from the artifact)"


def test_audit_prints_the_artifact_and_its_capture_time_as_text(tmp_path: Path) -> None:
    archive = must_gather(Incident()).tar(tmp_path / "mg.tar.gz")
    out = io.StringIO()

    call_command("audit", "--snapshot", str(archive), stdout=out, stderr=io.StringIO())

    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"Audit of {archive}: 8 objects of 6 kinds")
    assert lines[1] == (
        "Read an OpenShift must-gather: 7 file(s) read; 6 not read (logs, events, Secrets, repeats and kinds "
        "kubegap-web does not read)."
    )
    assert lines[2] == "It covers 1 namespace(s): shop; other namespaces of the cluster are not in it."
    assert lines[3] == (
        f"Captured at 2025-03-02 10:15:00 UTC, from the must-gather's timestamp file "
        f"({archive}:must-gather.local.5327491627913/timestamp)."
    )
    assert (
        lines[4]
        == "Contains (objects by kind): Deployment 2, Namespace 1, Node 2, Pod 2, PodDisruptionBudget 0, ReplicaSet 1."
    )
    assert lines[5].startswith("Not collected (absent from the artifact): APIService, Application, Certificate,")


def test_a_given_capture_time_is_used_and_said(tmp_path: Path) -> None:
    root = cluster_info_dump(Incident()).directory(tmp_path)

    report = audit_json("--snapshot", str(root / "cluster-state"), "--captured-at", "2025-03-02T11:15:00+01:00")

    assert (report["snapshot"]["captured_at"], report["snapshot"]["captured_at_from"]) == (
        "2025-03-02T10:15:00+00:00",
        "as given",
    )


def test_a_bad_capture_time_and_a_hostile_artifact_exit_2_with_the_reason(tmp_path: Path) -> None:
    archive = Tree().text("cluster-state/nodes.json", b" " * 4 * 1024**2).tar(tmp_path / "bomb.tar.gz")
    env = {**os.environ}

    bad_time = subprocess.run(
        [sys.executable, "manage.py", "audit", "--snapshot", str(archive), "--captured-at", "yesterday"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    hostile = subprocess.run(
        [sys.executable, "manage.py", "audit", "--snapshot", str(archive), "--format", "json", "--max-bytes", "10000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert bad_time.returncode == 2
    assert "'yesterday' is not an ISO 8601 time, such as 2024-03-02T10:15:00Z" in bad_time.stderr
    assert hostile.returncode == 2
    assert hostile.stdout == ""
    assert "bomb.tar.gz: expands past 10,000 bytes (SNAPSHOT_MAX_BYTES); refused." in hostile.stderr
    assert "Traceback" not in hostile.stderr


# --- manage.py cluster_add -----------------------------------------------------------------------------


@pytest.fixture
def media(settings: Any, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_a_cluster_registered_from_an_artifact_stores_our_export_and_audits_at_the_capture_time(
    tmp_path: Path, media: Path, team: Group, django_capture_on_commit_callbacks: Any
) -> None:
    archive = must_gather(Incident()).tar(tmp_path / "incident-4711.tar.gz")
    out = io.StringIO()

    with django_capture_on_commit_callbacks(execute=False):
        call_command("cluster_add", "--name", "prod-eu", "--team", team.name, "--snapshot", str(archive), stdout=out)
    cluster = Cluster.objects.get(name="prod-eu")
    run = AuditRun.objects.get(cluster=cluster)
    services.audit_run_execute(run.pk)
    run.refresh_from_db()

    stored = Path(str(cluster.source_file.path))
    assert stored.name == "prod-eu.json.gz"
    export = json.loads(gzip.decompress(stored.read_bytes()))
    assert export["format"] == "kubegap.snapshot/v1"
    assert "aHVudGVyMg==" not in stored.read_text(errors="ignore") + json.dumps(export)
    assert not cluster.schedule_enabled
    assert "Its schedule is paused: the data is one moment" in out.getvalue()
    assert f"Captured at 2025-03-02 10:15:00 UTC, from the must-gather's timestamp file ({archive}:" in out.getvalue()
    assert run.status == RunStatus.PARTIAL, run.error
    assert run.captured_at == MUST_GATHER_TIME
    assert run.not_collected["StatefulSet"] == "absent from the artifact"
    assert "KG-STA-001" in run.not_evaluated
    assert run.collection_stats["Pod"]["objects"] == 2
    assert run.collection_stats["_artifact"]["captured_at_from"].startswith("from the must-gather's timestamp file")
    opened = Finding.objects.get(cluster=cluster, check_id="KG-DIS-001")
    assert (opened.object_name, opened.opened_at) == ("api", MUST_GATHER_TIME)
    assert Finding.objects.get(cluster=cluster, check_id="KG-DIS-002").object_name == "web"


def test_a_hostile_artifact_registers_nothing(tmp_path: Path, media: Path, team: Group) -> None:
    archive = troubleshoot_bundle(Incident()).tar(tmp_path / "bundle.tar.gz")
    archive.write_bytes(archive.read_bytes()[:200])

    with pytest.raises(CommandError, match=r"bundle.tar.gz: the archive is damaged or truncated"):
        call_command("cluster_add", "--name", "prod", "--team", team.name, "--snapshot", str(archive))

    assert Cluster.objects.count() == 0
    assert AuditRun.objects.count() == 0
    assert not media.exists() or not any(media.rglob("*"))


def _cluster_with_run_at(team: Group, moment: dt.datetime) -> Cluster:
    cluster = Cluster.objects.create(team=team, name="prod-eu", slug="prod-eu", source_kind="snapshot")
    AuditRun.objects.create(
        cluster=cluster, trigger=RunTrigger.SCHEDULE, status=RunStatus.SUCCEEDED, captured_at=moment
    )
    return cluster


def test_add_run_places_a_newer_artifact_in_the_cluster_history_and_refuses_an_older_one(
    tmp_path: Path, media: Path, team: Group, django_capture_on_commit_callbacks: Any
) -> None:
    cluster = _cluster_with_run_at(team, MUST_GATHER_TIME - dt.timedelta(days=1))
    newer = must_gather(Incident()).tar(tmp_path / "mg.tar.gz")
    older = cluster_info_dump(Incident()).directory(tmp_path / "dump") / "cluster-state"
    out = io.StringIO()

    with django_capture_on_commit_callbacks(execute=False):
        call_command("cluster_add", "--name", "prod-eu", "--snapshot", str(newer), "--add-run", stdout=out)
    added = cluster.runs.get(trigger=RunTrigger.IMPORT)
    services.audit_run_execute(added.pk)
    with pytest.raises(CommandError) as refused:
        call_command(
            "cluster_add", "--name", "prod-eu", "--snapshot", str(older), "--add-run",
            "--captured-at", "2025-02-01T00:00:00Z", stdout=io.StringIO(),
        )  # fmt: skip

    added.refresh_from_db()
    assert added.captured_at == MUST_GATHER_TIME
    assert added.status == RunStatus.PARTIAL, added.error
    assert f"Added run {added.pk} to the history of 'prod-eu'" in out.getvalue()
    assert str(refused.value) == (
        f"{older} was captured at 2025-02-01 00:00 UTC, before the latest run of prod-eu (run {added.pk}, captured "
        "2025-03-02 10:15 UTC). A cluster's history is reconciled in capture order, so an earlier moment cannot be "
        "added to it; register the artifact as a cluster of its own to audit that moment."
    )
    assert cluster.runs.count() == 2


def test_add_run_needs_to_know_when_the_artifact_was_captured(tmp_path: Path, media: Path, team: Group) -> None:
    _cluster_with_run_at(team, CAPTURE - dt.timedelta(days=1))
    undated = cluster_info_dump(Incident()).directory(tmp_path) / "cluster-state"

    with pytest.raises(CommandError, match=r"cluster-state: when it was captured is unknown; give the time"):
        call_command("cluster_add", "--name", "prod-eu", "--snapshot", str(undated), "--add-run", stdout=io.StringIO())

    assert AuditRun.objects.count() == 1


# --- the add-a-cluster page ----------------------------------------------------------------------------


@pytest.fixture
def upload(tmp_path: Path) -> SimpleUploadedFile:
    tree = troubleshoot_bundle(Incident())
    tree.at("support-bundle-2025-03-02T10_15_00/cluster-resources/pods/shop.json", CAPTURE)
    return SimpleUploadedFile("bundle-4711.zip", tree.zip(tmp_path / "bundle.zip").read_bytes())


def test_an_artifact_upload_is_checked_then_registered_as_a_cluster(
    client: Client,
    owner: User,
    team: Group,
    media: Path,
    upload: SimpleUploadedFile,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    form = {"team": team.pk, "name": "prod-eu", "source": "artifact"}

    checked = client.post("/clusters/add/", {**form, "artifact": upload, "test": "1"})
    stored_after_check = Cluster.objects.count()
    upload.seek(0)
    with django_capture_on_commit_callbacks(execute=False):
        saved = client.post("/clusters/add/", {**form, "artifact": upload, "save": "1"}, follow=True)

    page = checked.content.decode()
    assert "What bundle-4711.zip holds" in page
    assert "<li>Captured at 2025-03-02 10:15:00 UTC, from the newest file time in the archive" in page
    assert "<li>Not collected (absent from the artifact): APIService," in page
    assert "1 file(s) of Secrets not opened: Secrets are never read." in page
    assert stored_after_check == 0
    cluster = Cluster.objects.get(name="prod-eu")
    assert saved.redirect_chain[-1][0] == f"/clusters/{cluster.slug}/"
    assert (
        "Cluster prod-eu added from bundle-4711.zip (a support bundle (troubleshoot)), captured at 2025-03-02 "
        "10:15:00 UTC, from the newest file time in the archive"
    ) in saved.content.decode()
    assert AuditRun.objects.filter(cluster=cluster).count() == 1


def test_a_broken_artifact_upload_is_explained_and_nothing_is_stored(
    client: Client, owner: User, team: Group, media: Path
) -> None:
    client.force_login(owner)
    broken = SimpleUploadedFile("incident.zip", b"PK\x03\x04 not really a zip")

    response = client.post(
        "/clusters/add/", {"team": team.pk, "name": "prod-eu", "source": "artifact", "artifact": broken, "save": "1"}
    )

    assert response.status_code == 400
    assert "incident.zip: not a readable zip archive" in response.content.decode()
    assert Cluster.objects.count() == 0


def test_an_artifact_is_added_to_an_existing_cluster_history_from_the_page(
    client: Client,
    owner: User,
    team: Group,
    media: Path,
    upload: SimpleUploadedFile,
    django_capture_on_commit_callbacks: Any,
) -> None:
    cluster = _cluster_with_run_at(team, CAPTURE - dt.timedelta(hours=2))
    client.force_login(owner)

    with django_capture_on_commit_callbacks(execute=False):
        response = client.post("/clusters/add/", {"source": "artifact", "artifact": upload, "add_to": cluster.pk})

    run = cluster.runs.get(trigger=RunTrigger.IMPORT)
    assert response.status_code == 302
    assert response["Location"] == f"/clusters/{cluster.slug}/runs/{run.pk}/"
    assert (run.captured_at, run.requested_by) == (CAPTURE, owner)


def test_only_clusters_of_the_admins_teams_can_receive_an_artifact(
    client: Client, outsider: User, team: Group, media: Path, upload: SimpleUploadedFile
) -> None:
    cluster = _cluster_with_run_at(team, timezone.now())
    client.force_login(outsider)

    response = client.post("/clusters/add/", {"source": "artifact", "artifact": upload, "add_to": cluster.pk})

    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert cluster.runs.count() == 1
