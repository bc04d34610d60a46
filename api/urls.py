from __future__ import annotations

from django.urls import path

from api import metrics, views

urlpatterns = [
    path("api/openapi.json", views.openapi, name="api-openapi"),
    path("api/clusters", views.clusters, name="api-clusters"),
    path("api/runs", views.runs, name="api-runs"),
    path("api/findings", views.findings, name="api-findings"),
    path("api/cases", views.cases, name="api-cases"),
    path("metrics", metrics.metrics, name="metrics"),
]
