from __future__ import annotations

from django.contrib import admin

from audits.models import AuditRun, Cluster, Finding, Membership, Suppression


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
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
