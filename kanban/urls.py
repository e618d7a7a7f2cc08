from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from kanban.accounts.throttle import ThrottledAuthenticationForm
from kanban.web import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("boards/<uuid:project_id>/", views.board, name="board"),
    path("plugins/<uuid:project_id>/<path:path>", views.plugin_file, name="plugin-file"),
    path(
        "accounts/login/",
        LoginView.as_view(authentication_form=ThrottledAuthenticationForm),
        name="login",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("kanban.api.urls")),
]
