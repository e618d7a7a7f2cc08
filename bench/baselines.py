"""Bare ``websockets`` servers the bridge is compared with (run as child processes).

    python -m bench.baselines echo PORT
    python -m bench.baselines broadcast PORT REDIS_URL CHANNEL
    python -m bench.baselines read PORT DATABASE_URL WORK_JSON

``broadcast`` is the fan-out floor: one Redis subscription per process, and every message
on it sent as-is to every connected socket.

``read`` is the request floor: for every frame it runs the bridge's own access statement and
its own KV read with psycopg (one connection per socket, prepared statements, no Django),
then sends a reply the size of the bridge's. ``WORK_JSON`` carries both statements and their
parameters, taken from the server code by the bench so the floor cannot drift from it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve


async def echo(port: int) -> None:
    async def handler(socket: ServerConnection) -> None:
        async for message in socket:
            await socket.send(message)

    async with serve(handler, "127.0.0.1", port, compression=None, max_queue=None):
        await asyncio.Future()


async def fan_out(port: int, redis_url: str, channel: str) -> None:
    import redis.asyncio as redis

    sockets: set[ServerConnection] = set()

    async def handler(socket: ServerConnection) -> None:
        sockets.add(socket)
        try:
            await socket.wait_closed()
        finally:
            sockets.discard(socket)

    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    await pubsub.subscribe(channel)
    async with serve(handler, "127.0.0.1", port, compression=None):
        async for message in pubsub.listen():
            if message["type"] == "message":
                broadcast(sockets, message["data"].decode())


async def read(port: int, database_url: str, work: dict[str, Any]) -> None:
    import psycopg

    access_sql, access_params = work["access"], tuple(work["access_params"])
    kv_sql, kv_namespace = work["kv"], work["namespace"]

    async def handler(socket: ServerConnection) -> None:
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as db:
            async for message in socket:
                frame = json.loads(message)
                async with db.cursor() as cursor:
                    await cursor.execute(access_sql, access_params, prepare=True)
                    if await cursor.fetchone() is None:
                        raise RuntimeError("the floor's access statement found no project")
                    await cursor.execute(kv_sql, (kv_namespace, frame["key"]), prepare=True)
                    row = await cursor.fetchone()
                reply: dict[str, Any] = {"v": 1, "id": frame["id"], "ok": True}
                if row is not None:
                    reply["result"] = {
                        "found": True,
                        "value": json.loads(row[1]),
                        "revision": row[0],
                    }
                await socket.send(json.dumps(reply))

    async with serve(handler, "127.0.0.1", port, compression=None, max_queue=None):
        await asyncio.Future()


def main(argv: list[str]) -> None:
    kind, port = argv[0], int(argv[1])
    if kind == "echo":
        asyncio.run(echo(port))
    elif kind == "broadcast":
        asyncio.run(fan_out(port, argv[2], argv[3]))
    elif kind == "read":
        asyncio.run(read(port, argv[2], json.loads(argv[3])))
    else:
        raise SystemExit(f"unknown baseline {kind!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
