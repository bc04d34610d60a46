from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from audits.exports.history_export import ExportFormat, HistoryQuery, HistoryQueryError, history_export
from audits.history import MomentError, parse_moment
from audits.models import Cluster

EXAMPLE = "e.g. 2026-09-01T14:51:00Z; UTC when no offset is given"


class Command(BaseCommand):
    help = (
        "Export the findings history of a cluster or a team: the gaps open at a moment and what opened, "
        "regressed or closed in the window before it, as CSV, JSON or a Markdown postmortem report."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        scope = parser.add_mutually_exclusive_group(required=True)
        scope.add_argument("--cluster", metavar="SLUG", help="One cluster, by its slug.")
        scope.add_argument("--team", metavar="NAME", help="Every cluster of a team, by the team's name.")
        parser.add_argument("--since", required=True, help=f"Start of the window, exclusive ({EXAMPLE}).")
        parser.add_argument("--until", required=True, help=f"End of the window, inclusive ({EXAMPLE}).")
        parser.add_argument("--at", help="The moment whose open gaps are listed (default: --until).")
        parser.add_argument("--format", choices=[f.value for f in ExportFormat], default=ExportFormat.MARKDOWN.value)
        parser.add_argument("-o", "--output", metavar="FILE", help="Write here instead of standard output.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            query = HistoryQuery.build(
                scope=_scope(options),
                clusters=_clusters(options),
                since=parse_moment(options["since"], parameter="--since"),
                until=parse_moment(options["until"], parameter="--until"),
                at=parse_moment(options["at"], parameter="--at") if options["at"] else None,
            )
        except (MomentError, HistoryQueryError) as exc:
            raise CommandError(str(exc)) from None
        chunks = history_export(query, ExportFormat(options["format"]))
        if options["output"]:
            try:
                with open(options["output"], "w", encoding="utf-8", newline="") as out:
                    out.writelines(chunks)
            except OSError as exc:
                raise CommandError(f"{options['output']}: cannot be written ({exc.strerror}).") from None
            self.stderr.write(f"Wrote {options['output']}.")
        else:
            for chunk in chunks:
                self.stdout.write(chunk, ending="")


def _scope(options: dict[str, Any]) -> str:
    return options["cluster"] if options["cluster"] else f"team {options['team']}"


def _clusters(options: dict[str, Any]) -> QuerySet[Cluster]:
    if options["cluster"]:
        clusters = Cluster.objects.filter(slug=options["cluster"])
        if not clusters.exists():
            raise CommandError(f"--cluster: no cluster with slug {options['cluster']!r}.")
        return clusters
    team = Group.objects.filter(name=options["team"]).first()
    if team is None:
        raise CommandError(f"--team: no team named {options['team']!r}.")
    return Cluster.objects.filter(team=team)
