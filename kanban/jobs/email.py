"""Every mail leaves through the background worker, never from the request that asked for it.

``EMAIL_BACKEND`` is ``QueuedEmailBackend``: whatever calls Django's email framework (an
invite link, Django's own password reset, the admin's test email) stores the message as an
``OutgoingEmail`` row and enqueues its task in the same transaction, so a request that
rolls back sends nothing and a committed one never loses its mail. The worker hands it to
the backend ``EMAIL_URL`` names (``KANBAN_EMAIL_BACKEND``). A run the mail server refuses
for now (a 4xx answer, no connection, a timeout) runs again after a growing wait,
``KANBAN_EMAIL_RETRY_SECONDS`` doubling, up to ``KANBAN_EMAIL_ATTEMPTS`` runs; a permanent
refusal (5xx) or the last run leaves the mail ``failed``, kept with every answer, for staff
to read in the admin and send again."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Final

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage, EmailMultiAlternatives, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from kanban.models import EmailStatus, OutgoingEmail
from storage.errors import invalid_argument

logger = logging.getLogger(__name__)

#: Runs each mail keeps in its log (the newest): enough to read a pattern, never unbounded.
LOG_KEPT: Final = 20
#: How long a sent mail's row (to whom, when, the answers; its words are gone) stays for
#: staff to look up; failed and waiting mail stays until it is sent.
SENT_KEPT: Final = timedelta(days=30)


class QueuedEmailBackend(BaseEmailBackend):
    """Django's email backend for the request side: queues, never connects."""

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        for message in email_messages:
            email_queue(message=message)
        return len(email_messages)


def email_queue(*, message: EmailMessage) -> OutgoingEmail:
    """Keeps ``message`` and enqueues its sending, in one transaction (the caller's, if any)."""
    if message.attachments:
        # A row keeps text; an attachment dropped in silence would be a mail that lies.
        raise ValueError("queued mail carries no attachments")
    html = ""
    if isinstance(message, EmailMultiAlternatives):
        html = next(
            (str(content) for content, kind in message.alternatives if kind == "text/html"), ""
        )
    with transaction.atomic():
        email = OutgoingEmail.objects.create(
            from_email=message.from_email or settings.DEFAULT_FROM_EMAIL,
            to=list(message.to),
            cc=list(message.cc),
            bcc=list(message.bcc),
            reply_to=list(message.reply_to),
            subject=str(message.subject),
            body=str(message.body),
            html=html,
            headers={str(k): str(v) for k, v in (message.extra_headers or {}).items()},
        )
        email_send_task.enqueue(email.pk)
    return email


def email_test(*, to: object) -> OutgoingEmail:
    """Queues a short test mail to ``to`` (the admin's "send a test email")."""
    if not isinstance(to, str) or not to.strip():
        raise invalid_argument("name an address to send the test email to", field="to")
    try:
        validate_email(to.strip())
    except ValidationError:
        raise invalid_argument(f"{to!r} is not an email address", field="to") from None
    # The same queue and worker as every mail: what it tests is the real path.
    return email_queue(
        message=EmailMessage(
            subject="Test email from Kanban",
            body="This is a test email from your Kanban server. It arrived, so email works.\n",
            to=[to.strip()],
        )
    )


def email_send_again(*, email_ids: Sequence[int]) -> int:
    """Failed mails are queued again for a new round of runs; answers how many."""
    again = 0
    with transaction.atomic():
        for email in OutgoingEmail.objects.select_for_update().filter(
            id__in=email_ids, status=EmailStatus.FAILED
        ):
            email.status, email.attempts, email.next_attempt_at = EmailStatus.QUEUED, 0, None
            email.save(update_fields=["status", "attempts", "next_attempt_at"])
            email_send_task.enqueue(email.pk)
            again += 1
    return again


@task()
def email_send_task(email_id: int) -> None:
    """Hands one queued mail to the mail server (``email_deliver``)."""
    email_deliver(email_id=email_id)


def _message(email: OutgoingEmail, connection: Any) -> EmailMultiAlternatives:
    message = EmailMultiAlternatives(
        subject=email.subject,
        body=email.body,
        from_email=email.from_email,
        to=email.to,
        cc=email.cc,
        bcc=email.bcc,
        reply_to=email.reply_to,
        headers=email.headers,
        connection=connection,
    )
    if email.html:
        message.attach_alternative(email.html, "text/html")
    return message


