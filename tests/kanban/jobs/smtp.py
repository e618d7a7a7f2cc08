"""A real SMTP server process for the email tests: aiosmtpd, started by the test on a free
port of 127.0.0.1, keeping what it receives in a Maildir the test reads.

Its handler (``Picky``) keeps every message, and answers as a mail server would to two kinds
of recipient: ``busy...@`` gets 451 (try later), ``bounce...@`` 550 (no such mailbox)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

from aiosmtpd.handlers import Mailbox
from aiosmtpd.smtp import SMTP, Envelope, Session


class Picky(Mailbox):
    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if address.startswith("busy"):
            return "451 4.3.2 Mailbox busy, try again later"
        if address.startswith("bounce"):
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class SmtpServer:
    """``start()`` it (again after ``stop()``: same port, same Maildir); ``messages()``."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.maildir = folder / "maildir"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}?timeout=5"

    def start(self) -> SmtpServer:
        command = [
            *(sys.executable, "-m", "aiosmtpd", "-n"),
            *("-l", f"127.0.0.1:{self.port}"),
            *("-c", f"{__name__}.Picky", str(self.maildir)),
        ]
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"the SMTP server did not start: {error}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the SMTP server did not listen within 15 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None

    def messages(self) -> list[EmailMessage]:
        """What arrived, oldest first (by when each file was written: Date has only seconds)."""
        files = [
            path
            for folder in ("new", "cur")
            if (self.maildir / folder).is_dir()
            for path in (self.maildir / folder).iterdir()
            if path.is_file()
        ]
        files.sort(key=lambda path: (path.stat().st_mtime_ns, path.name))
        found = [message_from_bytes(path.read_bytes(), policy=policy.default) for path in files]
        return [message for message in found if isinstance(message, EmailMessage)]

    def wait_for(self, count: int, *, seconds: float = 15) -> list[EmailMessage]:
        deadline = time.monotonic() + seconds
        while len(found := self.messages()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(found)} of {count} mails arrived in {seconds} s")
            time.sleep(0.05)
        return found


def text_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("plain",))
    return str(body.get_content()) if body is not None else ""


def html_of(message: EmailMessage) -> str:
    body = message.get_body(preferencelist=("html",))
    return str(body.get_content()) if body is not None else ""
