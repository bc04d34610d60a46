from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from audits import services
from audits.collect.snapshot import SnapshotError
from audits.models import RunTrigger
from audits.schedule import ScheduleError


class Command(BaseCommand):
    help = "Register a cluster from a snapshot file (kubectl get ... -o json) and queue its first audit."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="Cluster name shown on the dashboard.")
        parser.add_argument("--team", required=True, help="Owning team (created if it does not exist).")
        parser.add_argument("--snapshot", required=True, type=Path, help="Path of the snapshot file.")
        parser.add_argument("--description", default="")
        parser.add_argument("--cron", default=None, help="Audit schedule, five cron fields (default 02:00 daily).")
        parser.add_argument("--timezone", default="UTC", help="Timezone of the schedule, an IANA name.")
        parser.add_argument("--no-audit", action="store_true", help="Register only; do not queue an audit.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                team, _ = Group.objects.get_or_create(name=options["team"])
                cluster = services.cluster_register_snapshot(
                    team=team,
                    name=options["name"],
                    snapshot_path=options["snapshot"],
                    description=options["description"],
                    schedule_cron=options["cron"],
                    schedule_timezone=options["timezone"],
                )
                if not options["no_audit"]:
                    run = services.audit_run_enqueue(cluster=cluster, trigger=RunTrigger.MANUAL)
        except (SnapshotError, ScheduleError) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Registered cluster {cluster.name!r} (/clusters/{cluster.slug}/).")
        if not options["no_audit"]:
            self.stdout.write(f"Queued audit run {run.pk}; a worker will pick it up.")
