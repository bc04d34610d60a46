from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from api.models import ApiToken
from api.tokens import api_token_create, api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created here with a user and a name; the token itself is shown once, in a message."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "user__username", "prefix"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    actions = ["revoke"]

    # The stubs type fields as nested groups; a flat list of names is one of them.
    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:  # type: ignore[override]
        if obj is None:
            return ["user", "name"]
        return ["user", "name", "prefix", "created_at", "last_used_at", "revoked_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        return [] if obj is None else ["user", "prefix", "created_at", "last_used_at"]

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        record, token = api_token_create(user=obj.user, name=obj.name)
        obj.pk, obj.prefix, obj.digest, obj.created_at = record.pk, record.prefix, record.digest, record.created_at
        messages.warning(
            request,
            f"API token for {record.user}: {token} — copy it now; it is stored only as a hash and not shown again.",
        )

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        for token in queryset:
            api_token_revoke(token=token)
        self.message_user(request, f"Revoked {queryset.count()} token(s).")
