"""Django admin: projects with their memberships, relationship declarations and plugin
files. Every save goes through the services (``kanban.projects.lifecycle``,
``kanban.access.memberships``, ``kanban.access.relationships``), so the admin validates like
the importer and publishes access-changed like every other change."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.forms.formsets import DELETION_FIELD_NAME
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import URLPattern, path
from django.utils.html import format_html
from django.utils.safestring import SafeString

from kanban.access.grant_rules import GRANT_FIELDS, Grant, Path, Rule
from kanban.access.memberships import membership_set
from kanban.access.relationships import (
    Declaration,
    RelationshipStatus,
    check_declarations,
    relationship_statuses,
    relationships_declare_back,
    relationships_set,
)
from kanban.admin import viewers as admin_viewers
from kanban.models import Membership, PluginFile, Project, Relationship
from kanban.projects.lifecycle import project_create, project_delete, project_update

# --- relationships ---------------------------------------------------------------------------


class PrefixesField(forms.CharField):
    """A rule's prefixes as a textarea, one prefix per line."""

    widget = forms.Textarea(attrs={"rows": 2, "cols": 40})

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("encoder", None)
        kwargs.pop("decoder", None)
        kwargs.pop("max_length", None)
        kwargs.update(required=False, strip=False)
        kwargs["help_text"] = kwargs.get("help_text") or "One prefix per line (mode 'prefixes')."
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, list | tuple):
            return [str(item) for item in value]
        lines = (value or "").replace("\r\n", "\n").split("\n")
        return [line for line in lines if line != ""]

    def has_changed(self, initial: Any, data: Any) -> bool:
        return list(initial or []) != self.to_python(data)


_STATUS_STYLE = {
    RelationshipStatus.CONFIRMED: ("#067647", "#dcfae6", "both projects declare each other"),
    RelationshipStatus.PENDING: (
        "#b54708",
        "#fef0c7",
        "the related project does not declare this project: no access either way",
    ),
    RelationshipStatus.TARGET_UNKNOWN: (
        "#b42318",
        "#fee4e2",
        "this server has no project with this UUID: no access either way",
    ),
}


def status_badge(status: RelationshipStatus) -> SafeString:
    color, background, explanation = _STATUS_STYLE[status]
    return format_html(
        '<span class="relationship-status relationship-status-{}" title="{}" '
        'style="color:{};background:{};padding:1px 8px;border-radius:9px;font-weight:600">'
        "{}</span>",
        status.name.lower().replace("_", "-"),
        explanation,
        color,
        background,
        status.value,
    )


class RelationshipForm(forms.ModelForm):
    declare_back = forms.BooleanField(
        required=False,
        initial=True,
        label="Declare it back",
        help_text="When you own the related project too, declare this project there "
        "(read: all, write: none), so the relationship is confirmed at once.",
    )

    class Meta:
        model = Relationship
        fields = (
            "alias",
            "related_project_id",
            *(f"{name}_{part}" for name in GRANT_FIELDS for part in ("mode", "prefixes")),
        )
        field_classes = {f"{name}_prefixes": PrefixesField for name in GRANT_FIELDS}

    def validate_unique(self) -> None:
        # Uniqueness (and every other rule) is checked on the whole declaration list by
        # check_declarations in the formset; row-by-row checks against the database would
        # refuse valid edits such as two rows swapping aliases.
        return None

    def declaration(self) -> Declaration:
        data = self.cleaned_data
        grant = Grant(
            **{
                name: Rule(mode=data[f"{name}_mode"], prefixes=tuple(data[f"{name}_prefixes"]))
                for name in GRANT_FIELDS
            }
        )
        return Declaration(alias=data["alias"], project_id=data["related_project_id"], grant=grant)


def _deleting(form: forms.BaseForm) -> bool:
    return bool(getattr(form, "cleaned_data", {}).get(DELETION_FIELD_NAME, False))


def _field_for(path: Path) -> str | None:
    """The form field a problem path (``(index, "alias")``, ``(index,
    "grantToRelatedProject", "knowledge", "read", "prefixes")``) points at."""
    if len(path) < 2:
        return None
    if path[1] == "alias":
        return "alias"
    if path[1] == "projectId":
        return "related_project_id"
    rest = path[2:]
    for name, json_path in GRANT_FIELDS.items():
        if tuple(rest[: len(json_path)]) == json_path:
            return (
                f"{name}_prefixes"
                if rest[len(json_path) :][:1] == ("prefixes",)
                else (f"{name}_mode")
            )
    return None


class RelationshipFormSet(BaseInlineFormSet):
    """Validates and saves the project's declarations as one list, through the service."""

    def clean(self) -> None:
        self._kept: list[tuple[RelationshipForm, Declaration]] = []
        if any(form.errors for form in self.forms if not _deleting(form)):
            return
        for form in self.forms:
            if _deleting(form) or not form.cleaned_data:
                continue
            self._kept.append((form, form.declaration()))
        declarations = [declaration for _, declaration in self._kept]
        for problem in check_declarations(project_id=self.instance.pk, declarations=declarations):
            field = _field_for(problem.path)
            if field is None:
                raise forms.ValidationError(problem.message)
            form = self._kept[int(problem.path[0])][0]
            form.add_error(field, problem.message)

    #: The admin's request (``RelationshipInline.get_formset``): who declares, and where
    #: to say what was declared back.
    request: HttpRequest | None = None

    def save(self, commit: bool = True) -> list[Relationship]:
        relationships_set(
            project=self.instance, declarations=[declaration for _, declaration in self._kept]
        )
        back = {d.project_id for form, d in self._kept if form.cleaned_data.get("declare_back")}
        if back and self.request is not None:
            written = relationships_declare_back(
                actor=self.request.user, project=self.instance, only=back
            )
            for other, alias in written:
                messages.info(
                    self.request,
                    f"Declared {self.instance.name} in {other.name} as “{alias}” "
                    "(read: all, write: none).",
                )
        kept = [form for form, _ in self._kept]
        # What the admin's change log records.
        self.new_objects = [form.instance for form in kept if form.instance.pk is None]
        self.changed_objects = [
            (form.instance, form.changed_data)
            for form in kept
            if form.instance.pk is not None and form.has_changed()
        ]
        self.deleted_objects = [
            form.instance
            for form in self.initial_forms
            if _deleting(form) and form.instance.pk is not None
        ]
        return []


