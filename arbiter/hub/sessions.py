"""The hub's sessions at the broker: reconnection paced with a capped, jittered backoff,
and one persistent session per table for that table's events and records.

The broker holds a bounded queue per client for a client that is away (broker-config's
``max_queued_messages``/``max_queued_bytes``). With one session for the whole venue, one
table's flood filled that queue and the broker dropped another table's real game (issue
27). So beside its main session (every table topic but the records) the hub keeps, for
each table it knows, a session of its own subscribed to that table's ``events`` and
``record`` (``record/#``: also an earlier release's ``record/<game>``): a flood fills
the flooding table's queue and the main one, never another table's. Statuses and
``online`` need no such queue: they are retained, one a table, and the broker gives them
again at every subscription. A table's records share one retained topic (the latest),
but each is published at QoS 1, so the table's session queues every one while the hub is
away (a record the hub still lacks is asked for again: :mod:`arbiter.hub.resend`);
an earlier release's were one retained topic a game, which given all at once at a
subscription would overflow the main session's queue, so records come by the table's
session alone. An event
that comes by both sessions is kept once (the ledger keys events by table and sequence
number), and a refused one is noted once (the table session's copy is refused quietly).

Each session's login is :func:`arbiter.mqtt.address.table_session_login` of the hub's
(broker-config writes them, with the hub's password, each allowed to read one table's
events and records); its client id is that login. A broker that refuses one (a broker
configured before these logins, or for other tables) costs only that table's isolation:
the main session then carries its records too. Its paho client runs in paho's own thread.
"""

from __future__ import annotations

import logging
import random
import ssl
import threading
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from arbiter import wire
from arbiter.logthrottle import LogThrottle
from arbiter.mqtt.address import table_session_login
from arbiter.mqtt.tls import secure

log = logging.getLogger(__name__)

#: The first wait before connecting again, in seconds; it doubles at each failure...
FIRST_DELAY = 1.0
#: ... up to this (a broker back after a restart is found within it)...
MAX_DELAY = 15.0
#: ... each wait drawn between this fraction of it and all of it, so a hundred sessions
#: (and a venue's tables) do not all knock at the same instant when the broker returns.
JITTER = 0.5
#: Sessions the hub keeps at most (broker-config serves at most 1,000 tables); a table
#: past them is served by the main session alone.
MAX_SESSIONS = 1000
#: Keep-alive of every session, in seconds: a broker that accepts the connection but never
#: answers (its CONNACK held) is dropped and tried again after this long.
KEEPALIVE = 15

#: A message delivered by one of the hub's clients: (the client, to acknowledge it on; it).
Delivered = tuple[mqtt.Client, mqtt.MQTTMessage]


def retry_delay(failures: int, draw: float) -> float:
    """The wait before the next attempt after ``failures`` failures in a row (1 or more);
    ``draw`` is uniform in [0, 1)."""
    full = min(MAX_DELAY, FIRST_DELAY * float(2 ** min(failures - 1, 16)))
    return full * (1 - JITTER + JITTER * draw)


class Backoff:
    """Paces one paho client's reconnections: :meth:`failed` from its disconnect and
    connect-failure callbacks (paho waits after them), :meth:`succeeded` once connected."""

    def __init__(self, client: mqtt.Client, draw: Callable[[], float] = random.random) -> None:
        self._client = client
        self._draw = draw
        self._failures = 0
        self.pace()

    def pace(self) -> float:
        """Set paho's next wait from the failures so far; returns it."""
        delay = retry_delay(max(self._failures, 1), self._draw())
        # paho waits its minimum after a reset: set both to this one delay (it sleeps a float).
        self._client.reconnect_delay_set(min_delay=delay, max_delay=delay)  # type: ignore[arg-type]
        return delay

    def failed(self) -> float:
        self._failures += 1
        return self.pace()

    def succeeded(self) -> None:
        self._failures = 0
        self.pace()


