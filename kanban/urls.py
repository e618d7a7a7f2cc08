from __future__ import annotations

from collections.abc import Callable

from django.contrib import admin
from django.http import HttpResponseBase
from django.urls import URLPattern, URLResolver, include, path

from kanban.api.attachments import AttachmentDownloadView
from kanban.web import (
    account_email,
    dashboard,
    health,
    imports,
    inbox,
    invites,
    password_reset,
    preferences,
    sign_in,
    tokens,
    views,
    webhooks,
)

Route = tuple[str, Callable[..., HttpResponseBase], str]

#: The pages and forms of one board, under ``boards/<uuid:project_id>/``: (route, view, name).
board_routes: list[Route] = [
    ("", views.board, "board"),
    ("members/", dashboard.members, "board-members"),
    ("invites", invites.invite_new, "board-invites"),
    ("invites/<int:invite_id>/revoke", invites.invite_end, "board-invite-revoke"),
    ("archive", dashboard.board_archive, "board-archive"),
    ("color", dashboard.board_color_choose, "board-color"),
    ("delete", dashboard.board_delete, "board-delete"),
    ("leave", dashboard.board_leave, "board-leave"),
    ("webhooks/", webhooks.webhooks_page, "board-webhooks"),
    ("webhooks/<int:webhook_id>/test", webhooks.webhook_test_page, "board-webhook-test"),
    ("webhooks/<int:webhook_id>/delete", webhooks.webhook_delete_page, "board-webhook-delete"),
]

#: Every other page and form: (route, view, name). No route here starts with ``boards/<uuid>``.
site_routes: list[Route] = [
    ("", dashboard.dashboard, "dashboard"),
    ("archive/", dashboard.archive, "archive"),
    ("boards/new", dashboard.board_new, "board-new"),
    ("invites/<str:token>/", invites.invite, "invite"),
    ("attachments/<str:token>/", AttachmentDownloadView.as_view(), "attachment-download"),
    ("imports/trello", imports.import_trello, "import-trello"),
    ("imports/archive", imports.import_archive, "import-archive"),
    ("imports/<uuid:job_id>/", imports.import_job, "import-job"),
    ("imports/<uuid:job_id>/status", imports.import_job_status, "import-job-status"),
    ("imports/<uuid:job_id>/import", imports.import_job_run, "import-job-run"),
    ("notifications/<int:notification_id>/open", inbox.notification_follow, "notification-open"),
    ("notifications/read", inbox.notifications_all_read, "notifications-read"),
    ("inbox/list", inbox.inbox_list, "inbox-list"),
    ("account/tokens", tokens.tokens_page, "account-tokens"),
    ("account/email", account_email.account_email, "account-email"),
    ("email/unsubscribe/<str:token>", account_email.email_unsubscribe, "email-unsubscribe"),
    ("account/tokens/<int:token_id>/revoke", tokens.token_revoke_page, "account-token-revoke"),
    ("preferences/color-scheme", preferences.color_scheme, "color-scheme"),
    ("offers/<int:offer_id>/accept", inbox.offer_yes, "offer-accept"),
    ("offers/<int:offer_id>/decline", inbox.offer_no, "offer-decline"),
    ("healthz", health.healthz, "healthz"),
    ("readyz", health.readyz, "readyz"),
    ("metrics", views.metrics, "metrics"),
    ("favicon.ico", views.favicon, "favicon"),
    ("plugins/<uuid:project_id>/<path:path>", views.plugin_file, "plugin-file"),
    ("accounts/login/", sign_in.SignInView.as_view(), "login"),
    ("oidc/start/", sign_in.OidcStart.as_view(), "oidc-start"),
    ("oidc/callback/", sign_in.oidc_callback, "oidc-callback"),
    (
        "accounts/password_reset/",
        password_reset.PasswordResetRequest.as_view(),
        "password_reset",
    ),
]


def paths(routes: list[Route]) -> list[URLPattern]:
    return [path(route, view, name=name) for route, view, name in routes]


urlpatterns: list[URLPattern | URLResolver] = [
    *paths(site_routes),
    path("boards/<uuid:project_id>/", include(paths(board_routes))),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("kanban.api.urls")),
]
