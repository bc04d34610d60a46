from __future__ import annotations

import zoneinfo
from typing import Any

from django import forms

from audits.models import Cluster
from audits.schedule import ScheduleError, validate_schedule


class ScheduleForm(forms.Form):
    schedule_cron = forms.CharField(
        label="Cron expression",
        max_length=100,
        help_text="Five fields: minute hour day-of-month month day-of-week. 0 2 * * * is 02:00 every day.",
    )
    schedule_timezone = forms.ChoiceField(
        label="Timezone", choices=[(tz, tz) for tz in sorted(zoneinfo.available_timezones())]
    )
    schedule_enabled = forms.BooleanField(label="Audit on this schedule", required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "schedule_cron" in data and "schedule_timezone" in data:
            try:
                validate_schedule(data["schedule_cron"], data["schedule_timezone"])
            except ScheduleError as exc:
                self.add_error("schedule_cron", str(exc))
        return data


class ClusterAdminForm(forms.ModelForm):
    class Meta:
        model = Cluster
        fields = [
            "team",
            "name",
            "slug",
            "description",
            "source_kind",
            "source_file",
            "source_path",
            "kube_context",
            "schedule_cron",
            "schedule_timezone",
            "schedule_enabled",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            validate_schedule(data.get("schedule_cron", ""), data.get("schedule_timezone", ""))
        except ScheduleError as exc:
            raise forms.ValidationError({"schedule_cron": str(exc)}) from None
        return data
