"""The hub's live feed: what changed at the venue, for every open page's event stream.

The feed follows the ingest's changes (:class:`arbiter.hub.changes.Changes`):
:meth:`VenueFeed.changed` comes after the ledger committed a table's message,
and only marks the table. A sender thread reads the marked
tables' rows again and sends, as one message, only the fields that changed
since the last message (a *patch*), at most once every ``period`` seconds (a
leading-edge :class:`Throttle`: a change after a quiet spell goes at once, one
during a busy spell waits for the rest of the period and goes with every
change made meanwhile). The same thread notices tables that went silent.

That thread is the one writer of every stream (:mod:`web.kit.broadcast`, the
kit's one live-update mechanism, which the table's status page uses too). A
stream begins with its own opening: a whole *snapshot* of the venue, or, for a
browser reconnecting with ``Last-Event-ID``, the messages it missed.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from arbiter.hub.ledger import Ledger
from arbiter.threads import BackgroundThread, declare
from arbiter.wire import Topic
from web.hub import views
from web.kit.broadcast import Broadcast, Member
from web.kit.events import RETRY_MILLISECONDS

FEED = declare("hub-feed", __name__,
               "pushes the venue's changes to every open hub page (one writer)")

log = logging.getLogger(__name__)

#: Seconds between two looks for silent tables.
TICK_SECONDS = 5.0
#: Least seconds between two messages of changes (the most a change waits to be sent).
PERIOD_SECONDS = 0.1
#: Messages kept for browsers reconnecting with Last-Event-ID (older: a snapshot).
HISTORY = 512
#: A row's fields the stream carries: what the venue page shows (not ``last_seen``,
#: which changes with every message and is shown nowhere live).
STREAM_FIELDS = ("table", "online", "state", "game", "challenges", "lost", "round", "board",
                 "white", "black", "result", "over", "ending", "ending_text", "silent",
                 "unknown", "unscored")
PREAMBLE = f": gg-arbiter hub stream\nretry: {RETRY_MILLISECONDS}\n\n".encode()


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
        self._broadcast = Broadcast(keepalive)
        self.throttle = Throttle(period, clock)
        # Tells a reconnecting browser's Last-Event-ID from one of an earlier hub run.
        self.epoch = secrets.token_hex(4)
        self._lock = threading.Lock()  # marks: dirty tables, silence, the link
        # What was sent (seq, rows, history) and the streams: the broadcast's own lock, so
        # a stream's opening and the messages after it are one sequence.
        self._out = self._broadcast.lock
        self._seq = 0
        self._rows: dict[str, dict[str, Any]] | None = None
        self._round: int | None = None
        self._history: deque[tuple[int, bytes]] = deque(maxlen=HISTORY)
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
    def keepalive(self) -> float:
        """Seconds of silence after which every stream is sent a keep-alive comment."""
        return self._broadcast.keepalive

    @keepalive.setter
    def keepalive(self, value: float) -> None:
        self._broadcast.keepalive = value

    @property
    def subscribers(self) -> int:
        return self._broadcast.subscribers

    def join(self, member: Member, last_event_id: str | None = None) -> None:
        """Add a stream: it is written its opening at once (a snapshot, or the messages
        after ``last_event_id`` when they are all still kept), then every message."""
        with self._out:
            self._ensure_rows()
            texts = self._since(last_event_id)
            if texts is None:
                texts = [self._snapshot()]
            self._broadcast.join(member, PREAMBLE + b"".join(texts))

    def leave(self, member: Member) -> None:
        """Remove a stream (its client left, or it was closed); idempotent."""
        self._broadcast.leave(member)

    def close_streams(self) -> None:
        """End every stream (the server stops)."""
        self._broadcast.close_streams()

    def keepalive_due(self) -> None:
        """Send a keep-alive comment to every stream if nothing went for ``keepalive``
        seconds (so a closed client is noticed, and proxies keep the stream)."""
        self._broadcast.keepalive_due()

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

    def _send(self, message: dict[str, Any]) -> None:
        with self._out:
            self._seq += 1
            text = _encode({"seq": self._seq, **message}, self.epoch)
            self._history.append((self._seq, text))
            self._broadcast.deliver(text)

    # --- changes -----------------------------------------------------------------

    def silent(self) -> dict[str, str]:
        """Tables of the round flagged silent at the last look (table: why)."""
        with self._lock:
            return dict(self._silent)

    def changed(self, table: str, kind: Topic | None = None) -> None:
        """A table's ``kind`` message was taken by the ledger (the ingest's thread: the
        feed follows :attr:`arbiter.hub.ingest.Ingest.changes`); None: something else of
        the table changed."""
        with self._lock:
            self._dirty.add(table)
            # A last will flags the table at once; a flagged table that speaks is cleared.
            if kind is Topic.ONLINE or table in self._silent:
                self._recheck_silence = True
        if self._thread.ident is None:  # no sender thread started: send from here
            self.flush()
        else:
            self._wake.set()

    def _read_rows(self, tables: set[str] | None) -> dict[str, dict[str, Any]]:
        """The stream rows of ``tables`` (None: the whole venue) from the ledger, all
        from one commit of it."""
        with self.ledger.store.snapshot():
            return self._read_rows_now(tables)

    def _read_rows_now(self, tables: set[str] | None) -> dict[str, dict[str, Any]]:
        number, by_table = views.current_pairings(self.ledger, tables)
        self._round = number
        silent = self.silent()
        link = self.link()
        up = link is None or link.up
        if tables is None:
            tables = set(self.ledger.tables.names()) | set(by_table)
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
            now = dict(self.ledger.tables.silent(self.quiet))
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
