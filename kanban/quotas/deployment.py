"""One person's share of the whole deployment, however many workers serve it.

Each worker also counts per process (``kanban.quotas.worker``, and the search slots of
``kanban.data.knowledge``); on the embedded default there is one process and that count is
the deployment's. With ``REDIS_URL`` the same limits are counted in Redis as well, so
forty sockets on each of three workers are still ``KANBAN_SOCKETS_PER_USER`` in all:

- open sockets and running searches are *slots*: a sorted set per person whose members
  expire unless refreshed, so a worker that dies without closing gives its slots back;
- the message rate is one token bucket per person, which each worker draws from in leases
  of a sixteenth of the burst: one round trip per lease, never one per message, and at
  most a lease per worker beyond the limit.

When Redis does not answer, the per-process limits still hold and nothing more is refused:
an outage must not close every board (the hub resyncs them once Redis is back). Nor may it
slow every frame: after a failure Redis is left alone for ``RETRY_SECONDS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import redis
import redis.asyncio
from django.conf import settings

from kanban.observability.metrics import LAYER_FAILURES
from storage.errors import ErrorCode, KanbanError
from storage.loops import PerLoop

logger = logging.getLogger(__name__)

#: A socket slot lives this long unless its worker refreshes it (every third of it).
SOCKET_SLOT_SECONDS: Final = 60
#: Longer than any search may run: a search's slot is not refreshed.
SEARCH_SLOT_SECONDS: Final = 300
#: Redis answers these in well under a millisecond; past this it counts as down.
TIMEOUT_SECONDS: Final = 2.0
#: After a failure, how long per-worker limits alone apply before Redis is tried again.
RETRY_SECONDS: Final = 5.0

# KEYS[1] a person's slots; ARGV: cap, member, lifetime (s). 1 when the slot is taken.
_TAKE_SLOT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tostring(now))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], tostring(now + tonumber(ARGV[3])), ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]) + 1)
return 1
"""
# KEYS: slot sets, one per person; ARGV[1] lifetime, then for each key the number of its
# members and the members: keeps each slot alive. One ZADD per person, not per socket, so
# the keep-alive follows the people a worker holds (a person's 32 tabs are one command).
_REFRESH_SLOTS: Final = """
local t = redis.call('TIME')
local expires = tostring(tonumber(t[1]) + tonumber(t[2]) / 1000000 + tonumber(ARGV[1]))
local at = 2
for _, key in ipairs(KEYS) do
  local count = tonumber(ARGV[at])
  local batch = {}
  for i = 1, count do
    batch[#batch + 1] = expires
    batch[#batch + 1] = ARGV[at + i]
    if #batch >= 1000 or i == count then
      redis.call('ZADD', key, 'XX', unpack(batch))
      batch = {}
    end
  end
  redis.call('EXPIRE', key, tonumber(ARGV[1]) + 1)
  at = at + count + 1
end
return #KEYS
"""
# KEYS[1] a person's bucket; ARGV: rate, burst, tokens wanted. Returns the tokens granted.
_TAKE_TOKENS: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst, want = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(held[1]) or burst
local stamp = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local granted = math.min(want, math.floor(tokens))
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - granted), 'stamp', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return granted
"""


_down_until = 0.0


def shared() -> bool:
    """Whether limits are counted for the deployment in Redis (not only per process): with
    ``REDIS_URL``, unless Redis just failed."""
    return bool(settings.REDIS_URL) and time.monotonic() >= _down_until


def _key(kind: str, user_id: int) -> str:
    return f"{settings.KANBAN_REDIS_PREFIX}:quota:{kind}:{user_id}"


def _failed(what: str) -> None:
    global _down_until
    logger.warning("quota counter unavailable (%s); per-worker limits only", what, exc_info=True)
    LAYER_FAILURES.labels("quota").inc()
    _down_until = time.monotonic() + RETRY_SECONDS


@dataclass
class _LoopState:
    """What one event loop (one worker) holds: its client, its sockets' slots, its leases."""

    client: redis.asyncio.Redis
    take_slot: Any
    refresh_slots: Any
    take_tokens: Any
    sockets: dict[str, int] = field(default_factory=dict)  # slot member -> user id
    leases: dict[int, int] = field(default_factory=dict)  # user id -> tokens in hand
    #: One lease request at a time per person: fifty sockets of one person asking at once
    #: would each take a sixteenth of the bucket and leave the last ones nothing.
    leasing: dict[int, asyncio.Lock] = field(default_factory=dict)
    refresher: asyncio.Task[None] | None = None