class TableSessions:
    """The hub's per-table sessions for ``event`` at ``host``:``port``: each delivers its
    table's events and records to ``deliver`` (from paho's thread), to be acknowledged on the client
    given with it. ``login`` is the hub's user (None: an open broker; ``base_id`` then
    names the sessions). ``refused(table)`` is told of a table that will have no session
    (the broker refused it, or :data:`MAX_SESSIONS` are open). Thread-safe."""

    def __init__(self, event: str, host: str, port: int, deliver: Callable[[Delivered], None],
                 *, login: str | None, password: str | None, base_id: str,
                 tls: ssl.SSLContext | None, refused: Callable[[str], None]) -> None:
        self.event, self.host, self.port = event, host, port
        self._deliver = deliver
        self._refused_to = refused
        self._login, self._password, self._base = login, password, base_id
        self._tls = tls
        self._lock = threading.Lock()
        self._clients: dict[str, mqtt.Client] = {}
        self._refused: set[str] = set()
        self._subscribed: set[str] = set()
        self._past: set[str] = set()  # tables met past MAX_SESSIONS
        self._closed = False
        self._log = LogThrottle()

    def tables(self) -> list[str]:
        """The tables with a session of their own (refused ones left out)."""
        with self._lock:
            return sorted(set(self._clients) - self._refused)

    def subscribed(self) -> list[str]:
        """The tables whose session is connected and subscribed now."""
        with self._lock:
            return sorted(self._subscribed)

    def open(self, table: str) -> None:
        """Keep a session for ``table`` from now on (nothing if it has one, was refused, or
        :data:`MAX_SESSIONS` are open). Returns at once: paho connects in its thread."""
        with self._lock:
            if self._closed or table in self._clients or table in self._past:
                return
            if len(self._clients) >= MAX_SESSIONS:
                self._past.add(table)
                full = True
            else:
                full = False
                client = self._client(table)
                self._clients[table] = client
        if full:
            self._refused_to(table)
            return
        client.connect_async(self.host, self.port, keepalive=KEEPALIVE)
        client.loop_start()

    def close(self) -> None:
        """Disconnect every session cleanly (the broker keeps each and queues for it)."""
        with self._lock:
            self._closed = True
            clients = list(self._clients.values())
        for client in clients:
            client.disconnect()
        for client in clients:
            client.loop_stop()

    def _client(self, table: str) -> mqtt.Client:
        name = table_session_login(self._login or self._base, table)
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=name, clean_session=False,
                             protocol=mqtt.MQTTv311, manual_ack=True)
        if self._login:
            client.username_pw_set(name, self._password)
        secure(client, self._tls)
        backoff = Backoff(client)
        topics = [(wire.topic(self.event, table, wire.Topic.EVENTS), 1),
                  (wire.table_pattern(self.event, table, wire.Topic.RECORD), 1)]

        def connected(c: mqtt.Client, _u: Any, _f: Any, reason: ReasonCode, _p: Any) -> None:
            if reason.is_failure:
                self._refuse(c, table, str(reason))
                return
            backoff.succeeded()
            c.subscribe(topics)

        def disconnected(_c: mqtt.Client, _u: Any, _f: Any, _r: Any, _p: Any) -> None:
            with self._lock:
                self._subscribed.discard(table)
            backoff.failed()

        def subscribed(c: mqtt.Client, _u: Any, _m: int, codes: list[ReasonCode],
                       _p: Any) -> None:
            if any(code.is_failure for code in codes):  # its ACL lets it read neither
                self._refuse(c, table, f"subscription refused: {codes}")
                return
            with self._lock:
                self._subscribed.add(table)

        def connect_failed(_c: mqtt.Client, _u: Any) -> None:
            backoff.failed()

        client.on_connect = connected
        client.on_disconnect = disconnected
        client.on_connect_fail = connect_failed
        client.on_subscribe = subscribed
        client.on_message = lambda c, _u, msg: self._deliver((c, msg))
        return client

    def _refuse(self, client: mqtt.Client, table: str, reason: str) -> None:
        """The broker refused a table's session: the main session alone carries its events
        and records. Given up at once (a login the broker does not know will not come)."""
        with self._lock:
            self._refused.add(table)
        client.disconnect()  # from paho's thread: its loop ends
        self._refused_to(table)
        line = self._log.note("refused")
        if line is not None:
            log.warning("the broker refused the hub's session for table %r (%s): its events "
                        "and records come by the hub's main session only, which one table's "
                        "flood can fill (%d refused so far, %d lines held back)", table, reason,
                        *line)
