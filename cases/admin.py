from __future__ import annotations

from django.contrib import admin

from cases.models import Case, CaseSource, Tag


class CaseSourceInline(admin.TabularInline):
    model = CaseSource
    extra = 0


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["id", "org", "date_label", "title"]
    search_fields = ["id", "org", "title", "summary"]
    list_filter = ["tags"]
    inlines = [CaseSourceInline]


admin.site.register(Tag)
