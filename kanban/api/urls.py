from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from kanban.api import configurations, kv

project = "projects/<uuid:project_id>/"
conversation = project + "conversations/<str:conversation_id>/"
configuration = project + "configurations/<str:configuration_id>/"

urlpatterns = [
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
    path("schema/", SpectacularAPIView.as_view(permission_classes=[]), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[]),
        name="api-docs",
    ),
]
