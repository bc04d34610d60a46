from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html, format_html_join

from audits.severity import SEVERITY_ORDER
from audits.severity import grade as grade_of

register = template.Library()


@register.filter
def grade(score: int | None) -> str:
    return grade_of(score)


@register.simple_tag
def severity_badges(counts: dict[str, Any]) -> str:
    """Open findings by severity as badges, in severity order."""
    return format_html_join(
        " ",
        '<span class="sev sev-{}" title="{}">{} {}</span>',
        ((s.value, s.label, int(counts.get(s.value, 0)), s.label.lower()) for s in SEVERITY_ORDER),
    ) or format_html("{}", "none")
