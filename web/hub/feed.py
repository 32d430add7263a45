"""The hub's live feed: what changed at the venue, for every open page's event stream.

The ingest calls :meth:`VenueFeed.changed` after the ledger committed a
table's message; that only marks the table. A sender thread reads the marked
tables' rows again and sends, as one message, only the fields that changed
since the last message (a *patch*), at most once every ``period`` seconds (a
leading-edge :class:`Throttle`: a change after a quiet spell goes at once, one
during a busy spell waits for the rest of the period and goes with every
change made meanwhile). The same thread notices tables that went silent.

One writer for every stream: the thread that makes a message also writes it
to every open stream, encoded once and compressed once per content encoding
(:class:`SharedCoder`), straight into each connection's output buffer
(:data:`web.kit.events.DIRECT_WRITE`); no thread is woken per viewer. A stream
begins with its own compressed opening: a whole *snapshot* of the venue, or,
for a browser reconnecting with ``Last-Event-ID``, the messages it missed.
A viewer too slow to take what is sent is closed (it reconnects and catches up)
rather than slowing the others down.
"""

from __future__ import annotations

import functools
import json
import logging
import queue
import secrets
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from typing import Any

from arbiter.hub.ledger import Ledger
from arbiter.threads import BackgroundThread, declare
from web.hub import views
from web.kit.events import (
    RETRY_MILLISECONDS,
    DirectWrite,
    Stream,
    StreamHub,
    StreamsFullError,
)

FEED = declare("hub-feed", __name__,
               "pushes the venue's changes to every open hub page (one writer)")

log = logging.getLogger(__name__)

#: Seconds between two looks for silent tables.
TICK_SECONDS = 5.0
#: Least seconds between two messages of changes (the most a change waits to be sent).
PERIOD_SECONDS = 0.1
#: Messages kept for browsers reconnecting with Last-Event-ID (older: a snapshot).
HISTORY = 512
#: Bytes a viewer may leave unsent before it is closed (it reconnects and catches up).
MAX_BACKLOG = 512 * 1024
#: Messages a stream served without a direct writer may hold unread before it is closed.
QUEUE_SIZE = 256
#: A row's fields the stream carries: what the venue page shows (not ``last_seen``,
#: which changes with every message and is shown nowhere live).
STREAM_FIELDS = ("table", "online", "state", "game", "challenges", "lost", "round", "board",
                 "white", "black", "result", "over", "ending", "ending_text", "silent",
                 "unscored")
PREAMBLE = f": gg-arbiter hub stream\nretry: {RETRY_MILLISECONDS}\n\n".encode()
KEEPALIVE = b": keep-alive\n\n"


