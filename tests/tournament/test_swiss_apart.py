"""The Swiss pairing in its own process (arbiter/tournament/swiss/apart.py): the same
pairings and refusals as in this one, a memory limit that refuses instead of killing,
and a new process when the last one died."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.tournament.errors import EventTooLargeError, NoLegalPairingError
from arbiter.tournament.model import Game, Pairing, Player, Result
from arbiter.tournament.swiss import swiss_round
from arbiter.tournament.swiss.apart import (
    _raise,
    _Worker,
    pairing_process,
    stop_pairing_process,
    swiss_round_apart,
)
from arbiter.tournament.trf import import_trf

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def fresh() -> Iterator[None]:
    stop_pairing_process()
    yield
    stop_pairing_process()


def test_it_pairs_as_the_engine_did(fresh: None) -> None:
    event = import_trf((GOLDEN / "dutch-101p-5r-seed10.trf").read_text(encoding="utf-8"))
    for number in (1, 3, 5):
        before = [g for g in event.games if g.pairing.round < number]
        theirs = {(g.pairing.white, g.pairing.black) for g in event.games
                  if g.pairing.round == number}
        ours = swiss_round_apart(event.players, before, number, event.total_rounds)
        assert {(p.white, p.black) for p in ours} == theirs
    assert pairing_process() not in (None, os.getpid())


def test_its_refusals_are_the_pairings_own(fresh: None) -> None:
    ana, ben = Player("Ana", 1800), Player("Ben", 1700)
    met = [Game(Pairing(1, 1, "Ana", "Ben"), Result.DRAW)]
    with pytest.raises(NoLegalPairingError) as here:
        swiss_round([ana, ben], met, 2, 3)
    with pytest.raises(NoLegalPairingError) as there:
        swiss_round_apart([ana, ben], met, 2, 3)
    assert (there.value.round, there.value.reason, str(there.value)) == (
        here.value.round, here.value.reason, str(here.value))


def test_running_out_of_its_memory_refuses_the_event(fresh: None) -> None:
    """Past its address space the pairing process answers EventTooLargeError, and lives."""
    event = import_trf((GOLDEN / "dutch-1000p-3r-seed15.trf").read_text(encoding="utf-8"))
    round_one = [g for g in event.games if g.pairing.round == 1]
    small = _Worker(address_space=200 << 20)  # the interpreter fits; 1,000 players' weights not
    try:
        request = (event.players, round_one, 2, event.total_rounds, None)
        reply = small.pair(request)
        assert not isinstance(reply, list)
        with pytest.raises(EventTooLargeError) as caught:
            _raise(reply)
        assert caught.value.ran_out and caught.value.players == 1000
        assert "ran out of the 200 MB the pairing process may use" in str(caught.value)
        assert small.process is not None and small.process.poll() is None  # still serving
        two = small.pair(([Player("A", 1), Player("B", 0)], [], 1, 1, None))
        assert isinstance(two, list) and len(two) == 1
    finally:
        small.close()


def test_a_dead_pairing_process_is_replaced(fresh: None) -> None:
    """Killed while idle (the out-of-memory killer, an operator): the next round is paired."""
    players = [Player(f"P{i}", 2000 - i) for i in range(6)]
    swiss_round_apart(players, [], 1, 5)
    first = pairing_process()
    assert first is not None
    os.kill(first, signal.SIGKILL)
    again = swiss_round_apart(players, [], 1, 5)
    assert [(p.white, p.black) for p in again] == [
        (p.white, p.black) for p in swiss_round(players, [], 1, 5)]
    assert pairing_process() not in (None, first)
