from __future__ import annotations

import json
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from audits.charts import sparkline as sparkline_svg
from audits.models import Finding
from audits.severity import SEVERITY_ORDER
from audits.severity import grade as grade_of

register = template.Library()


@register.filter
def grade(score: int | None) -> str:
    return grade_of(score)


@register.filter
def get(mapping: dict[str, Any] | None, key: str) -> Any:
    """Look a key up in a dict (template variables cannot use arbitrary keys)."""
    return (mapping or {}).get(key)


@register.filter
def as_json(value: Any) -> str:
    """Pretty JSON; autoescaping still applies where it is shown."""
    return json.dumps(value, indent=2, sort_keys=True, default=str)


@register.simple_tag
def severity_badges(counts: dict[str, Any]) -> SafeString:
    """Open findings by severity as badges, in severity order."""
    return format_html_join(
        " ",
        '<span class="sev sev-{}">{} {}</span>',
        (
            (s.value if counts.get(s.value) else "none", int(counts.get(s.value, 0)), s.label.lower())
            for s in SEVERITY_ORDER
        ),
    )


@register.simple_tag
def sparkline(values: list[int]) -> SafeString:
    return sparkline_svg(values)


@register.simple_tag
def finding_link(finding: Finding) -> SafeString:
    url = reverse("finding", args=[finding.cluster.slug, finding.pk])
    return format_html(
        '<span class="sev sev-{}">{}</span> <code>{}</code> <a href="{}">{}</a>',
        finding.severity, finding.get_severity_display(), finding.check_id, url, finding.object_ref,
    )  # fmt: skip
