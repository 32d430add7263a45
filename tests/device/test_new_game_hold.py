"""NEW GAME is a deliberate act: the button must be held for the documented time, twice
(the first hold asks to confirm; tests/device/test_confirm.py tests the question).

Driven through gpiozero mock pins on a device assembled from the shipped
default config, the way the real button reaches it. The hold time a player is
told (docs/play/games.md) is the expected figure; a press that ends sooner starts nothing.
"""

from __future__ import annotations

import queue
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.drivers.pins import mock_pin_factory
from tests.support.waiting import wait_until

GAMES_PAGE = (Path(__file__).resolve().parents[2] / "docs" / "play" / "games.md").read_text()


def _documented_hold() -> float:
    match = re.search(r"NEW GAME \(button held (\d+(?:\.\d+)?) s", GAMES_PAGE)
    assert match, "docs/play/games.md no longer says how long NEW GAME is held"
    return float(match.group(1))


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Any]:
    factory = mock_pin_factory()
    arbiter = build_arbiter(load_config(None), data_dir=tmp_path, sim=True, pin_factory=factory)
    arbiter.start()
    try:
        yield arbiter, factory
    finally:
        arbiter.close()
        factory.reset()


def _next_game(updates: queue.Queue[dict[str, Any]], game_id: int, timeout: float) -> bool:
    """Wait for a status naming a game after ``game_id``; False if none came in time."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            status = updates.get(timeout=left)
        except queue.Empty:
            return False
        if status["game_id"] > game_id:
            return True
    return False


def test_new_game_hold_default_matches_the_docs() -> None:
    assert load_config(None).button.hold_seconds == _documented_hold()


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_new_game_hold_starts_a_game_only_after_the_full_hold(device: Any) -> None:
    arbiter, factory = device
    hold = _documented_hold()
    pin = factory.pin(load_config(None).button.new_game_pin)
    updates = arbiter.subscribe()
    first = arbiter.status()["game_id"]

    # A press released before the hold time: the release cancels it.
    pin.drive_low()
    time.sleep(hold / 4)  # the player's press length, not a wait for a result
    pin.drive_high()

    # The first full hold only asks to confirm (the confirm tune): no game yet.
    pressed = time.monotonic()
    pin.drive_low()
    wait_until(lambda: any(t["name"] == "confirm" for t in arbiter.outputs()["played"]),
               timeout=hold + 30, what="the question a first hold asks")
    asked_after = time.monotonic() - pressed
    pin.drive_high()
    assert arbiter.status()["game_id"] == first

    pressed = time.monotonic()
    pin.drive_low()
    assert _next_game(updates, first, timeout=hold + 30)
    held_for = time.monotonic() - pressed
    pin.drive_high()
    # Lower bounds only: a busy machine can make them later, never sooner.
    assert asked_after >= hold - 0.05, f"asked after {asked_after:.2f} s, hold is {hold} s"
    assert held_for >= hold - 0.05, f"new game after {held_for:.2f} s, hold is {hold} s"
    assert arbiter.status()["game_id"] == first + 1  # the short press counted for nothing
    arbiter.unsubscribe(updates)
