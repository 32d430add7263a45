"""The status hub: the public status, bounded drop-oldest queues, subscribe and unsubscribe."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.device.sequence import DeviceState
from arbiter.device.status import (
    OutputWatchers,
    StatusFacts,
    StatusHub,
    build_status,
)
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.fleet.assignment import Assignment
from arbiter.fleet.state import BrokerState, FleetState
from arbiter.queues import put_dropping_oldest
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore

#: The fields of ``GET /api/status`` (and of each SSE event): the public contract.
STATUS_KEYS = {
    "state", "game_id", "challenge_count", "started_at", "eliminated", "last_verdict",
    "verdicts", "slots", "readers", "ending", "message", "mode", "enrolling", "seq",
    "broker", "assignment", "new_game_needed",
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GameStore]:
    with GameStore(tmp_path / "data") as store:
        yield store


def _facts(store: GameStore, **changes: Any) -> StatusFacts:
    facts: dict[str, Any] = {
        "game": store.current,
        "state": DeviceState.IDLE,
        "message": "",
        "last_verdict": None,
        "readings": {role: SlotReading(role, SlotState.EMPTY) for role in Role},
        "enrolling": False,
    }
    facts.update(changes)
    return StatusFacts(**facts)


def test_put_dropping_oldest_keeps_the_newest() -> None:
    q: queue.Queue[int] = queue.Queue(maxsize=2)
    for item in (1, 2, 3, 4):
        put_dropping_oldest(q, item)
    assert [q.get_nowait(), q.get_nowait()] == [3, 4]
    assert q.empty()


def test_status_has_the_public_fields_and_no_rank(store: GameStore) -> None:
    store.accept(Contenders.untagged(Piece.parse("W:SPY"), Piece.parse("B:5*G")))
    readings = {
        Role.ATTACKER: SlotReading(Role.ATTACKER, SlotState.PRESENT, token="W:SPY"),
        Role.DEFENDER: SlotReading(Role.DEFENDER, SlotState.FAULT, detail="port gone"),
    }
    facts = _facts(
        store, state=DeviceState.RESULT, last_verdict="attacker", readings=readings
    )
    status = build_status(facts, mode="sim", seq=7)
    assert set(status) == STATUS_KEYS
    assert status["state"] == "result" and status["seq"] == 7 and status["mode"] == "sim"
    assert status["challenge_count"] == 1
    assert status["eliminated"] == {"W": 0, "B": 1}  # the Spy takes the General
    assert status["slots"] == {"attacker": "present", "defender": "fault"}
    assert status["readers"] == {"ok": False, "detail": "port gone"}
    text = repr(status)
    assert "SPY" not in text and "5*G" not in text  # the token is never shown


def test_hub_subscriber_gets_the_current_status_then_each_new_one(store: GameStore) -> None:
    hub = StatusHub("hardware")
    hub.publish(_facts(store))
    q = hub.subscribe()
    assert q.get_nowait()["seq"] == 1
    hub.publish(_facts(store, state=DeviceState.WAITING))
    new = q.get_nowait()
    assert (new["seq"], new["state"]) == (2, "waiting")
    assert hub.status() == new
    assert hub.subscriber_count == 1
    hub.unsubscribe(q)
    hub.unsubscribe(q)  # twice is fine
    assert hub.subscriber_count == 0
    hub.publish(_facts(store))
    assert q.empty()


def test_fleet_changes_reach_the_pages_one_way(store: GameStore) -> None:
    """The broker link's state reaches the pages (a new status with it); the status
    listener (the link, which made that change) hears only what the device does, so
    nothing goes back to the link: no fleet, device, fleet loop."""
    fleet = FleetState()
    hub = StatusHub("hardware", fleet=fleet)
    fleet.add_listener(hub.refresh)
    heard: list[dict[str, Any]] = []
    hub.add_listener(heard.append)
    hub.publish(_facts(store))
    q = hub.subscribe()
    q.get_nowait()
    fleet.set_broker(BrokerState.CONNECTED)
    page = q.get_nowait()
    assert (page["seq"], page["broker"]["state"]) == (2, "connected")
    assert [s["seq"] for s in heard] == [1]
    hub.publish(_facts(store, state=DeviceState.WAITING))
    assert [(s["seq"], s["broker"]["state"]) for s in heard] == [
        (1, "not configured"), (3, "connected")]


def test_hub_slow_subscriber_drops_the_oldest(store: GameStore) -> None:
    hub = StatusHub("sim", queue_size=3)
    hub.publish(_facts(store))
    slow = hub.subscribe()  # holds seq 1
    for _ in range(5):
        hub.publish(_facts(store))  # seq 2..6
    assert [slow.get_nowait()["seq"] for _ in range(3)] == [4, 5, 6]
    assert slow.empty()


def test_hub_status_is_a_copy(store: GameStore) -> None:
    hub = StatusHub("sim")
    hub.publish(_facts(store))
    hub.status()["state"] = "changed"
    assert hub.status()["state"] == "idle"


class _Snapshot:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


def test_output_watchers_reach_every_listener_even_after_one_fails() -> None:
    watchers = OutputWatchers()
    seen: list[dict[str, Any]] = []

    def broken(data: dict[str, Any]) -> None:
        raise RuntimeError("listener bug")

    watchers.add(broken)
    watchers.add(seen.append)
    watchers.notify(_Snapshot({"leds": {}}))  # type: ignore[arg-type]
    assert seen == [{"leds": {}}]


def test_status_asks_for_new_game_until_the_game_is_the_assigned_one(store: GameStore) -> None:
    # Issue 19, finding 10: a game played without NEW GAME after an assignment is not
    # scored; the table's page says so from the status.
    assert build_status(_facts(store), mode="sim", seq=1)["new_game_needed"] is False
    round_2 = Assignment(2, 3, "Ana", "Ben")
    fleet = FleetState(BrokerState.CONNECTED, round_2)
    # The start-up game has no assignment: NEW GAME is needed.
    assert build_status(_facts(store), mode="sim", seq=2, fleet=fleet)["new_game_needed"]
    store.new_game(round_2.to_dict())
    assert not build_status(_facts(store), mode="sim", seq=3, fleet=fleet)["new_game_needed"]
    # The next round's assignment arrives: the game on the board is round 2's.
    fleet_3 = FleetState(BrokerState.CONNECTED, Assignment(3, 1, "Ana", "Carla"))
    assert build_status(_facts(store), mode="sim", seq=4, fleet=fleet_3)["new_game_needed"]
