"""``python -m kanban.jobs.worker``: django-tasks-db's worker (``manage.py db_worker``) as the
child ``manage.py serve`` starts beside daphne, ending with it.

Its stdin is a pipe whose other end the ``serve`` process keeps open across its exec into
daphne: when daphne ends, however it ends (Ctrl+C, a signal, a crash), the pipe closes and
the worker stops as ``db_worker`` does on SIGTERM, finishing the task it is running first.
A deployment runs ``manage.py db_worker`` itself instead (README, Operations)."""

from __future__ import annotations

import os
import signal
import threading
from typing import Final

STDIN: Final = 0


def _stop_when_serve_ends() -> None:
    # Nothing is ever written: the read returns b"" when the pipe closes. The raw descriptor,
    # not sys.stdin: a daemon thread blocked inside the buffered reader holds its lock, and
    # the interpreter's shutdown then dies on it ("could not acquire lock for <stdin>").
    while os.read(STDIN, 1024):
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kanban.settings")
    import django
    from django.core.management import call_command

    django.setup()
    from kanban.jobs.email import emails_resume
    from kanban.jobs.tasks import import_jobs_resume
    from kanban.webhooks.delivery import webhook_deliveries_resume

    # serve's is the embedded default's one worker: a job still running was this worker's
    # before it was stopped (serve killed, the machine went down); so is a mail being sent.
    import_jobs_resume()
    emails_resume()
    webhook_deliveries_resume()
    threading.Thread(target=_stop_when_serve_ends, name="serve-watch", daemon=True).start()
    # No reloader: it would run the worker in a grandchild the pipe does not reach.
    call_command("db_worker", "--no-reload", "--no-startup-delay", verbosity=1)


if __name__ == "__main__":
    main()
