from __future__ import annotations

from django.urls import path

from audits.exports import views

urlpatterns = [
    path("clusters/<slug:slug>/export/", views.cluster_export, name="cluster-export"),
    path("clusters/<slug:slug>/diff/", views.run_diff, name="run-diff"),
    path("teams/<int:team_id>/export/", views.team_export, name="team-export"),
]