def _new_state() -> _LoopState:
    client = redis.asyncio.Redis.from_url(
        settings.REDIS_URL,
        socket_timeout=TIMEOUT_SECONDS,
        socket_connect_timeout=TIMEOUT_SECONDS,
    )
    return _LoopState(
        client,
        client.register_script(_TAKE_SLOT),
        client.register_script(_REFRESH_SLOTS),
        client.register_script(_TAKE_TOKENS),
    )


_states: Final = PerLoop(_new_state)


def _state() -> _LoopState:
    return _states.get()


async def _keep_slots_alive(state: _LoopState) -> None:
    while True:
        await asyncio.sleep(SOCKET_SLOT_SECONDS / 3)
        if state.sockets and shared():
            await _refresh_slots(state)


async def _refresh_slots(state: _LoopState) -> None:
    by_user: dict[int, list[str]] = {}
    for member, user_id in state.sockets.items():
        by_user.setdefault(user_id, []).append(member)
    args: list[Any] = [SOCKET_SLOT_SECONDS]
    for members in by_user.values():
        args += [len(members), *members]
    try:
        await state.refresh_slots(keys=[_key("sockets", u) for u in by_user], args=args)
    except Exception:
        _failed("refreshing socket slots")


async def socket_open(*, user_id: int) -> str | None:
    """Take one of this person's socket slots: its handle, or None past the cap. A handle
    is returned (nothing counted) without Redis, or when Redis does not answer."""
    member = uuid.uuid4().hex
    if not shared():
        return member
    state = _state()
    cap = int(settings.KANBAN_SOCKETS_PER_USER)
    try:
        taken = await state.take_slot(
            keys=[_key("sockets", user_id)], args=[cap, member, SOCKET_SLOT_SECONDS]
        )
    except Exception:
        _failed("taking a socket slot")
        return member
    if not taken:
        return None
    state.sockets[member] = user_id
    if state.refresher is None or state.refresher.done():
        state.refresher = asyncio.get_running_loop().create_task(_keep_slots_alive(state))
    return member


async def socket_close(*, user_id: int, handle: str) -> None:
    if not settings.REDIS_URL:
        return
    state = _state()
    if state.sockets.pop(handle, None) is None:
        return  # never counted in Redis
    if user_id not in state.sockets.values():
        state.leases.pop(user_id, None)
        state.leasing.pop(user_id, None)
    if not shared():
        return  # it expires by itself
    try:
        await state.client.zrem(_key("sockets", user_id), handle)
    except Exception:
        _failed("giving a socket slot back")  # it expires by itself


def user_rate() -> tuple[float, float]:
    """A person's message rate and burst, across all their sockets: by default four
    sockets' worth of the per-socket rate."""
    rate = settings.KANBAN_BRIDGE_USER_RATE or 4 * settings.KANBAN_BRIDGE_RATE
    burst = settings.KANBAN_BRIDGE_USER_BURST or 4 * settings.KANBAN_BRIDGE_BURST
    return float(rate), float(burst)


