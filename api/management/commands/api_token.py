from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.models import ApiToken
from api.tokens import api_token_create, api_token_revoke


class Command(BaseCommand):
    help = "Create an API token for a user and print it once (only its hash is stored); or list or revoke tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, metavar="NAME", help="The user the token acts as.")
        parser.add_argument("--name", default="api", help="What the token is for (shown in the admin).")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--list", action="store_true", help="List the user's tokens instead.")
        action.add_argument("--revoke", metavar="PREFIX", help="Revoke the user's token starting with PREFIX.")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"--user: no user named {options['user']!r}.")
        if options["list"]:
            for record in ApiToken.objects.filter(user=user):
                state = f"revoked {record.revoked_at:%Y-%m-%d}" if record.revoked_at else "live"
                used = f"{record.last_used_at:%Y-%m-%d %H:%M}" if record.last_used_at else "never"
                self.stdout.write(f"{record.prefix}…  {record.name}  {state}, last used {used}")
            return
        if options["revoke"]:
            matches = list(
                ApiToken.objects.filter(user=user, prefix__startswith=options["revoke"][:12], revoked_at=None)
            )
            if len(matches) != 1:
                problem = f"{len(matches)} live tokens" if matches else "no live token"
                raise CommandError(
                    f"--revoke: {problem} of {user} start with {options['revoke']!r}; give the prefix shown by --list."
                )
            api_token_revoke(token=matches[0])
            self.stderr.write(f"Revoked {matches[0]}.")
            return
        if not user.is_active:
            raise CommandError(f"--user: {user} is inactive; its tokens would be refused.")
        record, secret = api_token_create(user=user, name=options["name"])
        self.stderr.write(f"Created token {record.prefix}… for {user} ({record.name}). It is shown only now:")
        self.stdout.write(secret)
