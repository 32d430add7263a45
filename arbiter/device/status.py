"""What the device shows to whoever watches: its public status, and its outputs.

:class:`StatusHub` builds the status (the JSON of ``/api/status`` and of each
event on ``/api/events``: never a rank or a tag) and hands every new one to
its subscribers. Each subscriber has a bounded queue that drops its oldest
entry when it falls behind, so a slow page never holds up the device.
:class:`OutputWatchers` passes the LEDs and buzzer on to whoever follows them
(the simulator console).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from arbiter.device.sequence import DeviceState
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.signals import OutputsSnapshot
from arbiter.fleet.state import BrokerState, FleetState
from arbiter.queues import put_dropping_oldest
from arbiter.rules.game import Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.verdict import Role

log = logging.getLogger(__name__)

#: How many statuses a subscriber may fall behind before the oldest is dropped.
SUBSCRIBER_QUEUE = 64

@dataclass(frozen=True)
class StatusFacts:
    """What a status is made of: the current game and what the device shows now."""

    game: Game
    state: DeviceState
    message: str
    last_verdict: str | None
    readings: Mapping[Role, SlotReading]
    enrolling: bool


def fleet_status(fleet: FleetState | None) -> JsonDict:
    """The tournament part of the status: the broker link and the table's assignment."""
    if fleet is None:
        return {"broker": {"state": BrokerState.NOT_CONFIGURED.value, "detail": "",
                           "cause": ""},
                "assignment": None}
    assignment = fleet.assignment
    return {
        "broker": {"state": fleet.broker.value, "detail": fleet.detail, "cause": fleet.cause},
        "assignment": {**assignment.to_dict(), "text": assignment.text} if assignment else None,
    }


def build_status(
    facts: StatusFacts, *, mode: str, seq: int, fleet: FleetState | None = None
) -> JsonDict:
    """The public status: never a rank or a tag."""
    view = facts.game.public_view()
    tournament = fleet_status(fleet)
    readings = facts.readings
    faults = [r.detail for r in readings.values() if r.state is SlotState.FAULT]
    return {
        "state": facts.state.value,
        "game_id": facts.game.id,
        "challenge_count": view["challenge_count"],
        "started_at": view["started_at"],
        "eliminated": view["eliminated"],
        "last_verdict": facts.last_verdict,
        "verdicts": [
            {k: v[k] for k in ("number", "attacker_side", "result")} for v in view["verdicts"]
        ],
        "slots": {role.value: readings[role].state.value for role in Role},
        "readers": {"ok": not faults, "detail": "; ".join(dict.fromkeys(faults))},
        "ending": view["ending"],
        "message": facts.message,
        "mode": mode,
        "enrolling": facts.enrolling,
        **tournament,
        "new_game_needed": new_game_needed(tournament["assignment"], view["assignment"]),
        "seq": seq,
    }


def new_game_needed(held: JsonDict | None, game: JsonDict | None) -> bool:
    """True when the table holds an assignment its current game was not started with:
    that game would not be scored, NEW GAME starts the assigned one."""
    if held is None:
        return False
    return game != {k: v for k, v in held.items() if k != "text"}


class StatusHub:
    """The latest status, and the queues of those who follow it. Thread-safe.

    :param mode: ``sim`` or ``hardware``, as the status says.
    :param queue_size: how far a subscriber may fall behind.
    :param fleet: the tournament link's state, shown in the status (None: no tournament).
    """

    def __init__(
        self, mode: str, *, queue_size: int = SUBSCRIBER_QUEUE, fleet: FleetState | None = None
    ) -> None:
        self._mode = mode
        self._fleet = fleet
        self._facts: StatusFacts | None = None
        self._listeners: list[Callable[[JsonDict], None]] = []
        self._queue_size = queue_size
        self._lock = threading.Lock()
        self._seq = 0
        self._status: JsonDict = {}
        self._subscribers: list[queue.Queue[JsonDict]] = []

    def publish(self, facts: StatusFacts) -> None:
        """Make a new status (its ``seq`` one higher) of what the device does, and send it
        to every subscriber and listener."""
        self._make(facts, tell_listeners=True)

    def refresh(self) -> None:
        """The broker link or the assignment changed: a new status for the subscribers
        (the pages). The listeners are not told: the broker link is the one listener, and
        what changed is its own (one way, fleet to page; the link reads the status)."""
        with self._lock:
            facts = self._facts
        if facts is not None:
            self._make(facts, tell_listeners=False)

    def _make(self, facts: StatusFacts, *, tell_listeners: bool) -> None:
        with self._lock:
            self._facts = facts
            self._seq += 1
            self._status = build_status(facts, mode=self._mode, seq=self._seq, fleet=self._fleet)
            for q in self._subscribers:
                put_dropping_oldest(q, self._status)
            if tell_listeners:
                for listener in self._listeners:
                    listener(self._status)

    def add_listener(self, listener: Callable[[JsonDict], None]) -> None:
        """Call ``listener`` with each new status the device makes (not those of a
        :meth:`refresh`), in order, under the hub's lock: it must only hand the status
        over (the tournament link), never wait."""
        with self._lock:
            self._listeners.append(listener)

    def status(self) -> JsonDict:
        """The latest status (a copy)."""
        with self._lock:
            return dict(self._status)

    def subscribe(self) -> queue.Queue[JsonDict]:
        """A queue that gets the latest status now and every new one after."""
        q: queue.Queue[JsonDict] = queue.Queue(maxsize=self._queue_size)
        with self._lock:
            self._subscribers.append(q)
            q.put_nowait(dict(self._status))
        return q

    def unsubscribe(self, q: queue.Queue[JsonDict]) -> None:
        """Stop sending to ``q``; nothing happens if it is not subscribed."""
        with self._lock, contextlib.suppress(ValueError):
            self._subscribers.remove(q)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)


class OutputWatchers:
    """Listeners to the LEDs and buzzer; :meth:`notify` is ``Signals``' ``on_change`` hook."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[JsonDict], None]] = []

    def add(self, listener: Callable[[JsonDict], None]) -> None:
        """Call ``listener`` with the outputs (as JSON) after every change."""
        self._listeners.append(listener)

    def notify(self, snapshot: OutputsSnapshot) -> None:
        if not self._listeners:
            return
        data = snapshot.to_dict()
        for listener in list(self._listeners):
            try:
                listener(data)
            except Exception:  # one broken listener must not stop the signals
                log.exception("output listener failed")
