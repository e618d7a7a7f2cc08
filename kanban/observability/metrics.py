"""The worker's metrics, for Prometheus, in this process's own registry.

One endpoint per worker (``/metrics`` on each daphne process, behind a bearer token, never
routed by the public proxy) rather than prometheus_client's multiprocess mode: that mode
shares counters through memory-mapped files that must be cleaned between runs and cannot
carry gauges such as "sockets open now" faithfully for processes that die (a SIGKILLed
worker's files linger). Prometheus scrapes each worker and labels its series by instance;
sums across workers are a query (``sum by (...)``), as the README shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY: Final = CollectorRegistry(auto_describe=True)


# Every metric is made here, in REGISTRY: one made in prometheus_client's default registry
# would be served by no endpoint (ours reads REGISTRY) and would be a duplicate on reload.
def _counter(name: str, documentation: str, *labels: str) -> Counter:
    return Counter(name, documentation, labels, registry=REGISTRY)


def _gauge(name: str, documentation: str, *labels: str) -> Gauge:
    return Gauge(name, documentation, labels, registry=REGISTRY)


def _histogram(name: str, documentation: str, buckets: tuple[float, ...]) -> Histogram:
    return Histogram(name, documentation, buckets=buckets, registry=REGISTRY)


SOCKETS: Final = _gauge("kanban_bridge_sockets", "Bridge websockets open in this worker")
FRAMES: Final = _counter(
    "kanban_bridge_frames_total",
    "Bridge frames handled, by op and outcome (ok, or the refusal's error code)",
    "op",
    "outcome",
)
DELIVERY: Final = _histogram(
    "kanban_write_delivered_seconds",
    "From a write's commit to its event written to every local subscriber",
    (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
FANOUT: Final = _histogram(
    "kanban_hub_fanout_sockets",
    "Sockets one change event was sent to in this worker",
    (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000),
)
LAYER_FAILURES: Final = _counter(
    "kanban_channel_layer_failures_total",
    "Times the channel layer (Redis) was found down, by what found it",
    "what",
)
LAYER_RECOVERIES: Final = _counter(
    "kanban_channel_layer_recoveries_total",
    "Times the hub rejoined its groups and resynced its sockets after a layer failure",
)
LAYER_DROPS: Final = _counter(
    "kanban_hub_dropped_resyncs_total",
    "Times a project's subscribers in this worker were told to resync because change "
    "messages to it were dropped (a full or expired channel of the layer)",
)
SLOW_SOCKETS: Final = _counter(
    "kanban_bridge_slow_sockets_total",
    "Times a socket's peer left more than KANBAN_SOCKET_BUFFER_BYTES unread: its events "
    "were held back and its subscriptions resynced once it read again",
)
DB_POOL: Final = _gauge(
    "kanban_db_pool_connections",
    "PostgreSQL pool of this worker: connections in use, idle, and requests waiting",
    "state",
)
LOOP_POOL: Final = _gauge(
    "kanban_db_loop_pool_connections",
    "PostgreSQL pools of this worker's event loop, for the bridge's reads (storage/aio.py): "
    "connections in use, idle, and requests waiting",
    "state",
)
MCP_CALLS: Final = _counter(
    "kanban_mcp_calls_total",
    "MCP tool calls, by tool and outcome (ok, or the refusal's error code)",
    "tool",
    "outcome",
)
LOGIN_LOCKS: Final = _counter(
    "kanban_login_locks_total",
    "Sign-ins refused because the throttle locked the name or the address",
)


def sample_db_pool() -> None:
    """Read the pool's own gauges at scrape time (nothing to keep up to date meanwhile)."""
    from django.db import connection

    from storage import aio

    pool = getattr(connection, "pool", None) if connection.vendor == "postgresql" else None
    if pool is None:
        return
    _set_pool_gauge(DB_POOL, pool.get_stats())
    _set_pool_gauge(LOOP_POOL, aio.pool_stats())


def _set_pool_gauge(gauge: Gauge, stats: Mapping[str, int]) -> None:
    size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
    gauge.labels("in_use").set(size - available)
    gauge.labels("idle").set(available)
    gauge.labels("waiting").set(stats.get("requests_waiting", 0))
