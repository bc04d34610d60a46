"""API tokens: each belongs to a user and sees exactly what that user sees."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ApiToken(models.Model):
    """A bearer token for the API. Only a SHA-256 digest of it is stored.

    The token is shown once, when it is created. A plain (unsalted, fast) digest
    is enough because tokens are 256 random bits, not passwords a person chose:
    no dictionary can guess them, and lookup by digest stays one indexed query.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'grafana' or 'postmortem script'.")
    # The first characters of the token, to tell tokens apart without storing them.
    prefix = models.CharField(max_length=16, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"
        indexes = [
            # The admin and `api_token --list`: a user's live tokens.
            models.Index(fields=["user"], name="apitoken_live_idx", condition=Q(revoked_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name}, {self.user})"

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None
