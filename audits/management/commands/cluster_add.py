from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Q

from audits import services
from audits.collect.artifacts.captured import moment_argument
from audits.collect.artifacts.describe import describe
from audits.collect.artifacts.load import summary_of
from audits.collect.files import snapshot_load
from audits.collect.kubeconfig import KubeconfigError
from audits.collect.snapshot import Snapshot, SnapshotError
from audits.models import Cluster, RunTrigger
from audits.schedule import ScheduleError
from audits.services.runs import audit_run_add_artifact


class Command(BaseCommand):
    help = (
        "Register a cluster (snapshot file, incident artifact, kubeconfig context or in-cluster) and queue its "
        "first audit; or, with --add-run, add an artifact's audit to an existing cluster's history."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Cluster name shown on the dashboard.")
        parser.add_argument("--team", help="Owning team (created if it does not exist); needed to register.")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--snapshot",
            type=Path,
            help="A snapshot file (kubectl get ... -o json, or an export), or an incident artifact: a kubectl "
            "cluster-info dump, a support bundle or an OpenShift must-gather (.tar.gz, .tar.xz, .zip or unpacked).",
        )
        source.add_argument("--kubeconfig", type=Path, help="A kubeconfig; needs --context.")
        source.add_argument("--in-cluster", action="store_true", help="The cluster kubegap-web runs in.")
        parser.add_argument("--context", help="The kubeconfig context to read the cluster with.")
        parser.add_argument(
            "--captured-at",
            type=moment_argument,
            help="When the snapshot or artifact was captured (ISO 8601; UTC if no zone is given), instead of what "
            "it records.",
        )
        parser.add_argument(
            "--add-run",
            action="store_true",
            help="Add the --snapshot artifact as a run of the existing cluster --name, at its capture time.",
        )
        parser.add_argument("--description", default="")
        parser.add_argument("--cron", default=None, help="Audit schedule, five cron fields (default 02:00 daily).")
        parser.add_argument("--timezone", default="UTC", help="Timezone of the schedule, an IANA name.")
        parser.add_argument("--no-audit", action="store_true", help="Register only; do not queue an audit.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["add_run"]:
            self._add_run(options)
            return
        if not options["team"]:
            raise CommandError("--team is required to register a cluster: the team that owns it.")
        common = {"name": options["name"], "description": options["description"]}
        schedule = {"schedule_cron": options["cron"], "schedule_timezone": options["timezone"]}
        try:
            snapshot = self._read(options) if options["snapshot"] else None
            with transaction.atomic():
                team, _ = Group.objects.get_or_create(name=options["team"])
                if options["snapshot"]:
                    cluster = services.cluster_register_snapshot(
                        team=team,
                        snapshot_path=options["snapshot"],
                        captured_at=options["captured_at"],
                        snapshot=snapshot,
                        **common,
                        **schedule,
                    )
                elif options["kubeconfig"]:
                    if not options["context"]:
                        raise CommandError("--kubeconfig needs --context: the context to read the cluster with.")
                    text = _read(options["kubeconfig"])
                    cluster = services.cluster_register_kubeconfig(
                        team=team, kubeconfig_text=text, context=options["context"], **common, **schedule
                    )
                else:
                    cluster = services.cluster_register_in_cluster(team=team, **common)
                if not options["no_audit"]:
                    run = services.audit_run_enqueue(cluster=cluster, trigger=RunTrigger.MANUAL)
        except (SnapshotError, ScheduleError, KubeconfigError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Registered cluster {cluster.name!r} (/clusters/{cluster.slug}/).")
        if not cluster.schedule_enabled:
            self.stdout.write(
                "Its schedule is paused: the data is one moment, and auditing it again would find the same. "
                "Add later artifacts with --add-run."
            )
        if not options["no_audit"]:
            self.stdout.write(f"Queued audit run {run.pk}; a worker will pick it up.")

    def _add_run(self, options: dict[str, Any]) -> None:
        if not options["snapshot"]:
            raise CommandError("--add-run adds a --snapshot artifact to the history of the cluster --name.")
        named = list(Cluster.objects.filter(Q(slug=options["name"]) | Q(name=options["name"])).order_by("pk"))
        if not named:
            raise CommandError(f"no cluster is named {options['name']!r}; register it first (without --add-run).")
        if len(named) > 1:
            slugs = ", ".join(c.slug for c in named)
            raise CommandError(f"several clusters are named {options['name']!r}; give one's slug as --name: {slugs}.")
        cluster = named[0]
        try:
            snapshot = self._read(options)
            run = audit_run_add_artifact(
                cluster=cluster,
                snapshot_path=options["snapshot"],
                display_name=str(options["snapshot"]),
                captured_at=options["captured_at"],
                snapshot=snapshot,
            )
        except (SnapshotError, services.AuditError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Added run {run.pk} to the history of {cluster.name!r} (/clusters/{cluster.slug}/runs/{run.pk}/); "
            "a worker will audit it."
        )

    def _read(self, options: dict[str, Any]) -> Snapshot:
        """Read the snapshot or artifact once, and say what it held when it is an artifact."""
        path: Path = options["snapshot"]
        given = options["captured_at"]
        snapshot = snapshot_load(path, max_bytes=settings.SNAPSHOT_MAX_BYTES, display_name=str(path), captured_at=given)
        if summary_of(snapshot) is not None or given is not None:
            for line in describe(snapshot, given=given is not None):
                self.stdout.write(line)
            for warning in snapshot.warnings:
                self.stderr.write(f"warning: {warning}")
        return snapshot


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise CommandError(f"{path}: cannot be read ({exc.strerror}).") from None
