from __future__ import annotations

from django.urls import path

from cases import views

urlpatterns = [
    path("", views.case_list, name="case-list"),
    path("<str:case_id>/", views.case_detail, name="case"),
]
