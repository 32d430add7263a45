"""What the device shows of the tournament link: broker state and the assignment, and
what the link reports of the broker (:class:`BrokerReports`: the state, and one log
line per new problem).

Thread-safe; the link writes it, the device reads it when it builds its
status and at NEW GAME. Listeners hear every change (the device republishes
its status).
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable

from arbiter.fleet.assignment import Assignment

log = logging.getLogger(__name__)


class BrokerState(enum.Enum):
    """The connection to the tournament's broker, as the page footer shows it."""

    NOT_CONFIGURED = "not configured"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    #: Connected, but the broker refuses what the table publishes (MQTT 5 reason code:
    #: another table's login, or an ACL that does not let it write there).
    REFUSED = "refused"


class FleetState:
    """The broker state (with a detail: why it is not connected) and the assignment."""

    def __init__(
        self, state: BrokerState = BrokerState.NOT_CONFIGURED,
        assignment: Assignment | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._state = state
        self._detail = ""
        self._cause = ""
        self._assignment = assignment
        self._listeners: list[Callable[[], None]] = []

    @property
    def broker(self) -> BrokerState:
        with self._lock:
            return self._state

    @property
    def detail(self) -> str:
        with self._lock:
            return self._detail

    @property
    def cause(self) -> str:
        """Why it is not connected, in a few plain words for the page footer ("": none)."""
        with self._lock:
            return self._cause

    @property
    def assignment(self) -> Assignment | None:
        with self._lock:
            return self._assignment

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (on the changing thread) after every change."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        """Stop calling ``listener``; nothing happens if it is not one."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def set_broker(self, state: BrokerState, detail: str = "", cause: str = "") -> None:
        """``detail``: the full message (as logged); ``cause``: its few words, if known."""
        with self._lock:
            if (state, detail, cause) == (self._state, self._detail, self._cause):
                return
            self._state, self._detail, self._cause = state, detail, cause
        self._changed()

    def set_assignment(self, assignment: Assignment | None) -> None:
        with self._lock:
            if assignment == self._assignment:
                return
            self._assignment = assignment
        self._changed()

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # a broken listener must not stop the link
                log.exception("fleet state listener failed")


REFUSED_HINT = ("another table's login, or an ACL that forbids it: check [tournament] table "
                "and password_file")


class BrokerReports:
    """What the link says of ``broker``: the state on the page with its cause (a few
    words, never a host: the footer is public), the detail in ``/api/status``, and one
    line in ``log`` per new problem, not one per attempt. Paho's thread and the
    publisher's both report; each call is one state change."""

    def __init__(self, state: FleetState, broker: str, log: logging.Logger) -> None:
        self.state = state
        self.broker = broker
        self._log = log
        self._reported = ""  # the problem logged last ("": connected since)
        self._refusing = ""  # what the broker refused last ("": nothing since)

    def problem(self, detail: str, *, error: bool = False, cause: str = "") -> None:
        """No connection (or none that works): reconnecting, for ``detail``."""
        self.state.set_broker(BrokerState.RECONNECTING, detail, cause)
        if detail != self._reported:
            self._reported = detail
            (self._log.error if error else self._log.warning)("broker: %s", detail)

    def connected(self) -> None:
        """The broker accepted the connection."""
        self.state.set_broker(BrokerState.CONNECTED)
        if self._reported:
            self._log.warning("broker: connected to %s again", self.broker)
        else:
            self._log.info("broker: connected to %s", self.broker)
        self._reported = ""

    def refused(self, detail: str, reason: str) -> None:
        """The broker took the connection but refuses what the table sends or reads."""
        hint = REFUSED_HINT
        self.state.set_broker(BrokerState.REFUSED, f"{detail}: {hint}",
                              f"{reason.lower()}: the hub does not get this table's game")
        if detail != self._refusing:
            self._refusing = detail
            self._log.error("broker: %s: %s", detail, hint)

    def taken_again(self) -> None:
        """The broker acknowledged an event: a refusal, if any, is over."""
        if not self._refusing:
            return
        self._refusing = ""
        if self.state.broker is BrokerState.REFUSED:
            self.state.set_broker(BrokerState.CONNECTED)
            self._log.warning("broker: %s takes the table's events again", self.broker)
