"""Give a user a role in a project (guest, developer, owner), or remove it (none)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from kanban.access.memberships import membership_set
from kanban.management.base import KanbanCommand
from kanban.models import Project, Role


class Command(KanbanCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("project_id", type=UUID)
        parser.add_argument("role", choices=[*Role.values, "none"])

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        user = user_model.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        project = Project.objects.filter(pk=options["project_id"]).first()
        if project is None:
            raise CommandError(f"no project {options['project_id']}")
        changed = membership_set(user=user, project=project, role=options["role"])
        name, role = user.get_username(), options["role"]
        summary = f"{name} has no role in" if role == "none" else f"{name} is {role} of"
        suffix = "" if changed else " (unchanged)"
        self.stdout.write(f"{summary} {project.name} ({project.id}){suffix}")
