from __future__ import annotations

from typing import Any

from django.urls import path, re_path
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
related = project + "related/<str:alias>/"
conversation = project + "conversations/<str:conversation_id>/"
configuration = project + "configurations/<str:configuration_id>/"

#: (route, DRF view class, URL name).
Route = tuple[str, Any, str]


def kv_routes(base: str, views: tuple[Any, ...], name: str) -> list[Route]:
    """The KV endpoints under ``base`` (the project's, or a related project's)."""
    batch, history, values = views
    return [
        (base + "kv:batchGet", batch, f"{name}-kv-batch-get"),
        (base + "history/kv/<path:key>", history, f"{name}-kv-history"),
        (base + "kv/<path:key>", values, f"{name}-kv"),
    ]


def knowledge_routes(base: str, views: tuple[Any, ...], name: str) -> list[Route]:
    """The Knowledge endpoints under ``base`` (the project's, or a related project's)."""
    listing, document, lines, finder = views
    documents = base + "knowledge/documents/"
    return [
        (documents, listing, f"{name}-documents"),
        (documents + "<str:document_id>", document, f"{name}-document"),
        (documents + "<str:document_id>/lines", lines, f"{name}-document-lines"),
        (base + "knowledge/search/", finder, f"{name}-search"),
    ]


def entrypoint_routes(base: str, name: str) -> list[Route]:
    return [
        (base + "entrypoints/", entrypoints.EntrypointListView, name),
        (
            base + "entrypoints/<str:entrypoint_id>/run",
            entrypoints.EntrypointRunView,
            f"{name}-run",
        ),
    ]


#: Every endpoint but the schema's, in the order the schema lists them.
api_routes: list[Route] = [
    ("projects/", projects.ProjectListView, "api-projects"),
    (project, projects.ProjectView, "api-project"),
    ("projects/archive", board_archives.BoardArchiveImportView, "api-board-archive-import"),
    (project + "archive", board_archives.BoardArchiveView, "api-board-archive"),
    (project + "cards.csv", board_archives.BoardCardsCsvView, "api-cards-csv"),
    (project + "members/", projects.MemberListView, "api-members"),
    (project + "members/<str:username>", projects.MemberView, "api-member"),
    (project + "offers/", projects.PendingOfferListView, "api-board-offers"),
    (project + "attachments/", attachments.AttachmentListView, "api-attachments"),
    (project + "attachments/<str:attachment_id>", attachments.AttachmentView, "api-attachment"),
    (project + "cards/<str:card>/copy", card_transfers.CardCopyView, "api-card-copy"),
    (project + "cards/<str:card>/move", card_transfers.CardMoveView, "api-card-move"),
    (project + "invites/", invites.InviteListView, "api-invites"),
    (project + "invites/<int:invite_id>", invites.InviteView, "api-invite"),
    *kv_routes(project, (kv.BatchGetView, kv.HistoryView, kv.KvView), "api"),
    *kv_routes(
        related, (kv.RelatedBatchGetView, kv.RelatedHistoryView, kv.RelatedKvView), "api-related"
    ),
    (conversation + "kv/<path:key>", kv.KvView, "api-conversation-kv"),
    (project + "persistent-values/<path:key>", kv.PersistentValueView, "api-pv"),
    (conversation + "persistent-values/<path:key>", kv.PersistentValueView, "api-conversation-pv"),
    (project + "configurations/", configurations.ConfigurationListView, "api-configurations"),
    (configuration, configurations.ConfigurationView, "api-configuration"),
    (
        configuration + "duplicate/",
        configurations.ConfigurationDuplicateView,
        "api-configuration-duplicate",
    ),
    (
        configuration + "activate/",
        configurations.ConfigurationActivateView,
        "api-configuration-activate",
    ),
    *knowledge_routes(
        project,
        (
            knowledge.DocumentListView,
            knowledge.DocumentView,
            knowledge.DocumentLinesView,
            knowledge.SearchView,
        ),
        "api-knowledge",
    ),
    *knowledge_routes(
        related,
        (
            knowledge.RelatedDocumentListView,
            knowledge.RelatedDocumentView,
            knowledge.RelatedDocumentLinesView,
            knowledge.RelatedSearchView,
        ),
        "api-related-knowledge",
    ),
    *entrypoint_routes(project, "api-entrypoints"),
    *entrypoint_routes(related, "api-related-entrypoints"),
    (project + "token-usage", token_usage.ProjectTokenUsageView, "api-project-token-usage"),
    ("notifications/", notifications.NotificationListView, "api-notifications"),
    ("notifications/read", notifications.NotificationReadView, "api-notifications-read"),
    ("offers/", offers.OfferListView, "api-offers"),
    ("offers/<int:offer_id>/accept", offers.OfferAcceptView, "api-offer-accept"),
    ("offers/<int:offer_id>/decline", offers.OfferDeclineView, "api-offer-decline"),
    ("search/cards", search.CardSearchView, "api-search-cards"),
    ("token-usage", token_usage.SystemTokenUsageView, "api-token-usage"),
]


urlpatterns = [
    *(path(route, view.as_view(), name=name) for route, view, name in api_routes),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[]), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[]),
        name="api-docs",
    ),
    # Last: whatever no endpoint above matched (``configurations//`` among them).
    re_path(r"^(?P<unmatched>.*)$", errors.api_path_not_found),
]