class Encoding(Enum):
    """A content encoding the stream can be sent in."""

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
    whole) and keeps the history of earlier messages (a patch compresses well
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


@dataclass(frozen=True)
class BrokerLink:
    """The hub's own link to the broker, as the ingest last reported it."""

    up: bool
    since: float  # time.time() of the change

    def public(self) -> dict[str, Any]:
        return {"up": self.up, "since": self.since,
                "since_text": time.strftime("%H:%M", time.localtime(self.since))}


class Throttle:
    """Leading-edge rate limit: a send may go at once if the last one began at least
    ``period`` seconds ago, else at the last one's start plus ``period``."""

    def __init__(self, period: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.period = period
        self._clock = clock
        self._last: float | None = None

    def delay(self) -> float:
        """Seconds to wait before the next send may go (0: now)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.period - self._clock())

    def now(self) -> float:
        return self._clock()

    def sent(self, begun: float) -> None:
        """A send went, which began at ``begun`` (from :meth:`now`)."""
        self._last = begun


def diff_rows(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]], tables: set[str]
) -> dict[str, dict[str, Any] | None]:
    """The patch taking ``before`` to ``after`` over ``tables``: per table, the fields
    that changed (all of them for a new table), or None for a table gone."""
    patch: dict[str, dict[str, Any] | None] = {}
    for table in sorted(tables):
        old, new = before.get(table), after.get(table)
        if new is None:
            if old is not None:
                patch[table] = None
            continue
        changed = {k: v for k, v in new.items() if old is None or old.get(k) != v}
        if changed:
            patch[table] = changed
    return patch


def apply_patch(
    rows: dict[str, dict[str, Any]], patch: dict[str, dict[str, Any] | None]
) -> dict[str, dict[str, Any]]:
    """``rows`` with ``patch`` applied (as the venue page's script does)."""
    out = {t: dict(r) for t, r in rows.items()}
    patch_rows(out, patch)
    return out


def patch_rows(
    rows: dict[str, dict[str, Any]], patch: dict[str, dict[str, Any] | None]
) -> None:
    """Apply ``patch`` to ``rows`` in place."""
    for table, fields in patch.items():
        if fields is None:
            rows.pop(table, None)
        else:
            rows.setdefault(table, {}).update(fields)


def _encode(message: dict[str, Any], epoch: str) -> bytes:
    body = json.dumps(message, separators=(",", ":"))
    return f"id: {epoch}.{message['seq']}\ndata: {body}\n\n".encode()


class VenueFeed:
    """Live changes of one event's venue. Thread-safe.

    Until :meth:`start`, each change is sent at once from the caller's thread.
    """

    def __init__(
        self,
        ledger: Ledger,
        quiet: timedelta = timedelta(minutes=10),
        *,
        tick: float = TICK_SECONDS,
        period: float = PERIOD_SECONDS,
        keepalive: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger = ledger
        self.quiet = quiet
        self.tick = tick
        self.keepalive = keepalive
        self.throttle = Throttle(period, clock)
        # Tells a reconnecting browser's Last-Event-ID from one of an earlier hub run.
        self.epoch = secrets.token_hex(4)
        self._lock = threading.Lock()  # marks: dirty tables, silence, the link
        self._out = threading.RLock()  # what was sent: seq, rows, history, the streams
        self._seq = 0
        self._rows: dict[str, dict[str, Any]] | None = None
        self._round: int | None = None
        self._history: deque[tuple[int, bytes]] = deque(maxlen=HISTORY)
        self._members: list[Member] = []
        self._joiners: list[Member] = []
        self._coders = {e: SharedCoder(e) for e in Encoding}
        self._last_out = time.monotonic()
        self._silent: dict[str, str] = {}
        self._results: dict[str, str] = {}
        self._dirty: set[str] = set()
        self._recheck_silence = False
        self._link: BrokerLink | None = None
        self._wake = threading.Event()
        self._thread = BackgroundThread(self._run, FEED, wake=self._wake.set)

    # --- the hub's broker link -------------------------------------------------------

    def link(self) -> BrokerLink | None:
        """The hub's broker link (None: this hub has no broker, e.g. a test)."""
        with self._lock:
            return self._link

    def link_changed(self, up: bool) -> None:
        """The ingest's link to the broker went up or down (from paho's thread)."""
        with self._lock:
            if self._link is not None and self._link.up == up:
                return
            first = self._link is None
            self._link = BrokerLink(up, time.time())
        if first and up:
            return  # the start: nothing was shown otherwise
        # Every table's online state is unknown while the link is down.
        self.refresh()

    # --- streams ---------------------------------------------------------------------

    @property
    def subscribers(self) -> int:
        with self._out:
            return len(self._members) + len(self._joiners)

    def join(self, member: Member, last_event_id: str | None = None) -> None:
        """Add a stream: it is written its opening at once (a snapshot, or the messages
        after ``last_event_id`` when they are all still kept), then every message."""
        with self._out:
            self._ensure_rows()
            texts = self._since(last_event_id)
            if texts is None:
                texts = [self._snapshot()]
            try:
                member.write(compress_alone(member.encoding, PREAMBLE + b"".join(texts)))
            except Exception:  # the client left already
                member.done.set()
                return
            self._joiners.append(member)

    def leave(self, member: Member) -> None:
        """Remove a stream (its client left, or it was closed); idempotent."""
        with self._out:
            for group in (self._members, self._joiners):
                if member in group:
                    group.remove(member)
        member.done.set()

    def close_streams(self) -> None:
        """End every stream (the server stops)."""
        with self._out:
            members, self._members, self._joiners = self._members + self._joiners, [], []
        for m in members:
            m.done.set()

    def keepalive_due(self) -> None:
        """Send a keep-alive comment to every stream if nothing went for ``keepalive``
        seconds (so a closed client is noticed, and proxies keep the stream)."""
        with self._out:
            if time.monotonic() - self._last_out >= self.keepalive:
                self._deliver(KEEPALIVE)

    def _since(self, last_event_id: str | None) -> list[bytes] | None:
        if not last_event_id:
            return None
        epoch, _, number = last_event_id.strip().partition(".")
        if epoch != self.epoch or not number.isdigit():
            return None
        seen = int(number)
        if seen > self._seq:
            return None
        missed = [text for seq, text in self._history if seq > seen]
        if len(missed) != self._seq - seen:
            return None  # some are no longer kept
        return missed

    def _snapshot(self) -> bytes:
        assert self._rows is not None
        rows = [self._rows[t] for t in sorted(self._rows, key=views.table_key)]
        link = self.link()
        return _encode({"seq": self._seq, "type": "snapshot", "event": self.ledger.event,
                        "round": self._round, "broker": None if link is None else link.public(),
                        "tables": rows}, self.epoch)

    def _deliver(self, text: bytes) -> None:
        """Write ``text`` to every stream, compressed once per encoding (under _out)."""
        self._last_out = time.monotonic()
        joiners, self._joiners = self._joiners, []
        # Each member's bytes, found before the writes, so that a member costs one write
        # and nothing more (this runs for every stream at every message).
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

    def _send(self, message: dict[str, Any]) -> None:
        with self._out:
            self._seq += 1
            text = _encode({"seq": self._seq, **message}, self.epoch)
            self._history.append((self._seq, text))
            self._deliver(text)

    # --- changes -----------------------------------------------------------------

    def silent(self) -> dict[str, str]:
        """Tables of the round flagged silent at the last look (table: why)."""
        with self._lock:
            return dict(self._silent)

    def changed(self, table: str, kind: str = "") -> None:
        """A table's message was taken by the ledger (called from the ingest thread)."""
        with self._lock:
            self._dirty.add(table)
            # A last will flags the table at once; a flagged table that speaks is cleared.
            if kind == "online" or table in self._silent:
                self._recheck_silence = True
        if self._thread.ident is None:  # no sender thread started: send from here
            self.flush()
        else:
            self._wake.set()

    def _read_rows(self, tables: set[str] | None) -> dict[str, dict[str, Any]]:
        """The stream rows of ``tables`` (None: the whole venue) from the ledger, all
        from one commit of it."""
        with self.ledger.snapshot():
            return self._read_rows_now(tables)

    def _read_rows_now(self, tables: set[str] | None) -> dict[str, dict[str, Any]]:
        number, by_table = views.current_pairings(self.ledger, tables)
        self._round = number
        silent = self.silent()
        link = self.link()
        up = link is None or link.up
        if tables is None:
            tables = set(self.ledger.tables()) | set(by_table)
        not_scored = views.unscored(self.ledger)
        out = {}
        for t in tables:
            row = views.table_row(self.ledger, t, by_table.get(t), silent, not_scored,
                                  link_up=up)
            out[t] = {k: row[k] for k in STREAM_FIELDS}
        return out

    def _ensure_rows(self) -> None:
        if self._rows is None:
            self._rows = self._read_rows(None)

    def flush(self) -> bool:
        """Send what changed in every table marked since the last flush, as one message;
        False when nothing changed."""
        with self._lock:
            tables, self._dirty = self._dirty, set()
            recheck, self._recheck_silence = self._recheck_silence, False
        if recheck:
            self._look(notify=False)
        if not tables:
            return False
        with self._out:
            self._ensure_rows()
            assert self._rows is not None
            return self._patch(self._read_rows(tables), tables)

    def _patch(self, fresh: dict[str, dict[str, Any]], tables: set[str]) -> bool:
        assert self._rows is not None
        patch = diff_rows(self._rows, fresh, tables)
        if not patch:
            return False
        results = False
        for row in fresh.values():
            mark = f"{row['round']}/{row['board']}:{row['game']}={row['result']}:{row['over']}"
            before = self._results.get(row["table"])
            if before != mark:
                results = results or before is not None or row["over"] or bool(row["result"])
                self._results[row["table"]] = mark
        patch_rows(self._rows, patch)  # in place: a copy of every row per send costs
        self._send({"type": "tables", "patch": patch, "results": results})
        return True

    def refresh(self) -> None:
        """Something the organiser did (pairing, result, players), or the broker link
        changed: every row is read again, and pages fetch everything."""
        self._look(notify=False)
        with self._out:
            self._ensure_rows()
            assert self._rows is not None
            fresh = self._read_rows(None)
            self._patch(fresh, set(fresh) | set(self._rows))
            self._send({"type": "refresh"})

    def look_for_silence(self) -> None:
        """Flag the tables gone silent (or back), and send their rows."""
        self._look(notify=True)
        if self._thread.ident is None:
            self.flush()

    def _look(self, *, notify: bool) -> None:
        try:
            now = dict(self.ledger.silent_tables(self.quiet))
        except Exception:  # the sender must not die of one bad read; it is logged
            log.exception("could not look for silent tables")
            return
        with self._lock:
            moved = {t for t, _why in set(now.items()) ^ set(self._silent.items())}
            self._silent = now
            if notify:
                self._dirty |= moved

    # --- the sender thread --------------------------------------------------------

    def start(self) -> None:
        """Send changes from a thread of its own (throttled), and look for silence every
        ``tick`` seconds, until :meth:`stop`."""
        self._look(notify=False)
        with self._out:
            self._ensure_rows()
        self._thread.start()

    def _run(self, stopping: threading.Event) -> None:
        next_look = time.monotonic() + self.tick
        while not stopping.is_set():
            woke = self._wake.wait(max(0.0, next_look - time.monotonic()))
            if stopping.is_set():
                return
            if woke:
                # Too soon after the last send: gather what comes until the period is over.
                if stopping.wait(self.throttle.delay()):
                    return
                self._wake.clear()
            if time.monotonic() >= next_look:
                self._look(notify=True)
                next_look = time.monotonic() + self.tick
            begun = self.throttle.now()
            try:
                if self.flush():
                    self.throttle.sent(begun)
            except Exception:  # logged; the next change tries again
                log.exception("could not send the venue's changes")

    def stop(self) -> None:
        self._thread.stop(5.0)
        self.close_streams()


class HubStreams(StreamHub):
    """The kit's stream admission and shutdown, serving a :class:`VenueFeed`."""

    def __init__(self, feed: VenueFeed, keepalive: float, capacity: int) -> None:
        super().__init__(_NoDevice(), keepalive, capacity)
        self.feed = feed
        feed.keepalive = keepalive

    def open_feed(
        self, encoding: Encoding, last_event_id: str | None, direct: DirectWrite | None
    ) -> Stream:
        """Admit one stream (:class:`StreamsFullError` when full), written by the feed's
        writer through ``direct`` where the server offers it, else through a queue."""
        text = (self._direct(encoding, last_event_id, direct) if direct is not None
                else self._queued(encoding, last_event_id))
        try:
            return self.open(text)
        except StreamsFullError:
            text.close()
            raise

    def _direct(
        self, encoding: Encoding, last_event_id: str | None, direct: DirectWrite
    ) -> Generator[bytes, None, None]:
        # Runs in the server's thread for this request, which only waits here (woken
        # every keep-alive period): the feed's writer writes the stream.
        member = Member(encoding, functools.partial(direct.write, limit=MAX_BACKLOG))
        try:
            if not self._stopping.is_set():
                self.feed.join(member, last_event_id)
                while not member.done.wait(self.keepalive) and not self._stopping.is_set():
                    self.feed.keepalive_due()
        finally:
            self.feed.leave(member)
        yield from ()

    def _queued(
        self, encoding: Encoding, last_event_id: str | None
    ) -> Generator[bytes, None, None]:
        q: queue.Queue[bytes] = queue.Queue(QUEUE_SIZE)
        member = Member(encoding, q.put_nowait)
        try:
            if self._stopping.is_set():
                return
            self.feed.join(member, last_event_id)
            while True:
                try:
                    yield q.get(timeout=self.keepalive)
                except queue.Empty:
                    if member.done.is_set() or self._stopping.is_set():
                        return
                    self.feed.keepalive_due()
        finally:
            self.feed.leave(member)

    def stop(self) -> None:
        super().stop()
        self.feed.close_streams()


class _NoDevice:
    """The kit's StreamHub wants a status source; the feed serves its own streams."""

    def status(self) -> dict[str, Any]:
        return {}

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        return queue.Queue()

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
        return None
