"""Projects, who belongs to them, what they declare about each other, and their plugin files.

These models hold data only. The rules live in services: grant rules are
``kanban.access.grant_rules``, declarations are validated in ``kanban.access.relationships``,
access is decided in ``kanban.access.decision``, packages are read and written in
``kanban.projects.packages``.
"""

from __future__ import annotations

import uuid
from typing import Final

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class ProjectType(models.TextChoices):
    KANBAN = "kanban"
    WORKFLOW = "workflow"
    CONVERSATION = "conversation"


class Role(models.TextChoices):
    GUEST = "guest"
    DEVELOPER = "developer"
    OWNER = "owner"


#: Roles are ordered; a higher rank includes everything a lower one may do.
ROLE_RANK: Final[dict[str, int]] = {Role.GUEST: 1, Role.DEVELOPER: 2, Role.OWNER: 3}


class RuleMode(models.TextChoices):
    NONE = "none"
    ALL = "all"
    PREFIXES = "prefixes"


DEFAULT_KANBAN_ENTRY: Final = "index.html"


class Project(models.Model):
    id = models.UUIDField("UUID", primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=16, choices=ProjectType.choices, default=ProjectType.KANBAN)
    kanban_entry = models.CharField(
        "kanban entry",
        max_length=512,
        default=DEFAULT_KANBAN_ENTRY,
        help_text="The plugin page, relative to the package folder.",
    )
    # The package.json last imported, kept verbatim so an export gives back the fields this
    # server does not interpret (scripts, dependencies, ...). Text rather than JSON because
    # jsonb would not keep the author's key order.
    package_json = models.TextField(blank=True, default="", editable=False)
    # Set when an owner archives the board: it leaves the dashboards, keeps its data and
    # comes back from the archive view.
    archived_at = models.DateTimeField("archived", null=True, blank=True, editable=False)
    # The tile's colour on the dashboards, one of kanban.projects.appearance.BOARD_COLORS,
    # chosen by an owner; empty for the board's stable default (picked from its id).
    color = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name", "id")
        constraints = [
            models.CheckConstraint(
                condition=Q(type__in=ProjectType.values), name="kanban_project_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.GUEST)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("project", "user")
        constraints = [
            models.UniqueConstraint(fields=("user", "project"), name="kanban_membership_unique"),
            models.CheckConstraint(
                condition=Q(role__in=Role.values), name="kanban_membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.project_id}"


class Relationship(models.Model):
    """One entry of a project's ``relatedProjects``: the alias it uses for another project,
    and what it grants that project (``grantToRelatedProject``)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="relationships")
    alias = models.CharField(max_length=64)
    # A plain UUID, not a foreign key: a declaration may name a project this server does not
    # have (yet); it stays pending until that project exists and points back.
    related_project_id = models.UUIDField("related project UUID")
    position = models.PositiveSmallIntegerField(default=0, editable=False)

    # grantToRelatedProject: what the related project may do here. Defaults are the
    # product's defaults for a new relationship: read all, everything else none.
    read_mode = models.CharField(
        "read", max_length=16, choices=RuleMode.choices, default=RuleMode.ALL
    )
    read_prefixes = models.JSONField("read prefixes", default=list, blank=True)
    write_mode = models.CharField(
        "write", max_length=16, choices=RuleMode.choices, default=RuleMode.NONE
    )
    write_prefixes = models.JSONField("write prefixes", default=list, blank=True)
    knowledge_read_mode = models.CharField(
        "knowledge read", max_length=16, choices=RuleMode.choices, default=RuleMode.NONE
    )
    knowledge_read_prefixes = models.JSONField("knowledge read prefixes", default=list, blank=True)
    knowledge_write_mode = models.CharField(
        "knowledge write", max_length=16, choices=RuleMode.choices, default=RuleMode.NONE
    )
    knowledge_write_prefixes = models.JSONField(
        "knowledge write prefixes", default=list, blank=True
    )
    entrypoints_mode = models.CharField(
        "entrypoints", max_length=16, choices=RuleMode.choices, default=RuleMode.NONE
    )
    entrypoints_prefixes = models.JSONField("entrypoints prefixes", default=list, blank=True)

    class Meta:
        ordering = ("project", "position", "id")
        constraints = [
            models.UniqueConstraint(
                fields=("project", "alias"), name="kanban_relationship_alias_unique"
            ),
            models.UniqueConstraint(
                fields=("project", "related_project_id"),
                name="kanban_relationship_target_unique",
            ),
            models.CheckConstraint(
                condition=~Q(related_project_id=F("project_id")),
                name="kanban_relationship_not_self",
            ),
            *(
                models.CheckConstraint(
                    condition=Q(**{f"{rule}_mode__in": RuleMode.values}),
                    name=f"kanban_relationship_{rule}_mode_valid",
                )
                for rule in ("read", "write", "knowledge_read", "knowledge_write", "entrypoints")
            ),
        ]
        indexes = [
            # Access resolution looks up "does B point back at A" on every call.
            models.Index(fields=("related_project_id", "project"), name="kanban_rel_target_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.alias} -> {self.related_project_id}"


class PluginFile(models.Model):
    """One file of a kanban plugin, kept in the database so that every server process can
    serve it without a shared disk."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="plugin_files")
    path = models.CharField(max_length=512)
    content = models.BinaryField()
    content_type = models.CharField(max_length=128)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("project", "path")
        constraints = [
            models.UniqueConstraint(fields=("project", "path"), name="kanban_pluginfile_unique"),
        ]

    def __str__(self) -> str:
        return self.path
