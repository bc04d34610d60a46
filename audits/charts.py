"""Small server-rendered SVG charts: they need no JavaScript, print, and come
with a text alternative. Inputs are numbers and times only, never cluster text."""

from __future__ import annotations

import datetime as dt

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from audits.severity import SEVERITY_ORDER

COLOURS = {"critical": "#8b0000", "high": "#b3261e", "medium": "#8a5300", "low": "#3d5a80"}


def sparkline(values: list[int], *, width: int = 120, height: int = 28) -> SafeString:
    """A trend line of open findings; the label says where it went."""
    if len(values) < 2:
        return format_html('<span class="muted">{}</span>', "not enough runs yet")
    peak = max(max(values), 1)
    step = width / (len(values) - 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (v / peak) * (height - 4):.1f}" for i, v in enumerate(values))
    label = f"Open findings over the last {len(values)} runs: from {values[0]} to {values[-1]}, peak {max(values)}"
    return format_html(
        '<svg class="sparkline" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}">'
        '<title>{}</title><polyline fill="none" stroke="#0a58ca" stroke-width="1.5" points="{}"/></svg>',
        width, height, width, height, label, label, points,
    )  # fmt: skip


def trend_chart(points: list[tuple[dt.datetime, dict[str, int]]], *, width: int = 760, height: int = 220) -> SafeString:
    """Open findings by severity after each run: one line per severity, dates on the axis."""
    if len(points) < 2:
        return format_html('<p class="muted">{}</p>', "The trend appears after two audits.")
    left, bottom, top, right = 40, 24, 10, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    start, end = points[0][0], points[-1][0]
    span = max((end - start).total_seconds(), 1.0)
    peak = max(max(counts.get(severity, 0) for _, counts in points for severity in COLOURS), 1)

    def x(at: dt.datetime) -> float:
        return left + (at - start).total_seconds() / span * plot_w

    def y(value: int) -> float:
        return top + plot_h - value / peak * plot_h

    lines = format_html_join(
        "",
        '<polyline fill="none" stroke="{}" stroke-width="2" points="{}"><title>{}</title></polyline>',
        (
            (
                COLOURS[severity],
                " ".join(f"{x(at):.1f},{y(counts.get(severity, 0)):.1f}" for at, counts in points),
                severity,
            )
            for severity in (s.value for s in SEVERITY_ORDER)
        ),
    )
    axis = format_html(
        '<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" stroke="#57606a"/>'
        '<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" stroke="#57606a"/>'
        '<text x="{l}" y="{ty}" font-size="11" fill="#57606a">{d0}</text>'
        '<text x="{r}" y="{ty}" font-size="11" fill="#57606a" text-anchor="end">{d1}</text>'
        '<text x="{lx}" y="{tt}" font-size="11" fill="#57606a" text-anchor="end">{peak}</text>'
        '<text x="{lx}" y="{b}" font-size="11" fill="#57606a" text-anchor="end">0</text>',
        l=left, r=left + plot_w, t=top, b=top + plot_h, ty=height - 6, tt=top + 10, lx=left - 6,
        d0=f"{start:%Y-%m-%d}", d1=f"{end:%Y-%m-%d}", peak=peak,
    )  # fmt: skip
    label = f"Open findings by severity from {start:%Y-%m-%d} to {end:%Y-%m-%d}, {len(points)} runs"
    return format_html(
        '<svg class="trend" viewBox="0 0 {} {}" role="img" aria-label="{}"><title>{}</title>{}{}</svg>',
        width, height, label, label, axis, lines,
    )  # fmt: skip
