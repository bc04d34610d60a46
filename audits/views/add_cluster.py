from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from audits import services
from audits.collect import live
from audits.collect.kubeconfig import KubeconfigError, kubeconfig_context, kubeconfig_contexts, kubeconfig_parse
from audits.collect.snapshot import SnapshotError
from audits.forms import AddClusterForm
from audits.models import Cluster, Role
from audits.schedule import ScheduleError


def admin_teams(user: User) -> QuerySet[Group]:
    if user.is_superuser:
        return Group.objects.order_by("name")
    return Group.objects.filter(memberships__user=user, memberships__role=Role.ADMIN).order_by("name")


@login_required
def add_cluster(request: HttpRequest) -> HttpResponse:
    """Upload or paste a kubeconfig, pick a context, test it, save; or upload a snapshot."""
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
    except (KubeconfigError, SnapshotError, ScheduleError, live.CollectError) as exc:
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
    suffix = "".join(Path(upload.name).suffixes[-2:]) or ".json"
    with tempfile.NamedTemporaryFile(suffix=suffix) as tmp:
        for chunk in upload.chunks():
            tmp.write(chunk)
        tmp.flush()
        with transaction.atomic():
            return services.cluster_register_snapshot(
                team=form.cleaned_data["team"],
                name=form.cleaned_data["name"],
                snapshot_path=Path(tmp.name),
                display_name=Path(upload.name).name,
            )
