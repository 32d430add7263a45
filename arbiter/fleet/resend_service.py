"""Serving the hub's resend requests, beside the table's normal publishing.

paho's thread hands a request over (:meth:`ResendService.take`, no disk work); the
publisher thread serves it (:meth:`ResendService.serve`): the events named go out
exactly as the first time (same seq, same bytes), read by a walker of their own
(a resend walks the journals from the start, which would empty the normal outbox's
cache of the latest game), beside the cursor, which never moves back. A record asked for
goes out again if the walk meets it: only a record the outbox gives, so only once its
game is over and revealed (a sealed abandoned game's not before the next has begun).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arbiter.fleet.errors import ResendError
from arbiter.fleet.outbox import Cursor, Outbox, Pending
from arbiter.fleet.resend import SERVED_KEPT, ResendRequest, ServedFile
from arbiter.logthrottle import LogThrottle

log = logging.getLogger(__name__)


@dataclass
class _ResendJob:
    """A resend request being served by the publisher thread (its own state only).

    ``scan`` is where the walk through the journals has got to; ``upto`` the last
    sequence number published the normal way when the request came (later ones go
    out the normal way); ``outstanding`` the message ids not yet acknowledged.
    """

    request: ResendRequest
    upto: int
    scan: Cursor = field(default_factory=Cursor)
    scanned: bool = False
    outstanding: set[int] = field(default_factory=set)
    sent: int = 0


class ResendService:
    """The resend requests of ``table`` (data in ``data_dir``); at most ``window``
    messages unacknowledged."""

    def __init__(self, data_dir: Path, table: str, window: int) -> None:
        self.table = table
        self.window = window
        self._outbox = Outbox(data_dir)
        self._served_file = ServedFile(data_dir)
        self._served = self._served_file.load()
        self._ignored = LogThrottle()  # requests ignored as served: logged, boundedly
        self._lock = threading.Lock()
        self._request: ResendRequest | None = None  # from paho's thread to the publisher
        self._job: _ResendJob | None = None  # the publisher thread's alone

    @property
    def busy(self) -> bool:
        """A request is being served."""
        return self._job is not None

    def take(self, payload: bytes) -> bool:
        """A ``resend`` message (paho's thread): True if there is a request to serve."""
        try:
            request = ResendRequest.from_payload(payload)
        except ResendError as exc:
            if (line := self._ignored.note("unusable")) is not None:
                log.warning("broker: ignoring a resend request that cannot be used: %s (%d so"
                            " far, %d lines held back)", exc, *line)
            return False
        if request is None:
            return False
        if request.table != self.table:
            if (line := self._ignored.note("other table")) is not None:
                log.warning("broker: refusing a resend request naming table %r on table %r's"
                            " topic (%d so far, %d lines held back)", request.table,
                            self.table, *line)
            return False
        with self._lock:
            self._request = request  # a newer request replaces one not yet taken
        return True

    def settled(self, mids: set[int]) -> None:
        """These message ids are acknowledged (or refused): no longer outstanding."""
        job = self._job
        if job is not None:
            job.outstanding -= mids

    def serve(self, send: Callable[[Pending], int], sent: Cursor) -> None:
        """Take a new request, then publish (``send`` returns the message id) the next
        part of the one being served. ``sent``: how far the normal publishing went."""
        with self._lock:
            request, self._request = self._request, None
        if request is not None:
            self._begin(request, sent)
        job = self._job
        if job is None:
            return
        room = self.window - len(job.outstanding)
        while room > 0 and not job.scanned:
            batch = self._outbox.pending(job.scan, self.window)
            if not batch:
                job.scanned = True
            for pending in batch:
                if pending.seq is not None and pending.seq > job.upto:
                    job.scanned = True
                    break
                job.scan = pending.after
                if (job.request.wants(pending.seq) if pending.seq is not None
                        else job.request.wants_record(pending.item.game)):
                    job.outstanding.add(send(pending))
                    job.sent += 1
                    room -= 1
                    if room == 0:
                        break
        if job.scanned and not job.outstanding:
            self._end(job)

    def _begin(self, request: ResendRequest, sent: Cursor) -> None:
        if request.id in self._served:
            # The retained copy of a request served, given again at a reconnection: say
            # so (a hub that reused an id would otherwise wait for events in silence).
            line = self._ignored.note(str(request.id))
            if line is not None:
                log.info("broker: ignoring resend request %d: served already (events %s;"
                         " seen %d time(s), %d lines held back)", request.id,
                         _asked(request), *line)
            return
        log.info("broker: the hub asks for events %s again (request %d)",
                 _asked(request), request.id)
        self._job = _ResendJob(request, upto=sent.seq)

    def _end(self, job: _ResendJob) -> None:
        self._job = None
        asked = job.request
        log.info("broker: resend request %d served: %d event(s) and record(s) published"
                 " again", asked.id, job.sent)
        if job.sent < asked.count():
            log.warning("broker: resend request %d named events or records the table had not"
                        " published (it had events up to %d; a record goes out once its game"
                        " is over and revealed): ignored; later ones go out the normal way if"
                        " it holds them", asked.id, job.upto)
        self._served = (*self._served, asked.id)[-SERVED_KEPT:]
        try:
            self._served_file.save(self._served)
        except OSError as exc:  # served again after a restart: harmless
            log.warning("broker: cannot save %s: %s", self._served_file.path, exc)


def _asked(request: ResendRequest) -> str:
    """The events' runs and the records asked for, for a log line."""
    runs = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in request.ranges)
    if not request.records:
        return runs
    games = ", ".join(sorted(request.records, key=lambda g: (len(g), g)))
    return f"{runs or 'none'}, records of games {games}"
