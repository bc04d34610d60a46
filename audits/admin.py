from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from audits.forms import ClusterAdminForm
from audits.models import (
    AuditRun,
    Cluster,
    Finding,
    Membership,
    NotificationChannel,
    NotificationDelivery,
    Suppression,
)
from audits.schedule import next_slot


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterAdminForm
    list_display = [
        "name",
        "team",
        "source_kind",
        "schedule_cron",
        "schedule_timezone",
        "schedule_enabled",
        "next_audit_at",
    ]
    list_filter = ["team", "source_kind", "schedule_enabled"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    def save_model(self, request: HttpRequest, obj: Cluster, form: Any, change: bool) -> None:
        # The next slot always follows the schedule as saved.
        obj.next_audit_at = next_slot(obj.schedule_cron, obj.schedule_timezone, timezone.now())
        super().save_model(request, obj, form, change)


@admin.register(AuditRun)
class AuditRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "cluster", "trigger", "status", "scheduled_for", "captured_at", "findings_open", "score"]
    list_filter = ["status", "trigger", "cluster"]
    readonly_fields = [f.name for f in AuditRun._meta.fields]


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = [
        "check_id",
        "severity",
        "object_kind",
        "object_namespace",
        "object_name",
        "opened_at",
        "closed_at",
        "is_regression",
    ]
    list_filter = ["severity", "check_id", "cluster"]
    search_fields = ["object_name", "object_namespace", "fingerprint"]
    readonly_fields = [f.name for f in Finding._meta.fields]


@admin.register(Suppression)
class SuppressionAdmin(admin.ModelAdmin):
    list_display = ["check_id", "cluster", "created_by", "created_at", "expires_at", "revoked_at"]
    list_filter = ["cluster"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "role"]
    list_filter = ["team", "role"]


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    list_display = ["name", "team", "kind", "target", "enabled"]
    list_filter = ["team", "kind", "enabled"]


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(admin.ModelAdmin):
    list_display = ["run", "channel", "status", "attempts", "created_at", "sent_at"]
    list_filter = ["status", "channel"]
    readonly_fields = [f.name for f in NotificationDelivery._meta.fields]
