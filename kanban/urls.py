from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

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

#: The pages and forms of one board, under ``boards/<uuid:project_id>/``.
board_patterns = [
    path("", views.board, name="board"),
    path("members/", dashboard.members, name="board-members"),
    path("invites", invites.invite_new, name="board-invites"),
    path("invites/<int:invite_id>/revoke", invites.invite_end, name="board-invite-revoke"),
    path("archive", dashboard.board_archive, name="board-archive"),
    path("color", dashboard.board_color_choose, name="board-color"),
    path("delete", dashboard.board_delete, name="board-delete"),
    path("leave", dashboard.board_leave, name="board-leave"),
    path("webhooks/", webhooks.webhooks_page, name="board-webhooks"),
    path("webhooks/<int:webhook_id>/test", webhooks.webhook_test_page, name="board-webhook-test"),
    path(
        "webhooks/<int:webhook_id>/delete",
        webhooks.webhook_delete_page,
        name="board-webhook-delete",
    ),
]

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("archive/", dashboard.archive, name="archive"),
    path("boards/new", dashboard.board_new, name="board-new"),
    path("boards/<uuid:project_id>/", include(board_patterns)),
    path("invites/<str:token>/", invites.invite, name="invite"),
    path("attachments/<str:token>/", AttachmentDownloadView.as_view(), name="attachment-download"),
    path("imports/trello", imports.import_trello, name="import-trello"),
    path("imports/archive", imports.import_archive, name="import-archive"),
    path("imports/<uuid:job_id>/", imports.import_job, name="import-job"),
    path("imports/<uuid:job_id>/status", imports.import_job_status, name="import-job-status"),
    path("imports/<uuid:job_id>/import", imports.import_job_run, name="import-job-run"),
    path(
        "notifications/<int:notification_id>/open",
        inbox.notification_follow,
        name="notification-open",
    ),
    path("notifications/read", inbox.notifications_all_read, name="notifications-read"),
    path("inbox/list", inbox.inbox_list, name="inbox-list"),
    path("account/tokens", tokens.tokens_page, name="account-tokens"),
    path("account/email", account_email.account_email, name="account-email"),
    path(
        "email/unsubscribe/<str:token>",
        account_email.email_unsubscribe,
        name="email-unsubscribe",
    ),
    path(
        "account/tokens/<int:token_id>/revoke",
        tokens.token_revoke_page,
        name="account-token-revoke",
    ),
    path("preferences/color-scheme", preferences.color_scheme, name="color-scheme"),
    path("offers/<int:offer_id>/accept", inbox.offer_yes, name="offer-accept"),
    path("offers/<int:offer_id>/decline", inbox.offer_no, name="offer-decline"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", views.metrics, name="metrics"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("plugins/<uuid:project_id>/<path:path>", views.plugin_file, name="plugin-file"),
    path("accounts/login/", sign_in.SignInView.as_view(), name="login"),
    path("oidc/start/", sign_in.OidcStart.as_view(), name="oidc-start"),
    path("oidc/callback/", sign_in.oidc_callback, name="oidc-callback"),
    path(
        "accounts/password_reset/",
        password_reset.PasswordResetRequest.as_view(),
        name="password_reset",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("kanban.api.urls")),
]
