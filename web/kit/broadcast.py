"""The one live-update mechanism of both apps: a single writer broadcasting to every stream.

A feed (the table's :class:`web.kit.events.StatusFeed`, the hub's
:class:`web.hub.feed.VenueFeed`) makes each message once, in one thread, and
writes it to every open stream itself: encoded once and compressed once per
content encoding (:class:`SharedCoder`), straight into each connection's output
buffer (:data:`web.kit.events.DIRECT_WRITE`); no thread is woken per viewer and no
queue is kept per page. A stream begins with its own opening, written when it
joins (:meth:`Broadcast.join`). A viewer too slow to take what is sent (more
than a backlog limit unsent, or a full queue where the server offers no direct
writer) is closed rather than slowing the others down; it reconnects and catches up.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable
from enum import Enum
from typing import Protocol

log = logging.getLogger(__name__)

#: Bytes a viewer may leave unsent before it is closed (it reconnects and catches up).
MAX_BACKLOG = 512 * 1024
#: Messages a stream served without a direct writer may hold unread before it is closed.
QUEUE_SIZE = 256
KEEPALIVE = b": keep-alive\n\n"


class Encoding(Enum):
    """A content encoding a stream can be sent in."""

    IDENTITY = "identity"
    GZIP = "gzip"
    DEFLATE = "deflate"


#: zlib's window bits for each compressed encoding (gzip and zlib wrappers).
_WBITS = {Encoding.GZIP: 31, Encoding.DEFLATE: 15}


def negotiate(accept_encoding: str | None) -> Encoding:
    """The encoding to send, from a request's ``Accept-Encoding`` (gzip first, then
    deflate; one listed with ``q=0`` is refused; identity when neither is accepted)."""
    accepted: dict[str, float] = {}
    for part in (accept_encoding or "").split(","):
        name, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if name.strip():
            accepted[name.strip().lower()] = q
    for encoding in (Encoding.GZIP, Encoding.DEFLATE):
        if accepted.get(encoding.value, accepted.get("*", 0.0)) > 0:
            return encoding
    return Encoding.IDENTITY


def compress_alone(encoding: Encoding, text: bytes) -> bytes:
    """``text`` as the start of a stream in ``encoding`` (header and all), flushed to a
    byte boundary, so that :class:`SharedCoder` output after a reset may follow it."""
    if encoding is Encoding.IDENTITY:
        return text
    c = zlib.compressobj(6, zlib.DEFLATED, _WBITS[encoding])
    return c.compress(text) + c.flush(zlib.Z_SYNC_FLUSH)


class SharedCoder:
    """One compressor whose output every stream of an encoding shares.

    Each message is compressed once with ``Z_SYNC_FLUSH`` (it arrives at once,
    whole) and keeps the history of earlier messages (a message compresses well
    against the previous ones). A stream joining later has no such history: before
    the first message it shares, the compressor is reset with ``Z_FULL_FLUSH``
    (the members take those bytes, the joiner does not need them), so what
    follows refers to nothing the joiner lacks. A deflate stream is a series of
    blocks, so the joiner's own opening (:func:`compress_alone`) and the shared
    blocks after a reset make one valid stream.
    """

    def __init__(self, encoding: Encoding) -> None:
        self.encoding = encoding
        self._c = (None if encoding is Encoding.IDENTITY
                   else zlib.compressobj(6, zlib.DEFLATED, _WBITS[encoding]))
        if self._c is not None:
            self._c.flush(zlib.Z_FULL_FLUSH)  # the header, which every stream has of its own

    def encode(self, text: bytes, joining: bool) -> tuple[bytes, bytes]:
        """(bytes for the streams already sharing, bytes for those joining now)."""
        if self._c is None:
            return text, text
        reset = self._c.flush(zlib.Z_FULL_FLUSH) if joining else b""
        body = self._c.compress(text) + self._c.flush(zlib.Z_SYNC_FLUSH)
        return reset + body, body


class Member:
    """One open stream as the writer sees it: where its bytes go, and whether it ended."""

    def __init__(self, encoding: Encoding, write: Callable[[bytes], None]) -> None:
        self.encoding = encoding
        #: Raises when the client has gone or takes too little of what it is sent.
        self.write = write
        self.done = threading.Event()


class Feed(Protocol):
    """What :class:`web.kit.events.StreamHub` serves: a feed streams join and leave."""

    def join(self, member: Member, last_event_id: str | None = None) -> None:
        """Write ``member`` its opening, then every message (from the feed's writer)."""

    def leave(self, member: Member) -> None:
        """Stop writing to ``member`` (its client left, or it was closed); idempotent."""

    def keepalive_due(self) -> None:
        """Send a keep-alive to every stream if nothing went for the keep-alive period."""

    def close_streams(self) -> None:
        """End every stream (the server stops)."""


class Broadcast:
    """The streams of one feed and the writing to them. Thread-safe.

    :attr:`lock` is held while a message is written, and while a stream joins: a feed
    that makes its openings under it (from what it sent last) gives each joiner every
    message exactly once.
    """

    def __init__(self, keepalive: float) -> None:
        self.keepalive = keepalive
        self.lock = threading.RLock()
        self._members: list[Member] = []
        self._joiners: list[Member] = []
        self._coders = {e: SharedCoder(e) for e in Encoding}
        self._last_out = time.monotonic()

    @property
    def subscribers(self) -> int:
        with self.lock:
            return len(self._members) + len(self._joiners)

    def join(self, member: Member, opening: bytes) -> None:
        """Write ``member`` its ``opening`` now (compressed alone), then every message."""
        with self.lock:
            try:
                member.write(compress_alone(member.encoding, opening))
            except Exception:  # the client left already
                member.done.set()
                return
            self._joiners.append(member)

    def leave(self, member: Member) -> None:
        with self.lock:
            for group in (self._members, self._joiners):
                if member in group:
                    group.remove(member)
        member.done.set()

    def close_streams(self) -> None:
        with self.lock:
            members, self._members, self._joiners = self._members + self._joiners, [], []
        for m in members:
            m.done.set()

    def keepalive_due(self) -> None:
        with self.lock:
            if time.monotonic() - self._last_out >= self.keepalive:
                self.deliver(KEEPALIVE)

    def deliver(self, text: bytes) -> None:
        """Write ``text`` to every stream, compressed once per encoding."""
        with self.lock:
            self._last_out = time.monotonic()
            joiners, self._joiners = self._joiners, []
            # Each member's bytes, found before the writes, so that a member costs one
            # write and nothing more (this runs for every stream at every message).
            writes: list[tuple[Member, bytes]] = []
            for e in {m.encoding for m in self._members} | {m.encoding for m in joiners}:
                shared, joining = self._coders[e].encode(
                    text, any(m.encoding is e for m in joiners))
                writes += [(m, shared) for m in self._members if m.encoding is e]
                writes += [(m, joining) for m in joiners if m.encoding is e]
            dropped = []
            for m, data in writes:
                try:
                    m.write(data)
                except Exception as exc:  # gone, or too slow: closed, never waited for
                    log.debug("stream closed: %s", exc)
                    dropped.append(m)
            self._members.extend(joiners)
            for m in dropped:
                self._members.remove(m)
                m.done.set()
