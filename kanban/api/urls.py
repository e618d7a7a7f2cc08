from __future__ import annotations

from typing import Any

from django.urls import URLPattern, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from kanban.api import (
    configurations,
    entrypoints,
    invites,
    knowledge,
    kv,
    notifications,
    projects,
    search,
    token_usage,
)

project = "projects/<uuid:project_id>/"
conversation = project + "conversations/<str:conversation_id>/"
configuration = project + "configurations/<str:configuration_id>/"


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


urlpatterns = [
    path("projects/", projects.ProjectListView.as_view(), name="api-projects"),
    path(project, projects.ProjectView.as_view(), name="api-project"),
    path(project + "members/", projects.MemberListView.as_view(), name="api-members"),
    path(project + "members/<str:username>", projects.MemberView.as_view(), name="api-member"),
    path(project + "invites/", invites.InviteListView.as_view(), name="api-invites"),
    path(project + "invites/<int:invite_id>", invites.InviteView.as_view(), name="api-invite"),
    path(project + "kv:batchGet", kv.BatchGetView.as_view(), name="api-kv-batch-get"),
    path(
        project + "related/<str:alias>/kv:batchGet",
        kv.RelatedBatchGetView.as_view(),
        name="api-related-kv-batch-get",
    ),
    path(project + "history/kv/<path:key>", kv.HistoryView.as_view(), name="api-kv-history"),
    path(
        project + "related/<str:alias>/history/kv/<path:key>",
        kv.RelatedHistoryView.as_view(),
        name="api-related-kv-history",
    ),
    path(project + "kv/<path:key>", kv.KvView.as_view(), name="api-kv"),
    path(conversation + "kv/<path:key>", kv.KvView.as_view(), name="api-conversation-kv"),
    path(project + "persistent-values/<path:key>", kv.PersistentValueView.as_view(), name="api-pv"),
    path(
        conversation + "persistent-values/<path:key>",
        kv.PersistentValueView.as_view(),
        name="api-conversation-pv",
    ),
    path(
        project + "related/<str:alias>/kv/<path:key>",
        kv.RelatedKvView.as_view(),
        name="api-related-kv",
    ),
    path(
        project + "configurations/",
        configurations.ConfigurationListView.as_view(),
        name="api-configurations",
    ),
    path(configuration, configurations.ConfigurationView.as_view(), name="api-configuration"),
    path(
        configuration + "duplicate/",
        configurations.ConfigurationDuplicateView.as_view(),
        name="api-configuration-duplicate",
    ),
    path(
        configuration + "activate/",
        configurations.ConfigurationActivateView.as_view(),
        name="api-configuration-activate",
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
    path("search/cards", search.CardSearchView.as_view(), name="api-search-cards"),
    path("token-usage", token_usage.SystemTokenUsageView.as_view(), name="api-token-usage"),
    path("schema/", SpectacularAPIView.as_view(permission_classes=[]), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[]),
        name="api-docs",
    ),
]
