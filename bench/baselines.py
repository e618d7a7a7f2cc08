"""Bare ``websockets`` servers the bridge is compared with (run as child processes).

    python -m bench.baselines echo PORT
    python -m bench.baselines broadcast PORT REDIS_URL CHANNEL

``broadcast`` is the fan-out floor: one Redis subscription per process, and every message
on it sent as-is to every connected socket.
"""

from __future__ import annotations

import asyncio
import sys

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


def main(argv: list[str]) -> None:
    kind, port = argv[0], int(argv[1])
    if kind == "echo":
        asyncio.run(echo(port))
    elif kind == "broadcast":
        asyncio.run(fan_out(port, argv[2], argv[3]))
    else:
        raise SystemExit(f"unknown baseline {kind!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
