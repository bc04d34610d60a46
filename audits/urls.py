from __future__ import annotations

from django.urls import path

from audits import views

urlpatterns = [
    path("", views.overview, name="overview"),
    path("clusters/<slug:slug>/", views.cluster_detail, name="cluster"),
    path("clusters/<slug:slug>/run/", views.run_now, name="run-now"),
    path("clusters/<slug:slug>/schedule/", views.schedule_edit, name="schedule"),
    path("clusters/<slug:slug>/runs/<int:run_id>/status/", views.run_status, name="run-status"),
]
