"""The library of public incident reports that checks cite."""

from __future__ import annotations

from django.db import models


class Tag(models.Model):
    name = models.SlugField(max_length=64, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Case(models.Model):
    """A public incident: what happened, why, what fixed it, and where it is reported.

    Cases are data: one YAML file each under ``cases/data/``, loaded by
    ``manage.py load_cases``. The texts are the project's own summaries.
    """

    id = models.CharField(max_length=16, primary_key=True)
    org = models.CharField(max_length=200)
    # As precise as the report is: "2019", "2019-06" or "2019-06-11"; blank if undated.
    date_label = models.CharField(max_length=10, blank=True)
    # The first day of that period, for sorting and the year filter.
    occurred_on = models.DateField(null=True, blank=True)
    title = models.CharField(max_length=300)
    summary = models.TextField()
    trigger = models.TextField()
    root_cause = models.TextField()
    remediation = models.TextField()
    lessons = models.TextField()
    gaps = models.JSONField(default=list, blank=True)
    tags = models.ManyToManyField(Tag, related_name="cases", blank=True)

    class Meta:
        ordering = ["-occurred_on", "id"]
        indexes = [
            # Case library: filter by year and organisation.
            models.Index(fields=["occurred_on"], name="case_occurred_idx"),
            models.Index(fields=["org"], name="case_org_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.title}"


class CaseSource(models.Model):
    """A public address where the incident is reported."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="sources")
    url = models.URLField(max_length=500)
    title = models.CharField(max_length=300)
    primary = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]

    def __str__(self) -> str:
        return self.url
