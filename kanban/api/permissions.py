"""What a scoped API token may reach over REST, on top of the user's own role."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from kanban.accounts.tokens import access_token_scope
from kanban.models import ApiToken


class TokenScopePermission(BasePermission):
    """A project-scoped token reaches only URLs of its project; a read-only one only reads.
    A view whose POST only reads (a batched read) says so with ``reads_only = True``; a view
    naming no project that narrows itself to the token's projects (a search across boards,
    ``token_projects``) says so with ``token_projects_only = True``."""

    def has_permission(self, request: Request, view: Any) -> bool:
        token = request.auth
        if isinstance(token, ApiToken):
            writing = request.method not in SAFE_METHODS and not getattr(view, "reads_only", False)
            project_id = getattr(view, "kwargs", {}).get("project_id")
            if project_id is None and getattr(view, "token_projects_only", False):
                access_token_scope(token=token, project_id=token.project_id, write=writing)
            else:
                access_token_scope(token=token, project_id=project_id, write=writing)
        return True
