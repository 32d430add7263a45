"""Events arriving late, twice, or out of order leave the ledger as in-order delivery does."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter import wire
from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Player, Result
from tests.support.contract import (
    assignment,
    carrying,
    challenge,
    game_over,
    new_game,
    without_ids,
)


def _events() -> list[tuple[str, wire.Event]]:
    """Two tables: T1 plays board 1 then an unassigned game; T2 plays board 2 to a draw,
    then again."""
    t1 = [
        new_game("T1", 1, "g1", assignment(1, 1, "Ana", "Dee")),
        challenge("T1", 2, "g1", 1, 0, 1),
        challenge("T1", 3, "g1", 2, 1, 1),
        game_over("T1", 4, "g1", "flag_captured", "W"),
        new_game("T1", 5, "g2", None),
        challenge("T1", 6, "g2", 1, 1, 0),
        game_over("T1", 7, "g2", "resignation", "B"),
    ]
    t2 = [
        new_game("T2", 1, "x", assignment(1, 2, "Ben", "Cid")),
        challenge("T2", 2, "x", 1, 1, 1),
        game_over("T2", 3, "x", "draw", None),
        # Played again under the same kept assignment: game x counts, whenever it arrives.
        new_game("T2", 4, "y", assignment(1, 2, "Ben", "Cid")),
        challenge("T2", 5, "y", 1, 0, 1),
        game_over("T2", 6, "y", "flag_captured", "W"),
    ]
    return [("T1", e) for e in t1] + [("T2", e) for e in t2]


def _state(events: list[tuple[str, wire.Event]]) -> tuple[object, ...]:
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "l.sqlite", "e") as ledger:
        ledger.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dee")])
        ledger.admin.pair_round("round-robin")
        ledger.admin.assign_table(1, 1, "T1", who="org")
        ledger.admin.assign_table(1, 2, "T2", who="org")
        for table, event in events:
            ledger.events.record(table, carrying(ledger, event))
        assert ledger.archive.verify() == []
        return (  # each ledger makes its own pairing ids: the rest must be the same
            tuple(ledger.events.games()),
            tuple(replace(r, pairing_id=None) for r in ledger.admin.pairings()),
            tuple(tuple(without_ids(e) for e in ledger.events.of_table(t)) for t in ("T1", "T2")),
            tuple(ledger.events.gaps(t) for t in ("T1", "T2")),
        )


IN_ORDER = _state(_events())


def test_ledger_order_in_order_the_first_game_of_a_board_counts() -> None:
    pairings = IN_ORDER[1]
    assert isinstance(pairings, tuple)
    assert [p.result for p in pairings] == [Result.WHITE_WIN, Result.DRAW]


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
@settings(max_examples=40, deadline=None)
@given(st.permutations(_events()), st.lists(st.integers(0, 9), max_size=6))
def test_ledger_order_and_copies_do_not_matter(
    shuffled: list[tuple[str, wire.Event]], copies: list[int]
) -> None:
    delivered = shuffled + [shuffled[i] for i in copies]
    assert _state(delivered) == IN_ORDER


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_ledger_order_a_games_counts_are_its_latest_challenges_whatever_the_order(
    data: st.DataObject,
) -> None:
    """A game's row counts the highest challenge number and the pieces lost after the
    challenge with the highest seq (RULES: each verdict says what has fallen so far), in
    whatever order its events arrive, copies included."""
    count = data.draw(st.integers(1, 8), label="challenges")
    lost = data.draw(st.lists(st.tuples(st.integers(0, 21), st.integers(0, 21)),
                              min_size=count, max_size=count), label="lost")
    events: list[wire.Event] = [new_game("T1", 1, "g", assignment(1, 1, "Ana", "Ben"))]
    events += [challenge("T1", 2 + i, "g", i + 1, w, b) for i, (w, b) in enumerate(lost)]
    if data.draw(st.booleans(), label="over"):
        events.append(game_over("T1", 2 + count, "g", "resignation", "B"))
    delivered = data.draw(st.permutations(events), label="order")
    delivered += data.draw(st.lists(st.sampled_from(events), max_size=3), label="copies")
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp) / "l.sqlite", "e") as ledger:
        ledger.admin.add_players([Player("Ana"), Player("Ben")])
        ledger.admin.pair_round("round-robin")
        ledger.admin.assign_table(1, 1, "T1", who="org")
        for event in delivered:
            ledger.events.record("T1", carrying(ledger, event))
        (game,) = ledger.events.games("T1")
        assert (game.challenges, game.lost_w, game.lost_b) == (count, *lost[-1])
        assert ledger.archive.verify() == []
