"""Standings and tie-breaks, on small events worked out by hand from the rules."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.tournament.errors import DuplicatePlayerError, PairingError
from arbiter.tournament.model import Bye, Game, Pairing, Player, Result
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


# FIDE C.07 tie-breaks (Articles 15-16 as in force from 1 March 2026), worked out by hand.
# Five players, three rounds:
# R1: A-C 1-0, D-B 0-1, E bye.  R2: B-A ½, E-C 1-0, D bye.  R3: A-E 1-0, C-D ½, B bye.
# Scores: A 2.5, B 2.5, E 2, D 1.5, C 0.5.
FIDE = _games(
    [
        [("A", "C", W), ("D", "B", B), ("E", None, None)],
        [("B", "A", D), ("E", "C", W), ("D", None, None)],
        [("A", "E", W), ("C", "D", D), ("B", None, None)],
    ]
)
RATED = [Player("A", 2000), Player("B", 1900), Player("C", 1800), Player("D", 1700),
         Player("E", 1600)]


def _values(rule: TieBreak, players: list[Player], games: list[Game]) -> dict[str, float]:
    return {r.name: dict(r.tiebreaks)[rule] for r in standings(players, games, [rule])}


def test_fide_buchholz_counts_a_bye_as_a_dummy_opponent_with_the_players_own_score() -> None:
    # 16.4: the bye is a dummy with the player's own score, at most half a point a round
    # (16.4.2: 3 rounds, 1.5). A: C 0.5 + B 2.5 + E 2 = 5; B: D 1.5 + A 2.5 + dummy
    # min(2.5, 1.5) = 5.5; C: A 2.5 + E 2 + D 1.5 = 6; D: B 2.5 + dummy min(1.5, 1.5)
    # + C 0.5 = 4.5; E: dummy min(2, 1.5) + C 0.5 + A 2.5 = 4.5.
    assert _values(TieBreak.BUCHHOLZ_FIDE, RATED, FIDE) == {
        "A": 5.0, "B": 5.5, "C": 6.0, "D": 4.5, "E": 4.5,
    }
    # Today's Buchholz leaves the bye out: B 4, D 3, E 3.
    assert _values(TieBreak.BUCHHOLZ, RATED, FIDE) == {
        "A": 5.0, "B": 4.0, "C": 6.0, "D": 3.0, "E": 3.0,
    }
    # So B, level with A on 2.5, ranks first by it.
    rows = standings(RATED, FIDE, [TieBreak.BUCHHOLZ_FIDE])
    assert _table(rows)[:2] == [(1, "B", 2.5), (2, "A", 2.5)]


def test_fide_buchholz_cut1_drops_the_least_significant_value() -> None:
    # No VUR here (the byes are the pairing's): the lowest of each list above goes,
    # A 0.5, B 1.5, C 1.5, D 0.5, E 0.5.
    assert _values(TieBreak.BUCHHOLZ_CUT1, RATED, FIDE) == {
        "A": 4.5, "B": 4.0, "C": 4.5, "D": 4.0, "E": 4.0,
    }


def test_fide_buchholz_cut1_cuts_a_voluntarily_unplayed_round_first() -> None:
    # Z enters in round 2. R1: W-X 1-0, Y bye.  R2: W-Y ½, X-Z 0-1.
    # Scores: W 1.5, Y 1.5, Z 1, X 0. Z's round 1 (not paired: a zero-point bye, followed
    # by a round played, so it counts its 0 for the others, 16.3.1) is a dummy with Z's
    # score, at most ½ a round (2 rounds: 1): BH = 1 + X 0 = 1. Being voluntarily
    # unplayed, it is the one cut, though X's 0 is lower: BH-C1 = 0. Y's bye is not
    # voluntary: BH = dummy min(1.5, 1) + W 1.5 = 2.5, and the cut takes the lowest (1).
    # X: W 1.5 + Z 1, cut Z's 1.
    games = _games([[("W", "X", W), ("Y", None, None)], [("W", "Y", D), ("X", "Z", B)]])
    players = _players("WXYZ")
    assert _values(TieBreak.BUCHHOLZ_FIDE, players, games) == {
        "W": 1.5, "X": 2.5, "Y": 2.5, "Z": 1.0,
    }
    assert _values(TieBreak.BUCHHOLZ_CUT1, players, games) == {
        "W": 1.5, "X": 1.5, "Y": 1.5, "Z": 0.0,
    }


def test_wins_count_every_round_scored_as_a_win_the_bye_included() -> None:
    # A won R1 and R3; B won R1 and had the bye; C none; D the bye; E the bye and R2.
    assert _values(TieBreak.WINS, RATED, FIDE) == {"A": 2, "B": 2, "C": 0, "D": 1, "E": 2}


def test_average_rating_of_opponents_rounds_half_up() -> None:
    # A met C 1800, B 1900, E 1600: 5300 / 3 = 1766.67 -> 1767. B: D 1700, A 2000 -> 1850.
    # C: A, E, D -> 1767. D: B, C -> 1850. E: C, A -> 1900.
    assert _values(TieBreak.ARO, RATED, FIDE) == {
        "A": 1767, "B": 1850, "C": 1767, "D": 1850, "E": 1900,
    }
    # 1801 and 1800: 1800.5 rounds up; an unrated opponent (0) does not count.
    games = _games([[("P", "Q", W), ("R", "S", D)], [("P", "R", D), ("Q", "S", W)],
                    [("P", "S", W)]])
    players = [Player("P", 1500), Player("Q", 1801), Player("R", 1800), Player("S")]
    assert _values(TieBreak.ARO, players, games)["P"] == 1801


def test_default_tiebreaks_on_the_fide_example() -> None:
    # A and B tied on 2.5 drew each other (direct encounter ½ each); today's Buchholz
    # leaves B's bye out: A 5 > B 4. Sonneborn-Berger: A 1·0.5 + ½·2.5 + 1·2 = 3.75,
    # B 1·1.5 + ½·2.5 = 2.75.
    rows = standings(RATED, FIDE)
    assert _table(rows)[:2] == [(1, "A", 2.5), (2, "B", 2.5)]
    assert _values(TieBreak.SONNEBORN_BERGER, RATED, FIDE)["A"] == 3.75
    assert _values(TieBreak.SONNEBORN_BERGER, RATED, FIDE)["B"] == 2.75
    assert _values(TieBreak.DIRECT_ENCOUNTER, RATED, FIDE)["A"] == 0.5  # the draw with B


# Forfeits, requested byes and a withdrawal, by C.07 Articles 15-16 (from 1 March 2026).
# Six players, three rounds (so "half a point a round" is 1.5):
# R1: P-Q 1-0, R-S forfeit (R came: +/-), T-U ½.
# R2: P-R ½, Q-T 1-0, U-S 1-0; no one else.   (all six paired)
# R3: P-U forfeit, neither came (-/-); Q-R 0-1; T half-point bye (H); S withdrawn
#     (not paired: a zero-point bye).
# Scores: P 1.5, Q 1, R 2.5, S 0, T 0.5 + 0.5 = 1, U 0.5 + 1 = 1.5.
FORFEITS = [
    Game(Pairing(1, 1, "P", "Q"), W), Game(Pairing(1, 2, "R", "S"), W, forfeit=True),
    Game(Pairing(1, 3, "T", "U"), D),
    Game(Pairing(2, 1, "P", "R"), D), Game(Pairing(2, 2, "Q", "T"), W),
    Game(Pairing(2, 3, "U", "S"), W),
    Game(Pairing(3, 1, "P", "U"), None, forfeit=True), Game(Pairing(3, 2, "Q", "R"), B),
    Game(Pairing(3, 0, "T", None), bye=Bye.HALF),
]
SIX_RATED = [Player("P", 2000), Player("Q", 1900), Player("R", 1800), Player("S", 1700),
             Player("T", 1600), Player("U", 1500)]


def test_forfeits_and_requested_byes_score_their_points() -> None:
    rows = {r.name: r.score for r in standings(SIX_RATED, FORFEITS, [])}
    assert rows == {"P": 1.5, "Q": 1.0, "R": 2.5, "S": 0.0, "T": 1.0, "U": 1.5}


def test_fide_buchholz_with_forfeits_byes_and_a_withdrawal() -> None:
    # Adjusted scores for the opponents (16.3): S's round 1 forfeit loss counts its 0
    # (16.2.4), round 3 (withdrawn, a requested bye followed by nothing) a draw: S 0.5.
    # T's half-point bye is in the last round: a draw, as given: T 1. P's and U's double
    # forfeit counts its 0. Others: their scores.
    # P: Q 1 + R 2.5 + forfeit loss (VUR): dummy min(own 1.5, U's adjusted 1.5) = 5.
    # Q: P 1.5 + T 1 + R 2.5 = 5.
    # R: forfeit win: dummy min(own 2.5, S's adjusted 0.5) + P 1.5 + Q 1 = 3.
    # S: forfeit loss: dummy min(0, R 2.5) + U 1.5 + not paired: dummy min(0, 1.5) = 1.5.
    # T: U 1.5 + Q 1 + H bye: dummy min(own 1, 1.5) = 3.5.
    # U: T 1 + S 0.5 + forfeit loss: dummy min(own 1.5, P's 1.5) = 3.
    assert _values(TieBreak.BUCHHOLZ_FIDE, SIX_RATED, FORFEITS) == {
        "P": 5.0, "Q": 5.0, "R": 3.0, "S": 1.5, "T": 3.5, "U": 3.0,
    }
    # Cut-1 (16.5): with a VUR, the lowest VUR value goes; else the lowest.
    # P: VUR round 3 (1.5) cut: 3.5. Q: no VUR, cut 1: 4. R: no VUR (the forfeit won is
    # not voluntary), cut 0.5: 2.5. S: VURs rounds 1 (0) and 3 (0): one cut, 1.5.
    # T: VUR the H bye (1): 2.5. U: VUR round 3 (1.5): 1.5.
    assert _values(TieBreak.BUCHHOLZ_CUT1, SIX_RATED, FORFEITS) == {
        "P": 3.5, "Q": 4.0, "R": 2.5, "S": 1.5, "T": 2.5, "U": 1.5,
    }


def test_forfeits_are_no_games_for_the_other_tie_breaks() -> None:
    # Over the board only. Buchholz: P: Q 1 + R 2.5 = 3.5; R: P 1.5 + Q 1 = 2.5;
    # S: U 1.5. Sonneborn-Berger: R: ½ of P 1.5 + Q 1 = 1.75 (the forfeit won adds nothing).
    # ARO: R met P 2000 and Q 1900: 1950; S met U only: 1500.
    assert _values(TieBreak.BUCHHOLZ, SIX_RATED, FORFEITS)["P"] == 3.5
    assert _values(TieBreak.BUCHHOLZ, SIX_RATED, FORFEITS)["R"] == 2.5
    assert _values(TieBreak.BUCHHOLZ, SIX_RATED, FORFEITS)["S"] == 1.5
    assert _values(TieBreak.SONNEBORN_BERGER, SIX_RATED, FORFEITS)["R"] == 1.75
    assert _values(TieBreak.ARO, SIX_RATED, FORFEITS)["R"] == 1950
    assert _values(TieBreak.ARO, SIX_RATED, FORFEITS)["S"] == 1500
    # WIN counts the forfeit won (R: rounds 1 and 3), not the half-point bye (T: none).
    assert _values(TieBreak.WINS, SIX_RATED, FORFEITS)["R"] == 2
    assert _values(TieBreak.WINS, SIX_RATED, FORFEITS)["T"] == 0
