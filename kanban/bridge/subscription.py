"""What the hub holds per socket and subscription: the read rules a subscription filters
by, and the socket it writes to. Kept apart from the hub, which routes between them."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple, Protocol
from uuid import UUID

from kanban.access.grant_rules import Rule
from kanban.bridge import frames
from kanban.bridge.frames import Change
from kanban.bridge.overflow import RESYNC_CHANGE
from storage.knowledge_format import document_id_of

logger = logging.getLogger("kanban.bridge.hub")

#: What a change is: a KV key, or a Knowledge document (its body key).
ChangeKind = Literal["kv", "knowledge"]
KINDS: Final[frozenset[str]] = frozenset({"kv", "knowledge"})
#: Events a subscription may hold while its access is re-checked; past it they collapse
#: into one resync (a re-check stuck behind a slow database must not grow without bound).
MAX_HELD: Final = 1000


class ReadRules(NamedTuple):
    """The two read rules a subscription filters by; each kind of change by its own, so a KV
    grant never lets document writes through, nor a knowledge grant KV writes."""

    kv: Rule
    knowledge: Rule

    def allows(self, kind: str, key: str) -> bool:
        if kind == "kv":
            return self.kv.allows(key)
        # Knowledge rules name document ids; the change names the document's body key.
        return self.knowledge.allows(document_id_of(key))


class Socket(Protocol):
    user_id: int
    consumer_id: UUID

    async def send_text(self, text: str) -> None: ...

    def write_frame(self, frame: bytes) -> bool:
        """Write an encoded frame straight to the connection; False when this socket
        cannot (then ``send_text`` sends it)."""
        ...

    def backlog(self) -> int:
        """Bytes written to this socket that its peer has not taken yet (0 if unknown)."""
        ...

    async def recheck(self, subscriptions: Sequence[Subscription]) -> None: ...


@dataclass(eq=False)
class Subscription:
    socket: Socket
    alias: str | None
    target_id: UUID
    read: Rule
    knowledge_read: Rule
    #: While access is being re-checked, events wait here instead of being delivered.
    held: list[Change] | None = field(default=None)
    #: A watch (``kv.watch``): its events name the KV keys that changed, those its rule
    #: opens and that start with ``prefix``. Otherwise a subscribe (``{alias, revision}``).
    watch: bool = False
    prefix: str = ""

    @property
    def rules(self) -> ReadRules:
        return ReadRules(self.read, self.knowledge_read)

    def visible(self, changes: Iterable[Change]) -> tuple[Change, ...]:
        """The KV changes this watch may learn of, values and all, in order: the one rule
        that decides both whether a key is named and whether its value is pushed."""
        return tuple(
            change
            for change in changes
            if change.kind == "kv"
            and change.key.startswith(self.prefix)
            and self.read.allows(change.key)
        )


def event_texts(
    subs: Iterable[Subscription], changes: Sequence[Change]
) -> list[tuple[Socket, str]]:
    """Each subscription's event for ``changes`` of its target, encoded once per distinct
    text; a held subscription keeps them instead. ``RESYNC_CHANGE`` among them says events
    may have been lost: watches get ``resync: true``, subscribes ``revision: "resync"``."""
    encoded: dict[tuple[str | None, str], str] = {}
    #: One encoding per distinct visible set: watchers of one board under one grant share
    #: it, values and all.
    named: dict[tuple[str | None, tuple[Change, ...]], str] = {}
    sends: list[tuple[Socket, str]] = []
    resync = RESYNC_CHANGE in changes
    for sub in subs:
        if sub.held is not None:
            sub.held.extend(changes)
            if len(sub.held) > MAX_HELD:
                sub.held[:] = [RESYNC_CHANGE]
            continue
        if sub.watch:
            visible = sub.visible(changes)
            if resync:
                sends.append(
                    (sub.socket, frames.changes_event_text(sub.alias, visible, resync=True))
                )
            elif visible:
                text = named.get((sub.alias, visible))
                if text is None:
                    text = named[(sub.alias, visible)] = frames.changes_event_text(
                        sub.alias, visible
                    )
                sends.append((sub.socket, text))
            continue
        for change in changes:
            if change != RESYNC_CHANGE and (
                change.kind not in KINDS or not sub.rules.allows(change.kind, change.key)
            ):
                continue  # a prefix grant hides writes outside its prefixes
            text = encoded.get((sub.alias, change.revision))
            if text is None:
                event = frames.revision_event(sub.alias, change.revision)
                text = encoded[(sub.alias, change.revision)] = json.dumps(event)
            sends.append((sub.socket, text))
    return sends


async def send_each(sends: Iterable[tuple[Socket, str]]) -> None:
    """Send each text in turn. An ASGI websocket send only hands the frame to the server
    (daphne writes it into the connection's buffer), so awaiting one never waits on its peer;
    a task per subscriber (``gather``) cost a third of a 1,000-socket fan-out. A text going
    to many sockets is framed once and written to each connection as it is. One failing
    socket must not stop the others."""
    framed: dict[str, bytes] = {}
    for socket, text in sends:
        try:
            frame = framed.get(text)
            if frame is None:
                frame = framed[text] = frames.server_frame(text)
            if not socket.write_frame(frame):
                await socket.send_text(text)
        except Exception:
            logger.debug("send to a closing socket failed", exc_info=True)
