"""Whose address a request is: the connection's, unless a proxy the deployment names says
otherwise: a client's own X-Forwarded-For must not pass for another address."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from kanban.environment import env_networks
from kanban.quotas.client_address import client_address


def address(peer: str, forwarded: str | None = None) -> str | None:
    meta = {"REMOTE_ADDR": peer}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(RequestFactory().get("/", **meta))


@pytest.fixture
def behind_nginx(settings: Any) -> None:
    settings.KANBAN_TRUSTED_PROXIES = ["10.0.0.0/8", "::1/128"]


def test_with_no_proxy_named_a_clients_header_is_ignored() -> None:
    assert address("203.0.113.66", "198.51.100.7") == "203.0.113.66"


def test_a_peer_that_is_no_named_proxy_is_the_client(behind_nginx: None) -> None:
    assert address("203.0.113.66", "198.51.100.7") == "203.0.113.66"


def test_behind_a_named_proxy_the_address_it_appended_counts(behind_nginx: None) -> None:
    assert address("10.0.0.5", "198.51.100.7") == "198.51.100.7"
    # What the client wrote is further left, and proves nothing.
    assert address("10.0.0.5", "198.51.100.7, 203.0.113.66") == "203.0.113.66"


def test_a_chain_of_named_proxies_is_walked_from_the_right(behind_nginx: None) -> None:
    assert address("10.0.0.5", "203.0.113.66, 10.1.2.3, 10.0.0.9") == "203.0.113.66"
    assert address("::1", "[2001:db8::7]:443") == "2001:db8::7"
    assert address("::ffff:10.0.0.5", "198.51.100.7:5555") == "198.51.100.7"


def test_a_header_no_proxy_of_ours_wrote_leaves_the_proxy_as_the_address(
    behind_nginx: None,
) -> None:
    assert address("10.0.0.5", "unknown") == "10.0.0.5"
    assert address("10.0.0.5", "") == "10.0.0.5"
    assert address("10.0.0.5", "10.0.0.7") == "10.0.0.5", "only proxies: the nearest one"


def test_no_peer_address_is_none() -> None:
    assert address("") is None


def test_a_proxy_list_that_names_no_network_stops_the_process(monkeypatch: Any) -> None:
    monkeypatch.setenv("KANBAN_TRUSTED_PROXIES", "10.0.0.0/8, nginx")
    with pytest.raises(ImproperlyConfigured, match="KANBAN_TRUSTED_PROXIES: 'nginx'"):
        env_networks("KANBAN_TRUSTED_PROXIES", [])
    monkeypatch.setenv("KANBAN_TRUSTED_PROXIES", "10.0.0.1, ::1")
    assert env_networks("KANBAN_TRUSTED_PROXIES", []) == ["10.0.0.1/32", "::1/128"]
