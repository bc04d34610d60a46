from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from audits import services
from audits.collect import live
from audits.collect.artifacts.describe import capture_sentence, describe
from audits.collect.artifacts.load import summary_of
from audits.collect.files import snapshot_load
from audits.collect.kubeconfig import KubeconfigError, kubeconfig_context, kubeconfig_contexts, kubeconfig_parse
from audits.collect.snapshot import SnapshotError
from audits.forms import AddClusterForm
from audits.models import Cluster, Role
from audits.schedule import ScheduleError
from audits.services.runs import audit_run_add_artifact


def admin_teams(user: User) -> QuerySet[Group]:
    if user.is_superuser:
        return Group.objects.order_by("name")
    return Group.objects.filter(memberships__user=user, memberships__role=Role.ADMIN).order_by("name")


@login_required
def add_cluster(request: HttpRequest) -> HttpResponse:
    """Upload or paste a kubeconfig, pick a context, test it, save; or upload a snapshot or an artifact."""
    assert isinstance(request.user, User)
    teams = admin_teams(request.user)
    if not teams.exists():
        raise PermissionDenied("Adding a cluster needs the admin role in a team.")
    if request.method != "POST":
        return render(request, "audits/add_cluster.html", {"form": AddClusterForm(teams=teams)})

    contexts: list[str] = []
    text = ""
    if request.POST.get("source") == "kubeconfig":
        try:
            text = _kubeconfig_text(request)
            contexts = kubeconfig_contexts(kubeconfig_parse(text, name="the kubeconfig")) if text.strip() else []
        except KubeconfigError as exc:
            form = AddClusterForm(request.POST, teams=teams)
            form.is_valid()
            form.add_error(None, str(exc))
            return render(request, "audits/add_cluster.html", {"form": form}, status=400)
    post = request.POST.copy()
    if text:
        # Keep the kubeconfig in the form so the next step (context, test, save) has it.
        post["kubeconfig_text"] = text
    form = AddClusterForm(post, request.FILES, teams=teams, contexts=contexts)
    if not form.is_valid():
        return render(request, "audits/add_cluster.html", {"form": form}, status=400)
    data = form.cleaned_data
    context: dict[str, object] = {"form": form}
    try:
        if data["source"] == "artifact":
            return _import_artifact(request, form, context)
        if data["source"] == "snapshot":
            cluster = _register_snapshot(form)
        else:
            if not text.strip():
                form.add_error("kubeconfig_file", "Upload a kubeconfig file or paste one.")
                return render(request, "audits/add_cluster.html", context, status=400)
            if not data["context"]:
                messages.info(request, "Choose the context to read the cluster with.")
                return render(request, "audits/add_cluster.html", context)
            if "test" in request.POST:
                config = kubeconfig_context(kubeconfig_parse(text), data["context"])
                context["verdicts"] = sorted(live.readable_kinds(live.api_client_from_kubeconfig(config)).items())
                return render(request, "audits/add_cluster.html", context)
            with transaction.atomic():
                cluster = services.cluster_register_kubeconfig(
                    team=data["team"], name=data["name"], kubeconfig_text=text, context=data["context"]
                )
    except (KubeconfigError, SnapshotError, ScheduleError, live.CollectError, services.AuditError) as exc:
        form.add_error(None, str(exc))
        return render(request, "audits/add_cluster.html", context, status=400)
    services.audit_run_request(cluster=cluster, requested_by=request.user)
    messages.success(request, f"Cluster {cluster.name} added; its first audit is queued.")
    return redirect("cluster", slug=cluster.slug)


def _kubeconfig_text(request: HttpRequest) -> str:
    """The kubeconfig from the upload, or else from the text box."""
    upload = request.FILES.get("kubeconfig_file")
    if upload is None:
        return request.POST.get("kubeconfig_text", "")
    if upload.size and upload.size > 1_000_000:
        raise KubeconfigError("the kubeconfig file is over 1 MB; upload only the context you need.")
    try:
        return bytes(upload.read()).decode()
    except UnicodeDecodeError:
        raise KubeconfigError("the kubeconfig file is not UTF-8 text.") from None


def _register_snapshot(form: AddClusterForm) -> Cluster:
    upload = form.cleaned_data.get("snapshot")
    if not upload:
        raise SnapshotError("Choose a snapshot file to upload.")
    with _uploaded(upload) as path, transaction.atomic():
        return services.cluster_register_snapshot(
            team=form.cleaned_data["team"],
            name=form.cleaned_data["name"],
            snapshot_path=path,
            display_name=Path(upload.name or "snapshot").name,
        )


def _import_artifact(request: HttpRequest, form: AddClusterForm, context: dict[str, object]) -> HttpResponse:
    """Read the uploaded artifact once; then show what it holds ("Check"), register a cluster from it,
    or add it to a cluster's history."""
    assert isinstance(request.user, User)
    data = form.cleaned_data
    upload = data.get("artifact")
    if not upload:
        raise SnapshotError("Choose the artifact to upload (.tar.gz, .tar.xz or .zip).")
    shown = Path(upload.name or "artifact").name
    given = data.get("captured_at")
    target: Cluster | None = data.get("add_to")
    with _uploaded(upload) as path:
        snapshot = snapshot_load(path, max_bytes=settings.SNAPSHOT_MAX_BYTES, display_name=shown, captured_at=given)
        summary = summary_of(snapshot)
        what = f"{shown} ({summary['label']})" if summary else shown
        when = capture_sentence(snapshot, given=given is not None)
        if "test" in request.POST:
            context["artifact_facts"] = describe(snapshot, given=given is not None)
            context["artifact_warnings"] = snapshot.warnings
            context["artifact_name"] = shown
            return render(request, "audits/add_cluster.html", context)
        if target is not None:
            run = audit_run_add_artifact(
                cluster=target, snapshot_path=path, display_name=shown, snapshot=snapshot, requested_by=request.user
            )
            messages.success(request, f"{what}, {when}, is added to the history of {target.name} as run {run.pk}.")
            return redirect("run", slug=target.slug, run_id=run.pk)
        with transaction.atomic():
            cluster = services.cluster_register_snapshot(
                team=data["team"], name=data["name"], snapshot_path=path, display_name=shown, snapshot=snapshot
            )
    services.audit_run_request(cluster=cluster, requested_by=request.user)
    paused = (
        ""
        if cluster.schedule_enabled
        else " Its schedule is paused: the data is one moment. Add later artifacts to its history from this page."
    )
    messages.success(request, f"Cluster {cluster.name} added from {what}, {when}; its audit is queued.{paused}")
    return redirect("cluster", slug=cluster.slug)


@contextmanager
def _uploaded(upload: UploadedFile) -> Iterator[Path]:
    """The upload as a file on disk, removed afterwards; its name's suffixes are kept for the readers that use them."""
    suffix = "".join(Path(upload.name or "").suffixes[-2:]) or ".json"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        for chunk in upload.chunks():
            tmp.write(chunk)
        tmp.flush()
        yield Path(tmp.name)
