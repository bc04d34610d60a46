from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from audits import services
from audits.demo.clusters import DEMO_CLUSTERS
from audits.demo.generate import snapshot_path
from audits.models import Cluster, Membership, Role

DEMO_TEAM = "platform"
DEMO_USER = "demo"


class Command(BaseCommand):
    help = "Create the demo team, user and clusters, and queue their history audits (safe to run again)."

    def handle(self, *args: Any, **options: Any) -> None:
        password = self._demo_password()
        with transaction.atomic():
            team, _ = Group.objects.get_or_create(name=DEMO_TEAM)
            user, created = get_user_model().objects.get_or_create(username=DEMO_USER)
            if created:
                user.set_password(password)
                user.save()
            Membership.objects.get_or_create(user=user, team=team, defaults={"role": Role.ADMIN})
            now = timezone.now()
            for demo in DEMO_CLUSTERS:
                if Cluster.objects.filter(team=team, name=demo.name).exists():
                    continue
                files = [
                    (snapshot_path(demo.name, i), now - dt.timedelta(days=days_ago))
                    for i, (days_ago, _) in enumerate(demo.captures)
                ]
                cluster = services.cluster_register_snapshot(
                    team=team, name=demo.name, snapshot_path=files[-1][0], description=demo.description
                )
                runs = services.audit_runs_import(cluster=cluster, snapshots=files)
                self.stdout.write(f"Demo cluster {demo.name}: queued {len(runs)} audits of its history.")
        self.stdout.write(f"Log in as {DEMO_USER!r} with password {password!r}.")

    def _demo_password(self) -> str:
        """Generated on first use and kept under var/, so every `make run` prints the same one."""
        path = settings.VAR_DIR / "demo_password"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(12))
            path.chmod(0o600)
        return path.read_text().strip()
