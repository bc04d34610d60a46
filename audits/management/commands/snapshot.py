from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audits.collect import live
from audits.collect.files import snapshot_dump
from audits.collect.kubeconfig import KubeconfigError, kubeconfig_context, kubeconfig_parse


class Command(BaseCommand):
    help = "Collect a snapshot from a live cluster, read-only, and write it as gzip JSON (kubegap.snapshot/v1)."

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--context", help="Context of the kubeconfig to read the cluster with.")
        source.add_argument("--in-cluster", action="store_true", help="Use the pod's service account.")
        parser.add_argument("--kubeconfig", type=Path, help="Kubeconfig file (default: $KUBECONFIG or ~/.kube/config).")
        parser.add_argument("-o", "--output", required=True, help="File to write (.json.gz), or - for stdout.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["in_cluster"]:
                api_client = live.api_client_in_cluster()
            else:
                path = options["kubeconfig"] or _default_kubeconfig()
                try:
                    text = path.read_text()
                except OSError as exc:
                    raise CommandError(f"{path}: cannot be read ({exc.strerror}).") from None
                config = kubeconfig_context(kubeconfig_parse(text, name=str(path)), options["context"], name=str(path))
                api_client = live.api_client_from_kubeconfig(config)
            snapshot = live.collect(api_client, progress=self._progress, source=options["context"] or "in-cluster")
        except (KubeconfigError, live.CollectError) as exc:
            raise CommandError(str(exc)) from None
        if options["output"] == "-":
            snapshot_dump(snapshot, sys.stdout.buffer)
        else:
            with open(options["output"], "wb") as fh:
                snapshot_dump(snapshot, fh)
        self.stderr.write(f"{snapshot.count()} objects of {len(snapshot.collected)} kinds from {snapshot.source}.")
        for kind, reason in sorted(snapshot.not_collected.items()):
            self.stderr.write(f"not collected: {kind}: {reason}")

    def _progress(self, progress: dict[str, Any]) -> None:
        self.stderr.write(f"collected {progress['kind']} ({progress['kinds_done']}/{progress['kinds_total']})")


def _default_kubeconfig() -> Path:
    return Path(os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or Path.home() / ".kube" / "config")