def server_answer(error: BaseException) -> tuple[str, bool]:
    """What the mail server said (or why none answered), and whether that is final."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        answers = [
            (code, f"{to}: {code} {_text(reply)}") for to, (code, reply) in error.recipients.items()
        ]
        final = bool(answers) and all(code >= 500 for code, _ in answers)
        return "; ".join(text for _, text in answers) or "every recipient refused", final
    if isinstance(error, smtplib.SMTPResponseException):
        return f"{error.smtp_code} {_text(error.smtp_error)}", error.smtp_code >= 500
    # No answer (refused connection, timeout, a dropped line) or a bug: worth another run.
    return f"{type(error).__name__}: {error}", False


def _text(reply: bytes | str) -> str:
    return reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)


def _retry_delay(attempts: int) -> timedelta:
    return timedelta(seconds=float(settings.KANBAN_EMAIL_RETRY_SECONDS) * 2 ** (attempts - 1))


def email_deliver(*, email_id: int) -> EmailStatus | None:
    """One run of one mail; answers its status after it (None: not queued, nothing done)."""
    # Claimed by one conditional update: a second task for the same mail finds it taken.
    claimed = OutgoingEmail.objects.filter(id=email_id, status=EmailStatus.QUEUED).update(
        status=EmailStatus.SENDING, attempts=F("attempts") + 1
    )
    if not claimed:
        return None
    email = OutgoingEmail.objects.get(id=email_id)
    now = timezone.now()
    try:
        with get_connection(settings.KANBAN_EMAIL_BACKEND, fail_silently=False) as connection:
            _message(email, connection).send()
    except Exception as error:
        answer, final = server_answer(error)
        return _failed(email, answer, final=final)
    email.status, email.sent_at, email.last_error = EmailStatus.SENT, now, ""
    email.body = email.html = ""
    email.next_attempt_at = None
    email.log = [*email.log, {"at": now.isoformat(), "ok": True, "answer": "sent"}][-LOG_KEPT:]
    email.save()
    return EmailStatus.SENT


def _failed(email: OutgoingEmail, answer: str, *, final: bool) -> EmailStatus:
    now = timezone.now()
    email.last_error = answer
    email.log = [*email.log, {"at": now.isoformat(), "ok": False, "answer": answer}][-LOG_KEPT:]
    last = final or email.attempts >= int(settings.KANBAN_EMAIL_ATTEMPTS)
    if last:
        email.status, email.next_attempt_at = EmailStatus.FAILED, None
        logger.error(
            "mail %s to %s failed for good after %d runs: %s",
            email.pk,
            ", ".join(email.to),
            email.attempts,
            answer,
        )
        email.save()
        return EmailStatus.FAILED
    delay = _retry_delay(email.attempts)
    email.status, email.next_attempt_at = EmailStatus.QUEUED, now + delay
    logger.warning(
        "mail %s to %s failed (run %d of %d), again in %s: %s",
        email.pk,
        ", ".join(email.to),
        email.attempts,
        settings.KANBAN_EMAIL_ATTEMPTS,
        delay,
        answer,
    )
    with transaction.atomic():
        email.save()
        email_send_task.using(run_after=email.next_attempt_at).enqueue(email.pk)
    return EmailStatus.QUEUED


def emails_prune(*, now: datetime | None = None) -> int:
    """Deletes the rows of mail sent more than ``SENT_KEPT`` ago; answers how many."""
    before = (now or timezone.now()) - SENT_KEPT
    deleted, _ = OutgoingEmail.objects.filter(status=EmailStatus.SENT, sent_at__lt=before).delete()
    return int(deleted)


def emails_resume() -> int:
    """Mails a worker left ``sending`` when it stopped (killed mid-run) are queued again: such
    a mail may reach its reader twice, never not at all. Only where no other worker may be
    sending one: the embedded default's worker calls it as it starts."""
    resumed = 0
    for email in OutgoingEmail.objects.filter(status=EmailStatus.SENDING):
        OutgoingEmail.objects.filter(id=email.pk).update(status=EmailStatus.QUEUED)
        email_send_task.enqueue(email.pk)
        resumed += 1
    return resumed
