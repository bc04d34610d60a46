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
    """Register a cluster from a kubeconfig (uploaded or pasted), a snapshot file or an incident artifact;
    or add an artifact to the history of a cluster already registered."""

    SOURCES = [
        ("kubeconfig", "A kubeconfig context (live cluster)"),
        ("snapshot", "A snapshot file"),
        ("artifact", "An incident artifact: a cluster-info dump, a support bundle or a must-gather"),
    ]

    team = forms.ModelChoiceField(queryset=Group.objects.none(), label="Team", required=False)
    name = forms.CharField(max_length=100, label="Cluster name", required=False)
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
    artifact = forms.FileField(
        required=False,
        label="Artifact",
        help_text="A `kubectl cluster-info dump`, a support bundle (troubleshoot or support-bundle-kit) or an "
        "OpenShift must-gather, packed as .tar.gz, .tar.xz or .zip. Its layout is recognised; Secrets and logs "
        "in it are never read.",
    )
    captured_at = forms.DateTimeField(
        required=False,
        label="Captured at (UTC, optional)",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Leave empty to take the time from the artifact (its timestamp file, file times or objects).",
    )
    add_to = forms.ModelChoiceField(
        queryset=Cluster.objects.none(),
        required=False,
        label="Add it to the history of",
        empty_label="— a new cluster (team and name above) —",
        help_text="An artifact newer than the cluster's latest run becomes a run at its capture time.",
    )

    def __init__(self, *args: Any, teams: Any, contexts: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams  # type: ignore[attr-defined]
        self.fields["context"].choices = [("", "—")] + [(c, c) for c in contexts or []]  # type: ignore[attr-defined]
        self.fields["add_to"].queryset = Cluster.objects.filter(team__in=teams).order_by("name")  # type: ignore[attr-defined]

    def sections(self) -> list[tuple[str, list[Any]]]:
        """The fields by the source they belong to, for the page to group them."""
        return [
            ("", [self["team"], self["name"], self["source"]]),
            ("A kubeconfig context", [self["kubeconfig_file"], self["kubeconfig_text"], self["context"]]),
            ("A snapshot file", [self["snapshot"]]),
            ("An incident artifact", [self["artifact"], self["captured_at"], self["add_to"]]),
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("source") == "artifact" and data.get("add_to")):
            if not data.get("team"):
                self.add_error("team", "Choose the team that owns the cluster.")
            if not data.get("name"):
                self.add_error("name", "Name the cluster.")
        return data
