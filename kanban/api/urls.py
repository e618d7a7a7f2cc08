from __future__ import annotations

from typing import Any

from django.urls import URLPattern, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from kanban.api import (
    attachments,
    board_archives,
    card_transfers,
    configurations,
    entrypoints,
    errors,
    invites,
    knowledge,
    kv,
    notifications,
    offers,
    projects,
    search,
    token_usage,
)

project = "projects/<uuid:project_id>/"
conversation = project + "conversations/<str:conversation_id>/"
configuration = project + "configurations/<str:configuration_id>/"


def kv_paths(base: str, views: tuple[Any, ...], name: str) -> list[URLPattern]:
    """The KV endpoints under ``base`` (the project's, or a related project's)."""
    batch, history, values = views
    return [
        path(base + "kv:batchGet", batch.as_view(), name=f"{name}-kv-batch-get"),
        path(base + "history/kv/<path:key>", history.as_view(), name=f"{name}-kv-history"),
        path(base + "kv/<path:key>", values.as_view(), name=f"{name}-kv"),
    ]


def knowledge_paths(base: str, views: tuple[Any, ...], name: str) -> list[URLPattern]:
    """The Knowledge endpoints under ``base`` (the project's, or a related project's)."""
    listing, document, lines, finder = views
    documents = base + "knowledge/documents/"
    return [
        path(documents, listing.as_view(), name=f"{name}-documents"),
        path(documents + "<str:document_id>", document.as_view(), name=f"{name}-document"),
        path(
            documents + "<str:document_id>/lines",
            lines.as_view(),
            name=f"{name}-document-lines",
        ),
        path(base + "knowledge/search/", finder.as_view(), name=f"{name}-search"),
    ]


def entrypoint_paths(base: str, name: str) -> list[URLPattern]:
    return [
        path(base + "entrypoints/", entrypoints.EntrypointListView.as_view(), name=name),
        path(
            base + "entrypoints/<str:entrypoint_id>/run",
            entrypoints.EntrypointRunView.as_view(),
            name=f"{name}-run",
        ),
    ]


#: One configuration and its two actions, all under ``configuration``.
configuration_routes: list[tuple[str, Any, str]] = [
    ("", configurations.ConfigurationView, "api-configuration"),
    ("duplicate/", configurations.ConfigurationDuplicateView, "api-configuration-duplicate"),
    ("activate/", configurations.ConfigurationActivateView, "api-configuration-activate"),
]


urlpatterns = [
    path("projects/", projects.ProjectListView.as_view(), name="api-projects"),
    path(project, projects.ProjectView.as_view(), name="api-project"),
    path(
        "projects/archive",
        board_archives.BoardArchiveImportView.as_view(),
        name="api-board-archive-import",
    ),
    path(project + "archive", board_archives.BoardArchiveView.as_view(), name="api-board-archive"),
    path(project + "cards.csv", board_archives.BoardCardsCsvView.as_view(), name="api-cards-csv"),
    path(project + "members/", projects.MemberListView.as_view(), name="api-members"),
    path(project + "members/<str:username>", projects.MemberView.as_view(), name="api-member"),
    path(project + "offers/", projects.PendingOfferListView.as_view(), name="api-board-offers"),
    path(
        project + "attachments/",
        attachments.AttachmentListView.as_view(),
        name="api-attachments",
    ),
    path(
        project + "attachments/<str:attachment_id>",
        attachments.AttachmentView.as_view(),
        name="api-attachment",
    ),
    path(
        project + "cards/<str:card>/copy",
        card_transfers.CardCopyView.as_view(),
        name="api-card-copy",
    ),
    path(
        project + "cards/<str:card>/move",
        card_transfers.CardMoveView.as_view(),
        name="api-card-move",
    ),
    path(project + "invites/", invites.InviteListView.as_view(), name="api-invites"),
    path(project + "invites/<int:invite_id>", invites.InviteView.as_view(), name="api-invite"),
    *kv_paths(project, (kv.BatchGetView, kv.HistoryView, kv.KvView), "api"),
    *kv_paths(
        project + "related/<str:alias>/",
        (kv.RelatedBatchGetView, kv.RelatedHistoryView, kv.RelatedKvView),
        "api-related",
    ),
    path(conversation + "kv/<path:key>", kv.KvView.as_view(), name="api-conversation-kv"),
    path(project + "persistent-values/<path:key>", kv.PersistentValueView.as_view(), name="api-pv"),
    path(
        conversation + "persistent-values/<path:key>",
        kv.PersistentValueView.as_view(),
        name="api-conversation-pv",
    ),
    path(
        project + "configurations/",
        configurations.ConfigurationListView.as_view(),
        name="api-configurations",
    ),
    *(
        path(configuration + suffix, view.as_view(), name=name)
        for suffix, view, name in configuration_routes
    ),
    *knowledge_paths(
        project,
        (
            knowledge.DocumentListView,
            knowledge.DocumentView,
            knowledge.DocumentLinesView,
            knowledge.SearchView,
        ),
        "api-knowledge",
    ),
    *knowledge_paths(
        project + "related/<str:alias>/",
        (
            knowledge.RelatedDocumentListView,
            knowledge.RelatedDocumentView,
            knowledge.RelatedDocumentLinesView,
            knowledge.RelatedSearchView,
        ),
        "api-related-knowledge",
    ),
    *entrypoint_paths(project, "api-entrypoints"),
    *entrypoint_paths(project + "related/<str:alias>/", "api-related-entrypoints"),
    path(
        project + "token-usage",
        token_usage.ProjectTokenUsageView.as_view(),
        name="api-project-token-usage",
    ),
    path("notifications/", notifications.NotificationListView.as_view(), name="api-notifications"),
    path(
        "notifications/read",
        notifications.NotificationReadView.as_view(),
        name="api-notifications-read",
    ),
    path("offers/", offers.OfferListView.as_view(), name="api-offers"),
    path("offers/<int:offer_id>/accept", offers.OfferAcceptView.as_view(), name="api-offer-accept"),
    path(
        "offers/<int:offer_id>/decline",
        offers.OfferDeclineView.as_view(),
        name="api-offer-decline",
    ),
    path("search/cards", search.CardSearchView.as_view(), name="api-search-cards"),
    path("token-usage", token_usage.SystemTokenUsageView.as_view(), name="api-token-usage"),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[]), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[]),
        name="api-docs",
    ),
    # Last: whatever no endpoint above matched (``configurations//`` among them).
    re_path(r"^(?P<unmatched>.*)$", errors.api_path_not_found),
]
