"""Every one of the 225 rank pairs against RULES.md, as restated by tests/support/oracle.py."""

from __future__ import annotations

import itertools

import pytest

from arbiter.rules.ranks import Rank
from arbiter.rules.verdict import Role, Survivor, resolve
from tests.support.oracle import CODES, oracle

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
