"""EMAIL_URL is the one email setting, parsed strictly: a mistake in it stops the process at
start with a message naming it, instead of a server that silently sends nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from kanban.environment import email_from_url
from kanban.settings import BASE_DIR


def test_a_submission_url_names_every_part() -> None:
    parsed = email_from_url("submission://mailer:s%40cret@smtp.example.com?timeout=7")
    assert parsed["EMAIL_BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert (parsed["EMAIL_HOST"], parsed["EMAIL_PORT"]) == ("smtp.example.com", 587)
    assert (parsed["EMAIL_HOST_USER"], parsed["EMAIL_HOST_PASSWORD"]) == ("mailer", "s@cret")
    assert parsed["EMAIL_USE_TLS"] and not parsed["EMAIL_USE_SSL"]
    assert parsed["EMAIL_TIMEOUT"] == 7


def test_smtp_with_ssl_the_console_and_a_from_address() -> None:
    ssl = email_from_url("smtp://smtp.example.com:465?ssl=on&_default_from_email=k@example.com")
    assert ssl["EMAIL_USE_SSL"] and not ssl["EMAIL_USE_TLS"] and ssl["EMAIL_PORT"] == 465
    assert ssl["DEFAULT_FROM_EMAIL"] == "k@example.com"
    assert email_from_url("console://")["EMAIL_BACKEND"].endswith("console.EmailBackend")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("smpt://smtp.example.com", "scheme 'smpt' is not one of"),
        ("smtp://smtp.example.com?tsl=on", "unknown option 'tsl'"),
        ("smtp://smtp.example.com?tls=maybe", "tls='maybe' is neither on nor off"),
        ("smtp://smtp.example.com?tls=on&ssl=on", "pick one"),
        ("smtp://smtp.example.com:25x", "Port could not be cast"),
        ("smtp://smtp.example.com?timeout=soon", "timeout='soon' is not whole seconds"),
        ("submission://:587", "an SMTP URL names its host"),
    ],
)
def test_a_mistake_is_an_error_that_names_it(url: str, says: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL: .*" + says.replace("(", r"\(")):
        email_from_url(url)


def start_with(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        env={**environment, "DJANGO_SETTINGS_MODULE": "kanban.settings", **env},
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_process_does_not_start_with_a_bad_url_or_the_old_settings() -> None:
    bad = start_with(EMAIL_URL="smtp://mail.example.com?tsl=1")
    assert bad.returncode != 0 and "EMAIL_URL: unknown option 'tsl'" in bad.stderr
    old = start_with(EMAIL_HOST="mail.example.com")
    assert old.returncode != 0 and "replaced by one EMAIL_URL" in old.stderr
    assert start_with(EMAIL_URL="submission://u:p@mail.example.com").stdout.strip() == "started"


def test_unset_it_is_the_console_in_development_and_off_in_production() -> None:
    show = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.KANBAN_EMAIL_BACKEND, settings.KANBAN_EMAIL_ENABLED)"
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    for mode, enabled in (("development", "True"), ("production", "False")):
        answer = subprocess.run(
            [sys.executable, "-c", show],
            env={
                **environment,
                "DJANGO_SETTINGS_MODULE": "kanban.settings",
                "KANBAN_MODE": mode,
                "DEBUG": "0",
                "SECRET_KEY": "k7Qz-" + "".join(chr(65 + n % 26) + str(n) for n in range(30)),
            },
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert answer.stdout.split() == [
            "django.core.mail.backends.console.EmailBackend",
            enabled,
        ], answer.stderr
