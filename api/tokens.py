"""Writes and lookups of API tokens."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.contrib.auth.models import User
from django.utils import timezone

from api.models import ApiToken

# Not a secret: marks a string as a kubegap token (for people and secret scanners).
TOKEN_PREFIX = "kgp_"  # noqa: S105
# last_used_at is refreshed at most this often, so reads do not each write a row.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def api_token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """Create a token for `user`; returns the stored record and the token, which is never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = ApiToken.objects.create(user=user, name=name, prefix=token[:12], digest=token_digest(token))
    return record, token


def api_token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def api_token_user(token: str) -> User | None:
    """The active user a live token belongs to, or None."""
    record = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(token), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if record is None:
        return None
    now = timezone.now()
    if record.last_used_at is None or now - record.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=record.pk).update(last_used_at=now)
    return record.user
