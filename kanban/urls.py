from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from kanban import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("kanban.api.urls")),
]
