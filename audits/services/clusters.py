"""Registering clusters and changing their schedules."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.files import File
from django.utils import timezone
from django.utils.text import slugify

from audits.collect.artifacts import archive_kind
from audits.collect.files import snapshot_dump, snapshot_load
from audits.collect.kubeconfig import kubeconfig_context, kubeconfig_encrypt, kubeconfig_parse
from audits.collect.snapshot import Snapshot
from audits.models import Cluster, SourceKind
from audits.schedule import next_slot, validate_schedule


def cluster_register_snapshot(
    *,
    team: Group,
    name: str,
    snapshot_path: Path,
    description: str = "",
    schedule_cron: str | None = None,
    schedule_timezone: str = "UTC",
    display_name: str | None = None,
    captured_at: dt.datetime | None = None,
    snapshot: Snapshot | None = None,
) -> Cluster:
    """Register a cluster whose data is a snapshot file or an artifact, validating it first.

    The input is parsed completely before anything is stored, so a bad file
    changes nothing (`snapshot` is the input already parsed, to spare a second
    reading). An artifact (an archive or a directory), or data given a capture
    time, is stored as kubegap-web's own export of what was read, never as it
    came: the export holds the projected objects only (no Secret, no log), what
    was not collected, and when it was captured. Such data is one moment, and
    auditing it again finds the same, so its schedule starts paused.
    """
    cron = schedule_cron or settings.DEFAULT_SCHEDULE_CRON
    validate_schedule(cron, schedule_timezone)
    if snapshot is None:
        snapshot = snapshot_load(
            snapshot_path, max_bytes=settings.SNAPSHOT_MAX_BYTES, display_name=display_name, captured_at=captured_at
        )
    one_moment = captured_at is not None or snapshot_path.is_dir() or archive_kind(snapshot_path) is not None
    cluster = Cluster(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.SNAPSHOT,
        schedule_cron=cron,
        schedule_timezone=schedule_timezone,
        schedule_enabled=not one_moment,
        next_audit_at=next_slot(cron, schedule_timezone, timezone.now()),
    )
    if one_moment:
        with tempfile.SpooledTemporaryFile(max_size=32 * 1024**2) as export:
            snapshot_dump(snapshot, export)
            export.seek(0)
            cluster.source_file.save(f"{cluster.slug}.json.gz", File(export), save=False)
    else:
        with snapshot_path.open("rb") as fh:
            cluster.source_file.save(f"{cluster.slug}{''.join(snapshot_path.suffixes)}", File(fh), save=False)
    cluster.save()
    return cluster


def cluster_register_kubeconfig(
    *,
    team: Group,
    name: str,
    kubeconfig_text: str,
    context: str,
    description: str = "",
    schedule_cron: str | None = None,
    schedule_timezone: str = "UTC",
) -> Cluster:
    """Register a live cluster read through one context of a kubeconfig, stored encrypted.

    Only that context, its cluster and its user are kept; the rest of the file
    (other clusters' credentials) is never stored.
    """
    cron = schedule_cron or settings.DEFAULT_SCHEDULE_CRON
    validate_schedule(cron, schedule_timezone)
    reduced = kubeconfig_context(kubeconfig_parse(kubeconfig_text), context)
    return Cluster.objects.create(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.KUBECONFIG,
        kubeconfig_encrypted=kubeconfig_encrypt(reduced),
        kube_context=context,
        schedule_cron=cron,
        schedule_timezone=schedule_timezone,
        next_audit_at=next_slot(cron, schedule_timezone, timezone.now()),
    )


def cluster_register_in_cluster(*, team: Group, name: str, description: str = "") -> Cluster:
    """Register the cluster kubegap-web itself runs in, read with its own service account."""
    cron = settings.DEFAULT_SCHEDULE_CRON
    return Cluster.objects.create(
        team=team,
        name=name,
        slug=_unique_slug(name),
        description=description,
        source_kind=SourceKind.IN_CLUSTER,
        schedule_cron=cron,
        next_audit_at=next_slot(cron, "UTC", timezone.now()),
    )


def _unique_slug(name: str) -> str:
    base = slugify(name)[:90] or "cluster"
    slug, n = base, 1
    while Cluster.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def cluster_schedule_update(*, cluster: Cluster, cron: str, timezone_name: str, enabled: bool) -> Cluster:
    """Change when a cluster is audited; the next slot follows the new schedule at once."""
    validate_schedule(cron, timezone_name)
    cluster.schedule_cron, cluster.schedule_timezone, cluster.schedule_enabled = cron, timezone_name, enabled
    cluster.next_audit_at = next_slot(cron, timezone_name, timezone.now())
    cluster.save(update_fields=["schedule_cron", "schedule_timezone", "schedule_enabled", "next_audit_at"])
    return cluster
