"""Standings and tie-breaks, on small events worked out by hand from the rules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.tournament.errors import DuplicatePlayerError, PairingError
from arbiter.tournament.model import Game, Pairing, Player, Result
from arbiter.tournament.standings import Standing, TieBreak, standings
from arbiter.tournament.swiss import swiss_round

W, B, D = Result.WHITE_WIN, Result.BLACK_WIN, Result.DRAW


def _games(rounds: list[list[tuple[str, str | None, Result | None]]]) -> list[Game]:
    return [
        Game(Pairing(r, board, white, black), result)
        for r, games in enumerate(rounds, start=1)
        for board, (white, black, result) in enumerate(games, start=1)
    ]


def _players(names: str) -> list[Player]:
    return [Player(n) for n in names]


# Six players, two rounds. Scores: C 2; A, B, D, F 1; E 0.
# Among the four on 1 point, the games between them: A beat D, F beat A, D beat B,
# so direct encounter gives A 1, D 1, F 1, B 0.
# Buchholz: A = D(1)+F(1) = 2, D = A(1)+B(1) = 2, F = C(2)+A(1) = 3, B = E(0)+D(1) = 1.
# Sonneborn-Berger: A beat D(1) = 1, D beat B(1) = 1, F beat A(1) = 1, B beat E(0) = 0.
SIX = _games(
    [
        [("A", "D", W), ("B", "E", W), ("C", "F", W)],
        [("F", "A", W), ("D", "B", W), ("C", "E", W)],
    ]
)


def _table(rows: list[Standing]) -> list[tuple[int, str, float]]:
    return [(r.rank, r.name, r.score) for r in rows]


def test_standings_default_tiebreaks_direct_encounter_then_buchholz() -> None:
    rows = standings(_players("ABCDEF"), SIX)
    assert _table(rows) == [
        (1, "C", 2.0),
        (2, "F", 1.0),  # DE 1 like A and D, but the best Buchholz (3)
        (3, "A", 1.0),  # A and D equal on DE (1), Buchholz (2) and SB (1): one rank
        (3, "D", 1.0),
        (5, "B", 1.0),  # DE 0 among the four
        (6, "E", 0.0),
    ]
    f = next(r for r in rows if r.name == "F")
    assert dict(f.tiebreaks) == {
        TieBreak.DIRECT_ENCOUNTER: 1.0,
        TieBreak.BUCHHOLZ: 3.0,
        TieBreak.SONNEBORN_BERGER: 1.0,
    }
    assert (f.played, f.wins, f.draws, f.losses, f.byes) == (2, 1, 0, 1, 0)


def test_standings_sonneborn_berger_alone_orders_differently() -> None:
    rows = standings(_players("ABCDEF"), SIX, [TieBreak.SONNEBORN_BERGER])
    assert _table(rows) == [
        (1, "C", 2.0),
        (2, "A", 1.0),
        (2, "D", 1.0),
        (2, "F", 1.0),
        (5, "B", 1.0),
        (6, "E", 0.0),
    ]


def test_standings_cyclic_three_way_tie_shares_first_place() -> None:
    # Round robin of four: A beat D and B, B beat C and D, C beat D and A.
    games = _games(
        [
            [("A", "D", W), ("B", "C", W)],
            [("D", "C", B), ("A", "B", W)],
            [("B", "D", W), ("C", "A", W)],
        ]
    )
    rows = standings(_players("ABCD"), games)
    assert _table(rows) == [(1, "A", 2.0), (1, "B", 2.0), (1, "C", 2.0), (4, "D", 0.0)]
    assert dict(rows[0].tiebreaks)[TieBreak.BUCHHOLZ] == 4.0


def test_standings_bye_and_draw_and_unplayed() -> None:
    # Round 1: A beat B, C beat D, E bye. Round 2: E beat A, C-B drawn, D bye; round 3 unplayed.
    games = _games(
        [
            [("A", "B", W), ("C", "D", W), ("E", None, None)],
            [("E", "A", W), ("C", "B", D), ("D", None, None)],
            [("A", "C", None)],
        ]
    )
    rows = standings(_players("ABCDE"), games)
    # E 2; C 1.5; A 1 and D 1 (never met: DE 0 each; Buchholz A = B .5 + E 2 = 2.5 > D = C 1.5);
    # B 0.5.
    assert _table(rows) == [
        (1, "E", 2.0),
        (2, "C", 1.5),
        (3, "A", 1.0),
        (4, "D", 1.0),
        (5, "B", 0.5),
    ]
    c = rows[1]
    assert dict(c.tiebreaks)[TieBreak.SONNEBORN_BERGER] == 1.25  # beat D (1) + half of B (0.5)
    e = rows[0]
    assert (e.played, e.wins, e.byes) == (1, 1, 1)


def test_standings_refuse_duplicate_names() -> None:
    with pytest.raises(DuplicatePlayerError):
        standings([Player("A"), Player("A")], [])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([W, B, D, None]), min_size=0, max_size=30), st.data())
def test_standings_invariants_hold_for_any_swiss_results(
    outcomes: list[Result | None], data: st.DataObject
) -> None:
    """Points add up (1 a decided game, 1 a bye); ranks follow the scores."""
    players = [Player(f"P{i}") for i in range(data.draw(st.integers(2, 9)))]
    games: list[Game] = []
    results = iter(outcomes)
    for number in range(1, 4):
        try:
            pairings = swiss_round(players, games, number)
        except PairingError:
            break
        games += [Game(p, None if p.is_bye else next(results, None)) for p in pairings]
    rows = standings(players, games)
    decided = sum(1 for g in games if g.result is not None and not g.pairing.is_bye)
    byes = sum(1 for g in games if g.pairing.is_bye)
    assert sum(r.score for r in rows) == decided + byes
    assert sorted(r.name for r in rows) == sorted(p.name for p in players)
    for above, below in itertools.pairwise(rows):
        assert above.score >= below.score
        assert above.rank <= below.rank
        assert (above.rank == below.rank) == (
            (above.score, above.tiebreaks) == (below.score, below.tiebreaks)
        )
