"""Swiss pairing: no repeated game, one bye at most, colours kept in balance."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Game, Pairing, Player, Result
from arbiter.tournament.swiss import swiss_round

W, B = Result.WHITE_WIN, Result.BLACK_WIN


def _pairs(pairings: list[Pairing]) -> list[tuple[str, str | None]]:
    return [(p.white, p.black) for p in pairings]


def test_swiss_round_one_top_half_meets_bottom_half() -> None:
    players = [Player(n) for n in "ABCD"]
    # S1 = A, B; S2 = C, D: A-C, B-D; no colour history, so the higher-ranked
    # player has White on odd boards and Black on even ones.
    assert _pairs(swiss_round(players, [], 1)) == [("A", "C"), ("D", "B")]


def test_swiss_round_two_pairs_score_groups_and_alternates_colours() -> None:
    players = [Player(n) for n in "ABCD"]
    games = [Game(Pairing(1, 1, "A", "C"), W), Game(Pairing(1, 2, "D", "B"), W)]
    # Scores: A 1, D 1, B 0, C 0. Groups {A, D} and {B, C}. A and D both had White:
    # both prefer Black with equal strength, so the higher-ranked A gets it. B and C
    # both had Black: B, ranked higher, gets White.
    assert _pairs(swiss_round(players, games, 2)) == [("D", "A"), ("B", "C")]


def test_swiss_bye_goes_to_the_lowest_ranked_player_without_one() -> None:
    players = [Player(n) for n in "ABC"]
    first = swiss_round(players, [], 1)
    assert _pairs(first) == [("A", "B"), ("C", None)]
    games = [Game(first[0], B), Game(first[1])]
    # Scores: B 1, C 1 (the bye), A 0. A is lowest and has had no bye.
    assert _pairs(swiss_round(players, games, 2))[-1] == ("A", None)


def test_swiss_withdrawn_players_are_not_paired() -> None:
    players = [Player("A"), Player("B", withdrawn=True), Player("C"), Player("D")]
    pairings = swiss_round(players, [], 1)
    assert "B" not in {n for p in pairings for n in (p.white, p.black)}
    assert pairings[-1].black is None


def test_swiss_refuses_when_every_opponent_was_met() -> None:
    players = [Player("A"), Player("B")]
    with pytest.raises(PairingError):
        swiss_round(players, [Game(Pairing(1, 1, "A", "B"), W)], 2)


def test_swiss_refuses_a_second_bye() -> None:
    players = [Player("A"), Player("B"), Player("C")]
    games = [
        Game(Pairing(1, 1, "A", "B"), W), Game(Pairing(1, 2, "C", None)),
        Game(Pairing(2, 1, "C", "A"), W), Game(Pairing(2, 2, "B", None)),
        Game(Pairing(3, 1, "B", "C"), W), Game(Pairing(3, 2, "A", None)),
    ]
    with pytest.raises(PairingError):
        swiss_round(players, games, 4)


def test_swiss_refuses_games_of_strangers() -> None:
    with pytest.raises(UnknownPlayerError):
        swiss_round([Player("A"), Player("B")], [Game(Pairing(1, 1, "A", "Z"), W)], 2)


def _play(
    n: int, rounds: int, outcomes: list[Result | None]
) -> tuple[list[Player], list[list[Pairing]]]:
    players = [Player(f"P{i}", rating=2000 - i) for i in range(n)]
    games: list[Game] = []
    played: list[list[Pairing]] = []
    results = iter(outcomes)
    for number in range(1, rounds + 1):
        pairings = swiss_round(players, games, number)
        played.append(pairings)
        games += [Game(p, None if p.is_bye else next(results, None)) for p in pairings]
    return players, played


RESULTS = st.lists(st.sampled_from([Result.WHITE_WIN, Result.BLACK_WIN, Result.DRAW]), max_size=40)


def _check(players: list[Player], played: list[list[Pairing]]) -> None:
    names = sorted(p.name for p in players)
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    colour: Counter[str] = Counter()
    for pairings in played:
        seen = sorted(n for p in pairings for n in (p.white, p.black) if n is not None)
        assert seen == names, "each player exactly once a round"
        assert sum(p.is_bye for p in pairings) == len(names) % 2
        for p in pairings:
            if p.black is None:
                byes[p.white] += 1
            else:
                met[frozenset((p.white, p.black))] += 1
                colour[p.white] += 1
                colour[p.black] -= 1
    assert all(count == 1 for count in met.values()), "a pairing repeated"
    assert all(count <= 1 for count in byes.values()), "a second bye"
    assert all(abs(d) <= 2 for d in colour.values()), colour


@settings(max_examples=150, deadline=None)
@given(RESULTS)
def test_swiss_nine_players_four_rounds_never_repeat_and_one_bye_at_most(
    outcomes: list[Result | None],
) -> None:
    players, played = _play(9, 4, outcomes)
    _check(players, played)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=4, max_value=24), RESULTS, st.data())
def test_swiss_any_size_pairs_every_round_without_repeats(
    n: int, outcomes: list[Result | None], data: st.DataObject
) -> None:
    # Up to n/2 - 1 rounds a pairing always exists: each player has still
    # not met at least half the others (Dirac's condition on the "not met" graph).
    rounds = data.draw(st.integers(min_value=1, max_value=max(1, n // 2 - 1)))
    players, played = _play(n, rounds, outcomes)
    _check(players, played)