async def message_take(*, user_id: int) -> bool:
    """One message from this person's deployment-wide bucket."""
    if not shared():
        return True
    state = _state()
    if state.leases.get(user_id, 0) < 1:
        async with state.leasing.setdefault(user_id, asyncio.Lock()):
            if state.leases.get(user_id, 0) < 1:  # nobody leased while this one waited
                rate, burst = user_rate()
                try:
                    granted = await state.take_tokens(
                        keys=[_key("messages", user_id)],
                        args=[rate, burst, max(1, int(burst // 16))],
                    )
                except Exception:
                    _failed("taking message tokens")
                    return True
                state.leases[user_id] = int(granted)
            if state.leases[user_id] < 1:
                return False
    state.leases[user_id] -= 1
    return True


_sync_clients: dict[str, tuple[redis.Redis, Any]] = {}
_sync_lock = threading.Lock()


def _sync_client_and_script() -> tuple[redis.Redis, Any]:
    """For worker threads: one client per URL, which redis-py lets threads share."""
    with _sync_lock:
        url = str(settings.REDIS_URL)
        if url not in _sync_clients:
            client = redis.Redis.from_url(
                url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS
            )
            _sync_clients[url] = client, client.register_script(_TAKE_SLOT)
        return _sync_clients[url]


@contextlib.contextmanager
def search_slot(*, user_id: int) -> Iterator[bool]:
    """Hold one of this person's deployment-wide search slots while the block runs; yields
    False (nothing held) past ``KANBAN_SEARCHES_PER_USER``. Runs in a worker's thread."""
    if not shared():
        yield True
        return
    client, take = _sync_client_and_script()
    key, member = _key("searches", user_id), uuid.uuid4().hex
    cap = int(settings.KANBAN_SEARCHES_PER_USER)
    try:
        taken = bool(take(keys=[key], args=[cap, member, SEARCH_SLOT_SECONDS]))
    except Exception:
        _failed("taking a search slot")
        yield True
        return
    try:
        yield taken
    finally:
        if taken:
            try:
                client.zrem(key, member)
            except Exception:
                _failed("giving a search slot back")  # it expires by itself


# --- write bytes -------------------------------------------------------------------------
#
# What one person writes (values and documents, by their JSON size), however many workers
# and transports it comes through: a token bucket in bytes, in Redis with ``REDIS_URL``
# (leased a sixteenth of the burst at a time, as messages are), per process otherwise or
# while Redis is down. The project quota bounds what is kept; this bounds the churn (each
# write also keeps a version, rewrites indexes and the WAL) one person can cause.

_sync_token_scripts: dict[str, Any] = {}
_byte_leases: dict[int, int] = {}  # user id -> bytes in hand, leased from Redis
_local_bytes: dict[int, tuple[float, float]] = {}  # user id -> (bytes, monotonic stamp)
_bytes_lock = threading.Lock()


def write_bytes_rate() -> tuple[float, float]:
    """A person's write rate and burst in bytes (``KANBAN_WRITE_BYTES_PER_USER``, ``_BURST``)."""
    return float(settings.KANBAN_WRITE_BYTES_PER_USER), float(settings.KANBAN_WRITE_BYTES_BURST)


def write_bytes_take(*, user_id: int, size: int) -> bool:
    """Take ``size`` bytes from this person's write budget: False, nothing taken, past it.
    Runs in a worker's thread (every write does)."""
    rate, burst = write_bytes_rate()
    if shared():
        taken = _take_shared_bytes(user_id, size, rate, burst)
        if taken is not None:
            return taken
    return _take_local_bytes(user_id, size, rate, burst)


def _take_shared_bytes(user_id: int, size: int, rate: float, burst: float) -> bool | None:
    """From the deployment's bucket through this process's lease; None when Redis failed."""
    with _bytes_lock:
        held = _byte_leases.get(user_id, 0)
        if held < size:
            client, _ = _sync_client_and_script()
            url = str(settings.REDIS_URL)
            if url not in _sync_token_scripts:
                _sync_token_scripts[url] = client.register_script(_TAKE_TOKENS)
            want = max(size - held, int(burst // 16))
            try:
                granted = _sync_token_scripts[url](
                    keys=[_key("write-bytes", user_id)], args=[rate, burst, want]
                )
            except Exception:
                _failed("taking write bytes")
                return None
            held += int(granted)
        if held < size:
            _byte_leases[user_id] = held  # kept for the next write, not given back
            return False
        _byte_leases[user_id] = held - size
        return True


def _take_local_bytes(user_id: int, size: int, rate: float, burst: float) -> bool:
    with _bytes_lock:
        now = time.monotonic()
        tokens, stamp = _local_bytes.get(user_id, (burst, now))
        tokens = min(burst, tokens + (now - stamp) * rate)
        taken = tokens >= size
        _local_bytes[user_id] = (tokens - size if taken else tokens, now)
        return taken


def check_write_bytes(*, user: Any, size: int) -> None:
    """Refuse (``rate_limited``, before anything is written) a write past its writer's
    write-bytes rate."""
    if not write_bytes_take(user_id=int(user.pk), size=size):
        rate, _ = write_bytes_rate()
        raise KanbanError(
            ErrorCode.RATE_LIMITED,
            f"you are writing more than {int(rate)} bytes a second; retry later",
        )


def write_bytes_reset(*, shared_too: bool = False) -> None:
    """Forget this process's budgets, and with ``shared_too`` the deployment's (tests: each
    starts with full ones)."""
    with _bytes_lock:
        _byte_leases.clear()
        _local_bytes.clear()
    if shared_too and settings.REDIS_URL:
        client, _ = _sync_client_and_script()
        for key in client.scan_iter(match=_key("write-bytes", 0).removesuffix("0") + "*"):
            client.delete(key)
