"""Forms of the export and diff pages: plain GET forms that work without JavaScript."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms

from audits.exports.history_export import ExportFormat, window_problem
from audits.history import MomentError, RunNotComparable, evaluated_runs, iso, parse_moment, run_for_diff
from audits.models import AuditRun, Cluster

MOMENT_HELP = "ISO 8601, e.g. 2026-09-01T14:51:00Z; UTC when no offset is given."
# Runs offered in the diff page's menus; older ones can still be compared by id in the URL.
RUN_CHOICES = 100


class MomentField(forms.CharField):
    """A timestamp typed as ISO 8601 text (a text input, so any format the CLI and API take works here)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", MOMENT_HELP)
        kwargs.setdefault("widget", forms.TextInput(attrs={"placeholder": "2026-09-01T14:51:00Z", "size": 24}))
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> dt.datetime | None:  # type: ignore[override]
        text = super().to_python(value)
        if not text:
            return None
        try:
            return parse_moment(text, parameter=str(self.label))
        except MomentError as exc:
            raise forms.ValidationError(str(exc)) from None

    def prepare_value(self, value: Any) -> Any:
        return iso(value) if isinstance(value, dt.datetime) else value


class HistoryExportForm(forms.Form):
    since = MomentField(label="From")
    until = MomentField(label="To")
    at = MomentField(
        label="Open at",
        required=False,
        help_text="The moment whose open gaps the export lists, such as an incident's start. Default: To. "
        + MOMENT_HELP,
    )
    format = forms.ChoiceField(
        choices=[
            (ExportFormat.MARKDOWN, "Markdown postmortem report"),
            (ExportFormat.CSV, "CSV"),
            (ExportFormat.JSON, "JSON"),
        ]
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and (problem := window_problem(since, until, since_name="From", until_name="To")):
            self.add_error("until", problem)
        return data


class RunDiffForm(forms.Form):
    """Two runs of one cluster; `from` and `to` are Python keywords, so the fields are added by name."""

    def __init__(self, *args: Any, cluster: Cluster, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cluster = cluster
        recent = list(evaluated_runs(cluster)[:RUN_CHOICES])
        choices: list[tuple[int, str]] = [
            (run.pk, f"Run {run.pk}, captured {run.captured_at:%Y-%m-%d %H:%M} UTC") for run in recent
        ]
        # A run older than the menu, asked for by id, still shows as chosen.
        offered = {pk for pk, _ in choices}
        for name in ("from", "to"):
            value = str(self.data.get(name, ""))
            if value.isdigit() and int(value) not in offered:
                choices.append((int(value), f"Run {value}"))
                offered.add(int(value))
        for name, label in (("from", "From run"), ("to", "To run")):
            self.fields[name] = forms.IntegerField(label=label, widget=forms.Select(choices=choices))
        self.fields["format"] = forms.ChoiceField(
            choices=[("html", "Page"), ("json", "JSON"), ("csv", "CSV")], required=False
        )

    def _run(self, name: str) -> AuditRun:
        try:
            return run_for_diff(self.cluster, self.cleaned_data[name], parameter=name)
        except RunNotComparable as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_from(self) -> AuditRun:
        return self._run("from")

    def clean_to(self) -> AuditRun:
        return self._run("to")
