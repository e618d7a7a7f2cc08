"""Background jobs a person started (a Trello import), with their progress and outcome.

django-tasks' own result rows say whether a task ran, not how far it got nor what it made,
and hold the arguments only; a job is what its owner sees: status, done of total, the report
or the refusal. The uploaded bytes wait in a row of their own, so listing jobs never reads
them, and go once the job has finished."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class ImportJob(models.Model):
    #: A UUID, not a counter: the job page's address says nothing about other people's jobs,
    #: and its progress key is unique across databases (tests, several deployments).
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs"
    )
    kind = models.CharField(max_length=32, default="trello")
    file_name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    dry_run = models.BooleanField(default=False)
    #: How to run it, chosen by its owner: for a Trello import, ``mapping`` (Trello member id
    #: to a username here, from the page's mapping step).
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    done = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(default=0)
    #: Runs started, the first included: a run that failed unexpectedly is retried while
    #: this is below the bound (kanban/jobs/tasks.py).
    attempts = models.PositiveSmallIntegerField(default=0)
    report = models.JSONField(null=True, blank=True)
    error_code = models.CharField(max_length=32, blank=True)
    error_message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.file_name} ({self.status})"


class ImportUpload(models.Model):
    job = models.OneToOneField(
        ImportJob, on_delete=models.CASCADE, primary_key=True, related_name="upload"
    )
    #: The file as uploaded, zlib-compressed (kanban/jobs/imports.py).
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"upload of {self.job_id}"
