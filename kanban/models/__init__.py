"""The kanban app's models, one module per concern, re-exported for Django."""

from __future__ import annotations

from kanban.models.configurations import Configuration
from kanban.models.email import EmailStatus, OutgoingEmail
from kanban.models.invites import Invite
from kanban.models.jobs import ImportJob, ImportUpload, JobStatus
from kanban.models.notifications import Notification
from kanban.models.offers import MembershipOffer
from kanban.models.preferences import ColorScheme, EmailNotifications, Preference
from kanban.models.projects import (
    DEFAULT_KANBAN_ENTRY,
    ROLE_RANK,
    Membership,
    PluginFile,
    Project,
    ProjectType,
    Relationship,
    Role,
    RuleMode,
)
from kanban.models.tokens import ApiToken, TokenScope
from kanban.models.webhooks import DeliveryStatus, Webhook, WebhookDelivery, WebhookEvent

__all__ = [
    "DEFAULT_KANBAN_ENTRY",
    "ROLE_RANK",
    "ApiToken",
    "ColorScheme",
    "Configuration",
    "DeliveryStatus",
    "EmailNotifications",
    "EmailStatus",
    "ImportJob",
    "ImportUpload",
    "Invite",
    "JobStatus",
    "Membership",
    "MembershipOffer",
    "Notification",
    "OutgoingEmail",
    "PluginFile",
    "Preference",
    "Project",
    "ProjectType",
    "Relationship",
    "Role",
    "RuleMode",
    "TokenScope",
    "Webhook",
    "WebhookDelivery",
    "WebhookEvent",
]