class RelationshipInline(admin.StackedInline):
    model = Relationship
    form = RelationshipForm
    formset = RelationshipFormSet
    extra = 0
    readonly_fields = ("status",)
    verbose_name = "relationship declaration"
    fieldsets = (
        (None, {"fields": (("alias", "related_project_id"), "status", "declare_back")}),
        (
            "Grant to the related project",
            {
                "fields": tuple((f"{name}_mode", f"{name}_prefixes") for name in GRANT_FIELDS),
                "description": "What the related project may do in THIS project. Nothing "
                "is granted until the related project declares this one too.",
            },
        ),
    )

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **kwargs)
        return type(formset.__name__, (formset,), {"request": request})

    @admin.display(description="status")
    def status(self, obj: Relationship) -> str:
        if obj.pk is None:
            return "-"
        statuses = relationship_statuses(
            project_id=obj.project_id, related_project_ids=[obj.related_project_id]
        )
        return status_badge(statuses[obj.related_project_id])


# --- memberships -----------------------------------------------------------------------------


class MembershipFormSet(BaseInlineFormSet):
    """Saves the resulting set of roles through ``membership_set``, one change at a time."""

    def save(self, commit: bool = True) -> list[Membership]:
        project = self.instance
        wanted: dict[int, tuple[Model, str]] = {}
        for form in self.forms:
            if _deleting(form) or not form.cleaned_data:
                continue
            user = form.cleaned_data["user"]
            wanted[user.pk] = (user, form.cleaned_data["role"])
        current = {
            membership.user_id: membership
            for membership in Membership.objects.filter(project=project).select_related("user")
        }
        for user_id, membership in current.items():
            if user_id not in wanted:
                membership_set(user=membership.user, project=project, role=None)
        for user_id, (user, role) in wanted.items():
            if user_id not in current or current[user_id].role != role:
                membership_set(user=user, project=project, role=role)  # type: ignore[arg-type]
        self.new_objects = [form.instance for form in self.extra_forms if form.has_changed()]
        self.changed_objects = [
            (form.instance, form.changed_data)
            for form in self.initial_forms
            if form.has_changed() and not _deleting(form)
        ]
        self.deleted_objects = [form.instance for form in self.initial_forms if _deleting(form)]
        return []


class MembershipInline(admin.TabularInline):
    model = Membership
    formset = MembershipFormSet
    fields = ("user", "role")
    autocomplete_fields = ("user",)
    extra = 0


class PluginFileInline(admin.TabularInline):
    """Read only: plugin files change by importing the package again."""

    model = PluginFile
    fields = ("path", "content_type", "size", "sha256", "updated_at")
    readonly_fields = fields
    can_delete = False
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[PluginFile]:
        return super().get_queryset(request).defer("content")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- projects --------------------------------------------------------------------------------


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "type", "id", "updated_at")
    list_filter = ("type",)
    search_fields = ("name", "id")
    fields = ("id", "name", "type", "kanban_entry", "created_at", "updated_at")
    readonly_fields = ("id", "kanban_entry", "created_at", "updated_at")
    inlines = (MembershipInline, RelationshipInline, PluginFileInline)
    change_form_template = "admin/kanban/project/change_form.html"

    def get_urls(self) -> list[URLPattern]:
        """The staff data viewers, under ``/admin/kanban/project/`` and staff only."""
        wrap = self.admin_site.admin_view
        viewers = [
            path("kv-viewer/", wrap(admin_viewers.kv_viewer), name="kanban_kv_viewer"),
            path("kv-viewer/history/", wrap(admin_viewers.kv_history), name="kanban_kv_history"),
            path("token-usage/", wrap(admin_viewers.token_usage), name="kanban_token_usage"),
            path(
                "<uuid:project_id>/documents/",
                wrap(admin_viewers.documents_browser),
                name="kanban_documents",
            ),
            path(
                "<uuid:project_id>/documents/<str:document_id>/",
                wrap(admin_viewers.document_view),
                name="kanban_document",
            ),
        ]
        return viewers + super().get_urls()

    def save_model(self, request: HttpRequest, obj: Project, form: Any, change: bool) -> None:
        if change:
            project_update(project=obj, name=obj.name, type=obj.type)
            return
        # The service creates the row (with the id the form showed); the admin's instance
        # then reads it back, as saved, for the inline formsets and the change log.
        created = project_create(name=obj.name, type=obj.type, project_id=obj.id)
        obj.id = created.id
        obj.refresh_from_db()

    def delete_model(self, request: HttpRequest, obj: Project) -> None:
        project_delete(project=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        for project in queryset:
            project_delete(project=project)
