"""An https webhook connects to the address that was checked, yet speaks TLS to the URL's
host: the certificate is verified for the name (SNI and hostname check), not for the
address. A real TLS receiver on 127.0.0.1 with a certificate for ``localhost`` made here,
trusted through ``SSL_CERT_FILE`` as a deployment's own CA would be."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kanban.models import DeliveryStatus, Project, WebhookDelivery
from kanban.webhooks.delivery import webhook_deliver
from kanban.webhooks.service import webhook_create, webhook_test
from tests.factories import a_project

pytestmark = pytest.mark.django_db


def certificate_for(name: str, folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_receiver(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    """``(url, certificate)`` of an https receiver on 127.0.0.1 answering 204, its
    certificate for the name the test's parameter gives."""
    name = getattr(request, "param", "localhost")
    cert, key = certificate_for(name, tmp_path)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://localhost:{server.server_address[1]}/hook", cert
    server.shutdown()
    server.server_close()


def deliver(alice: Any, board: Project, url: str) -> WebhookDelivery:
    hook, _ = webhook_create(actor=alice, project_id=board.id, url=url, events=["card.added"])
    delivery = webhook_test(actor=alice, project_id=board.id, webhook_id=hook.id)
    webhook_deliver(delivery_id=delivery.id)
    return WebhookDelivery.objects.get(pk=delivery.pk)


@pytest.fixture
def board(alice: Any, settings: Any) -> Project:
    settings.KANBAN_WEBHOOKS_ALLOW_PRIVATE = True
    return a_project(name="Roadmap", owner=alice)


def test_a_certificate_for_the_urls_name_is_verified_and_delivered(
    alice: Any, board: Project, tls_receiver: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_receiver
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    done = deliver(alice, board, url)

    assert (done.status, done.response_code) == (DeliveryStatus.SUCCEEDED, 204), done.error


@pytest.mark.parametrize("tls_receiver", ["someone-else.example"], indirect=True)
def test_a_certificate_for_another_name_fails(
    alice: Any, board: Project, tls_receiver: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_receiver
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    done = deliver(alice, board, url)

    assert done.status == DeliveryStatus.RETRYING and done.response_code is None
    assert "hostname 'localhost' doesn't match 'someone-else.example'" in done.error


def test_an_untrusted_certificate_fails(
    alice: Any, board: Project, tls_receiver: tuple[str, Path]
) -> None:
    url, _ = tls_receiver

    done = deliver(alice, board, url)

    assert done.status == DeliveryStatus.RETRYING and "CERTIFICATE_VERIFY_FAILED" in done.error
