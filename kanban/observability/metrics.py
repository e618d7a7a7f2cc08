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

SOCKETS: Final = Gauge(
    "kanban_bridge_sockets", "Bridge websockets open in this worker", registry=REGISTRY
)
FRAMES: Final = Counter(
    "kanban_bridge_frames_total",
    "Bridge frames handled, by op and outcome (ok, or the refusal's error code)",
    ["op", "outcome"],
    registry=REGISTRY,
)
DELIVERY: Final = Histogram(
    "kanban_write_delivered_seconds",
    "From a write's commit to its event written to every local subscriber",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
    registry=REGISTRY,
)
FANOUT: Final = Histogram(
    "kanban_hub_fanout_sockets",
    "Sockets one change event was sent to in this worker",
    buckets=(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000),
    registry=REGISTRY,
)
LAYER_FAILURES: Final = Counter(
    "kanban_channel_layer_failures_total",
    "Times the channel layer (Redis) was found down, by what found it",
    ["what"],
    registry=REGISTRY,
)
LAYER_RECOVERIES: Final = Counter(
    "kanban_channel_layer_recoveries_total",
    "Times the hub rejoined its groups and resynced its sockets after a layer failure",
    registry=REGISTRY,
)
LAYER_DROPS: Final = Counter(
    "kanban_hub_dropped_resyncs_total",
    "Times a project's subscribers in this worker were told to resync because change "
    "messages to it were dropped (a full or expired channel of the layer)",
    registry=REGISTRY,
)
SLOW_SOCKETS: Final = Counter(
    "kanban_bridge_slow_sockets_total",
    "Times a socket's peer left more than KANBAN_SOCKET_BUFFER_BYTES unread: its events "
    "were held back and its subscriptions resynced once it read again",
    registry=REGISTRY,
)
DB_POOL: Final = Gauge(
    "kanban_db_pool_connections",
    "PostgreSQL pool of this worker: connections in use, idle, and requests waiting",
    ["state"],
    registry=REGISTRY,
)
LOOP_POOL: Final = Gauge(
    "kanban_db_loop_pool_connections",
    "PostgreSQL pools of this worker's event loop, for the bridge's reads (storage/aio.py): "
    "connections in use, idle, and requests waiting",
    ["state"],
    registry=REGISTRY,
)
MCP_CALLS: Final = Counter(
    "kanban_mcp_calls_total",
    "MCP tool calls, by tool and outcome (ok, or the refusal's error code)",
    ["tool", "outcome"],
    registry=REGISTRY,
)
LOGIN_LOCKS: Final = Counter(
    "kanban_login_locks_total",
    "Sign-ins refused because the throttle locked the name or the address",
    registry=REGISTRY,
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
