"""The hub's live feed: what changed at the venue, for every open page's event stream.

The ingest calls :meth:`VenueFeed.changed` after the ledger committed a
table's message; that only marks the table. A sender thread reads the marked
tables' rows again and sends them as one message to every page, encoded once,
at most once every ``period`` seconds (a leading-edge :class:`Throttle`: a
change after a quiet spell goes at once, one during a busy spell waits for
the rest of the period and goes with every change made meanwhile). 200
tables each publishing every few seconds, times 200 pages, stay cheap this
way, no change waits more than a period, and the ingest never waits on a page.
A page that missed a message (its ``seq`` jumped) or sees ``refresh`` fetches
the JSON views again. The same thread notices tables that went silent.

:class:`HubStreams` is the table's :class:`web.kit.events.StreamHub` (same
admission limit, stopped with the server) sending this feed's encoded text.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Generator
from datetime import timedelta
from typing import Any, cast

from arbiter.hub.ledger import Ledger
from arbiter.queues import put_dropping_oldest
from web.hub import views
from web.kit.events import RETRY_MILLISECONDS, StatusSource, StreamHub

log = logging.getLogger(__name__)

#: How far a page's queue may fall behind before its oldest message is dropped.
QUEUE_SIZE = 256
#: Seconds between two looks for silent tables.
TICK_SECONDS = 5.0
#: Least seconds between two messages of changes (the most a change waits to be sent).
PERIOD_SECONDS = 0.1

Item = tuple[int, bytes]  # (seq, the message's SSE text, encoded once for every stream)


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


def _encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"))
    return f"id: {message['seq']}\ndata: {body}\n\n".encode()


class VenueFeed:
    """Live changes of one event's venue. Thread-safe.

    Until :meth:`start`, each change is sent at once from the caller's thread.
    """

    def __init__(
        self,
        ledger: Ledger,
        quiet: timedelta = timedelta(minutes=10),
        *,
        queue_size: int = QUEUE_SIZE,
        tick: float = TICK_SECONDS,
        period: float = PERIOD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger = ledger
        self.quiet = quiet
        self.tick = tick
        self.throttle = Throttle(period, clock)
        self._queue_size = queue_size
        self._lock = threading.Lock()
        self._seq = 0
        self._subscribers: list[queue.Queue[Any]] = []
        self._silent: dict[str, str] = {}
        self._results: dict[str, str] = {}
        self._dirty: set[str] = set()
        self._recheck_silence = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what HubStreams needs -------------------------------------------------------

    def opening(self) -> Item:
        """The opening message of a stream: the page fetches the views on it."""
        with self._lock:
            seq = self._seq
        return seq, _encode({"seq": seq, "type": "hello", "event": self.ledger.event})

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {"seq": self._seq, "type": "hello", "event": self.ledger.event}

    def subscribe(self) -> queue.Queue[Any]:
        q: queue.Queue[Any] = queue.Queue(self._queue_size)
        with self._lock:
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[Any]) -> None:
        with self._lock:
            self._subscribers.remove(q)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    # --- changes -----------------------------------------------------------------

    def silent(self) -> dict[str, str]:
        """Tables of the round flagged silent at the last look (table: why)."""
        with self._lock:
            return dict(self._silent)

    def _send(self, message: dict[str, Any]) -> None:
        with self._lock:
            self._seq += 1
            message = {"seq": self._seq, **message}
            item: Item = (self._seq, _encode(message))
            for q in self._subscribers:
                put_dropping_oldest(q, item)

    def changed(self, table: str, kind: str = "") -> None:
        """A table's message was taken by the ledger (called from the ingest thread)."""
        with self._lock:
            self._dirty.add(table)
            # A last will flags the table at once; a flagged table that speaks is cleared.
            if kind == "online" or table in self._silent:
                self._recheck_silence = True
        if self._thread is None:
            self.flush()
        else:
            self._wake.set()

    def flush(self) -> bool:
        """Send the rows of every table changed since the last flush, as one message;
        False when there was none."""
        with self._lock:
            tables, self._dirty = self._dirty, set()
            recheck, self._recheck_silence = self._recheck_silence, False
        if recheck:
            self._look(notify=False)
        if not tables:
            return False
        _number, by_table = views.current_pairings(self.ledger)
        silent = self.silent()
        rows = [views.table_row(self.ledger, t, by_table.get(t), silent) for t in sorted(tables)]
        results = False
        with self._lock:
            for row in rows:
                mark = f"{row['round']}/{row['board']}:{row['game']}={row['result']}:{row['over']}"
                before = self._results.get(row["table"])
                if before != mark:
                    results = results or before is not None or row["over"] or bool(row["result"])
                    self._results[row["table"]] = mark
        self._send({"type": "tables", "tables": rows, "results": results})
        return True

    def refresh(self) -> None:
        """Something the organiser did (pairing, result, players): pages fetch everything."""
        self._look(notify=False)
        self._send({"type": "refresh"})

    def look_for_silence(self) -> None:
        """Flag the tables gone silent (or back), and send their rows."""
        self._look(notify=True)
        if self._thread is None:
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
        self._thread = threading.Thread(target=self._run, name="hub-feed", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        next_look = time.monotonic() + self.tick
        while not self._stop.is_set():
            woke = self._wake.wait(max(0.0, next_look - time.monotonic()))
            if self._stop.is_set():
                return
            if woke:
                # Too soon after the last send: gather what comes until the period is over.
                if self._stop.wait(self.throttle.delay()):
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
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


class HubStreams(StreamHub):
    """The table's stream admission and shutdown, sending a :class:`VenueFeed`'s text."""

    def __init__(self, feed: VenueFeed, keepalive: float, capacity: int) -> None:
        super().__init__(cast(StatusSource, feed), keepalive, capacity)
        self.feed = feed

    def _text(self) -> Generator[bytes, None, None]:  # type: ignore[override]
        q = self.feed.subscribe()
        with self._lock:
            self._open.add(q)
        try:
            if self._stopping.is_set():
                return
            yield f": gg-arbiter hub stream\nretry: {RETRY_MILLISECONDS}\n\n".encode()
            last, text = self.feed.opening()
            yield text
            while not self._stopping.is_set():
                try:
                    item = q.get(timeout=self.keepalive)
                except queue.Empty:
                    yield b": keep-alive\n\n"
                    continue
                if not isinstance(item, tuple):  # StreamHub.stop's sentinel
                    break
                seq, text = item
                if seq <= last:
                    continue  # already sent with the opening
                last = seq
                yield text
        finally:
            with self._lock:
                self._open.discard(q)
            self.feed.unsubscribe(q)
