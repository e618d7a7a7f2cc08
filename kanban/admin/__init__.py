"""Django admin. Django's autodiscovery imports ``kanban.admin``; importing the modules
below registers their model admins: projects with their memberships, relationship
declarations and plugin files and the staff data viewers (``projects``, ``viewers``,
``data_viewers``), users (``users``), API tokens (``tokens``) and outgoing mail (``email``)."""

from __future__ import annotations

from django.contrib import admin

from kanban.admin import email, projects, tokens, users  # noqa: F401 - each registers its admin

# The data viewers are linked from the admin index too.
admin.site.index_template = "admin/kanban/index.html"
