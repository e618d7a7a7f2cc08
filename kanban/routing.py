from __future__ import annotations

from django.urls import path

from kanban.bridge.consumer import BridgeConsumer
from kanban.bridge.inbox import InboxConsumer

websocket_urlpatterns = [
    path("ws/boards/<uuid:project_id>/", BridgeConsumer.as_asgi()),
    path("ws/inbox/", InboxConsumer.as_asgi()),
]
