from __future__ import annotations

from django.urls import path

from audits.views import add_cluster, catalog, clusters, findings, overview

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("checks/", catalog.checks_catalog, name="checks"),
    path("clusters/add/", add_cluster.add_cluster, name="cluster-add"),
    path("clusters/<slug:slug>/", clusters.cluster_detail, name="cluster"),
    path("clusters/<slug:slug>/run/", clusters.run_now, name="run-now"),
    path("clusters/<slug:slug>/schedule/", clusters.schedule_edit, name="schedule"),
    path("clusters/<slug:slug>/runs/<int:run_id>/", clusters.run_detail, name="run"),
    path("clusters/<slug:slug>/runs/<int:run_id>/snapshot/", clusters.run_snapshot, name="run-snapshot"),
    path("clusters/<slug:slug>/findings/<int:finding_id>/", findings.finding_detail, name="finding"),
    path(
        "clusters/<slug:slug>/findings/<int:finding_id>/suppress/", findings.finding_suppress, name="finding-suppress"
    ),
    path(
        "clusters/<slug:slug>/findings/<int:finding_id>/unsuppress/",
        findings.finding_unsuppress,
        name="finding-unsuppress",
    ),
]
