from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from audits import services
from audits.collect.kubeconfig import KubeconfigError
from audits.collect.snapshot import SnapshotError
from audits.models import RunTrigger
from audits.schedule import ScheduleError


class Command(BaseCommand):
    help = "Register a cluster (snapshot file, kubeconfig context or in-cluster) and queue its first audit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Cluster name shown on the dashboard.")
        parser.add_argument("--team", required=True, help="Owning team (created if it does not exist).")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--snapshot", type=Path, help="A snapshot file (kubectl get ... -o json, or an export).")
        source.add_argument("--kubeconfig", type=Path, help="A kubeconfig; needs --context.")
        source.add_argument("--in-cluster", action="store_true", help="The cluster kubegap-web runs in.")
        parser.add_argument("--context", help="The kubeconfig context to read the cluster with.")
        parser.add_argument("--description", default="")
        parser.add_argument("--cron", default=None, help="Audit schedule, five cron fields (default 02:00 daily).")
        parser.add_argument("--timezone", default="UTC", help="Timezone of the schedule, an IANA name.")
        parser.add_argument("--no-audit", action="store_true", help="Register only; do not queue an audit.")

    def handle(self, *args: Any, **options: Any) -> None:
        common = {"name": options["name"], "description": options["description"]}
        schedule = {"schedule_cron": options["cron"], "schedule_timezone": options["timezone"]}
        try:
            with transaction.atomic():
                team, _ = Group.objects.get_or_create(name=options["team"])
                if options["snapshot"]:
                    cluster = services.cluster_register_snapshot(
                        team=team, snapshot_path=options["snapshot"], **common, **schedule
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
        if not options["no_audit"]:
            self.stdout.write(f"Queued audit run {run.pk}; a worker will pick it up.")


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise CommandError(f"{path}: cannot be read ({exc.strerror}).") from None
