"""Every one of the 225 rank pairs against RULES.md, written as an independent oracle."""

from __future__ import annotations

import itertools

import pytest

from arbiter.rules.ranks import Rank
from arbiter.rules.verdict import Role, Survivor, resolve

# The rules of RULES.md restated over rank codes, independently of arbiter.rules.verdict.
OFFICERS = ["5*G", "4*G", "3*G", "2*G", "1*G", "COL", "LTC", "MAJ", "CPT", "1LT", "2LT", "SGT"]
CODES = [*OFFICERS, "PVT", "SPY", "FLG"]


def oracle(a: str, d: str) -> tuple[str, str | None]:
    """(survivor, fallen flag slot) by the seven rules."""
    if a == d == "FLG":  # rule 6: flag vs flag, the challenger wins
        return "attacker", "defender"
    if d == "FLG":  # rule 5: any piece eliminates the Flag
        return "attacker", "defender"
    if a == "FLG":
        return "defender", "attacker"
    if a == d:  # rule 7: equal ranks split
        return "none", None

    def eliminates(x: str, y: str) -> bool:
        if x in OFFICERS and y in OFFICERS:  # rule 1
            return OFFICERS.index(x) < OFFICERS.index(y)
        if x in OFFICERS and y == "PVT":  # rule 2
            return True
        if x == "SPY" and y in OFFICERS:  # rule 3
            return True
        return x == "PVT" and y == "SPY"  # rule 4

    if eliminates(a, d):
        return "attacker", None
    if eliminates(d, a):
        return "defender", None
    raise AssertionError(f"the rules do not decide {a} vs {d}")


PAIRS = list(itertools.product(CODES, CODES))


def test_verdict_matrix_has_225_pairs() -> None:
    assert len(PAIRS) == 225
    assert sorted(CODES) == sorted(r.code for r in Rank)


@pytest.mark.parametrize(("attacker", "defender"), PAIRS)
def test_verdict_resolve_matches_rules(attacker: str, defender: str) -> None:
    survivor, fallen = oracle(attacker, defender)
    verdict = resolve(Rank.from_code(attacker), Rank.from_code(defender))
    assert verdict.survivor.value == survivor
    assert (verdict.fallen_flag.value if verdict.fallen_flag else None) == fallen
    assert verdict.flag_fell == ("FLG" in (attacker, defender))


@pytest.mark.parametrize(
    ("attacker", "defender", "survivor"),
    [
        (Rank.SPY, Rank.GENERAL_OF_THE_ARMY, Survivor.ATTACKER),
        (Rank.GENERAL_OF_THE_ARMY, Rank.SPY, Survivor.DEFENDER),
        (Rank.PRIVATE, Rank.SPY, Survivor.ATTACKER),
        (Rank.SPY, Rank.PRIVATE, Survivor.DEFENDER),
        (Rank.SERGEANT, Rank.PRIVATE, Survivor.ATTACKER),
        (Rank.PRIVATE, Rank.SERGEANT, Survivor.DEFENDER),
        (Rank.SPY, Rank.SERGEANT, Survivor.ATTACKER),
        (Rank.FLAG, Rank.FLAG, Survivor.ATTACKER),
        (Rank.PRIVATE, Rank.FLAG, Survivor.ATTACKER),
        (Rank.FLAG, Rank.PRIVATE, Survivor.DEFENDER),
        (Rank.FLAG, Rank.SPY, Survivor.DEFENDER),
        (Rank.COLONEL, Rank.LIEUTENANT_COLONEL, Survivor.ATTACKER),
    ],
)
def test_verdict_spot_checks(attacker: Rank, defender: Rank, survivor: Survivor) -> None:
    assert resolve(attacker, defender).survivor is survivor


def test_verdict_flag_vs_flag_challenger_wins_both_ways() -> None:
    verdict = resolve(Rank.FLAG, Rank.FLAG)
    assert verdict.survivor is Survivor.ATTACKER
    assert verdict.fallen_flag is Role.DEFENDER
    assert verdict.eliminated == (Role.DEFENDER,)


@pytest.mark.parametrize("rank", [r for r in Rank if r is not Rank.FLAG])
def test_verdict_equal_ranks_split(rank: Rank) -> None:
    verdict = resolve(rank, rank)
    assert verdict.survivor is Survivor.NONE
    assert verdict.survivor.public_word == "split"
    assert set(verdict.eliminated) == {Role.ATTACKER, Role.DEFENDER}
    assert not verdict.flag_fell
