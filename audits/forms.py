from __future__ import annotations

import zoneinfo
from typing import Any

from django import forms
from django.contrib.auth.models import Group

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


class SuppressionForm(forms.Form):
    reason = forms.CharField(
        label="Why is this gap accepted?",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="Shown to everyone who sees the finding, and kept in its history.",
    )
    expires_at = forms.DateTimeField(
        label="Until (UTC, optional)",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="After this the finding counts again. Leave empty to suppress until revoked.",
    )


class AddClusterForm(forms.Form):
    """Register a cluster from a kubeconfig (uploaded or pasted) or a snapshot file."""

    SOURCES = [("kubeconfig", "A kubeconfig context (live cluster)"), ("snapshot", "A snapshot file")]

    team = forms.ModelChoiceField(queryset=Group.objects.none(), label="Team")
    name = forms.CharField(max_length=100, label="Cluster name")
    source = forms.ChoiceField(choices=SOURCES, widget=forms.RadioSelect, initial="kubeconfig", label="Data from")
    kubeconfig_file = forms.FileField(required=False, label="Kubeconfig file")
    kubeconfig_text = forms.CharField(
        required=False,
        label="…or paste the kubeconfig",
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "autocomplete": "off"}),
    )
    context = forms.ChoiceField(required=False, label="Context", choices=[])
    snapshot = forms.FileField(
        required=False,
        label="Snapshot file",
        help_text="What `kubectl get ... -o json` prints, or a `manage.py snapshot` export (.json.gz).",
    )

    def __init__(self, *args: Any, teams: Any, contexts: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]
        self.fields["context"].choices = [("", "—")] + [(c, c) for c in contexts or []]  # type: ignore[attr-defined]
