"""The hub's live feed: what changed at the venue, for every open page's event stream.

The ingest calls :meth:`VenueFeed.changed` after the ledger took a table's
message; the feed reads that one table's row again and sends it to every
subscriber queue (small messages, not the whole venue, so 200 tables and 200
viewers stay cheap). A page that missed a message (its ``seq`` jumped) or
sees ``refresh`` fetches the JSON views again. A ticker notices tables that
went silent (no message means no call to ``changed``).

It offers what :class:`web.events.StreamHub` needs of a status source:
``status()``, ``subscribe()`` and ``unsubscribe()``.
"""

from __future__ import annotations

import logging
import queue
import threading
from datetime import timedelta
from typing import Any

from arbiter.hub.ledger import Ledger
from arbiter.hubweb import views

log = logging.getLogger(__name__)

#: How far a page's queue may fall behind before its oldest message is dropped.
QUEUE_SIZE = 256
#: Seconds between two looks for silent tables.
TICK_SECONDS = 5.0


def _put_dropping_oldest(q: queue.Queue[dict[str, Any]], item: dict[str, Any]) -> None:
    """Queue ``item``; a slow page loses its oldest message, never blocks the ingest."""
    while True:
        try:
            q.put_nowait(item)
            return
        except queue.Full:
            try:
                q.get_nowait()
            except queue.Empty:
                continue


class VenueFeed:
    """Live changes of one event's venue. Thread-safe."""

    def __init__(
        self,
        ledger: Ledger,
        quiet: timedelta = timedelta(minutes=10),
        *,
        queue_size: int = QUEUE_SIZE,
        tick: float = TICK_SECONDS,
    ) -> None:
        self.ledger = ledger
        self.quiet = quiet
        self.tick = tick
        self._queue_size = queue_size
        self._lock = threading.Lock()
        self._seq = 0
        self._subscribers: list[queue.Queue[dict[str, Any]]] = []
        self._silent: dict[str, str] = {}
        self._results: dict[str, str | None] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- the StatusSource of web.events.StreamHub --------------------------------

    def status(self) -> dict[str, Any]:
        """The opening message of a stream: the page fetches the views on it."""
        with self._lock:
            return {"seq": self._seq, "type": "hello", "event": self.ledger.event}

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        q: queue.Queue[dict[str, Any]] = queue.Queue(self._queue_size)
        with self._lock:
            self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
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
            for q in self._subscribers:
                _put_dropping_oldest(q, message)

    def changed(self, table: str, kind: str = "") -> None:
        """A table's message was taken by the ledger (called from the ingest thread)."""
        with self._lock:
            flagged = table in self._silent
        if kind == "online" or flagged:
            # A last will flags the table now, and a flagged table that speaks again is
            # cleared now, not at the next tick.
            self.look_for_silence(notify=False)
        _number, by_table = views.current_pairings(self.ledger)
        row = views.table_row(self.ledger, table, by_table.get(table), self.silent())
        results = False
        with self._lock:
            key = f"{row['round']}/{row['board']}:{row['game']}"
            mark = f"{key}={row['result']}:{row['over']}"
            if self._results.get(table) != mark:
                results = table in self._results or row["over"] or row["result"] is not None
                self._results[table] = mark
        self._send({"type": "table", "table": row, "results": results})

    def refresh(self) -> None:
        """Something the organiser did (pairing, result, players): pages fetch everything."""
        self.look_for_silence(notify=False)
        self._send({"type": "refresh"})

    def look_for_silence(self, *, notify: bool = True) -> None:
        """Flag the tables gone silent (or back); their rows are sent when ``notify``."""
        try:
            now = dict(self.ledger.silent_tables(self.quiet))
        except Exception:  # a ticker must not die of one bad read; it is logged
            log.exception("could not look for silent tables")
            return
        with self._lock:
            moved = set(now.items()) ^ set(self._silent.items())
            self._silent = now
        if notify:
            for table in sorted({t for t, _why in moved}):
                self.changed(table, "silence")

    # --- the ticker --------------------------------------------------------------

    def start(self) -> None:
        """Look for silent tables every ``tick`` seconds until :meth:`stop`."""
        self.look_for_silence(notify=False)
        self._thread = threading.Thread(target=self._run, name="hub-silence", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.tick):
            self.look_for_silence()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
