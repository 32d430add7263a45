"""Round robin: the published Berger tables, and everyone meets everyone exactly once."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.tournament.errors import PairingError
from arbiter.tournament.roundrobin import berger_round, berger_schedule

# FIDE Handbook, C.05 Annex 1 (Berger tables), by seat number: "white-black".
FIDE_4 = [["1-4", "2-3"], ["4-3", "1-2"], ["2-4", "3-1"]]
FIDE_6 = [
    ["1-6", "2-5", "3-4"],
    ["6-4", "5-3", "1-2"],
    ["2-6", "3-1", "4-5"],
    ["6-5", "1-4", "2-3"],
    ["3-6", "4-2", "5-1"],
]


def _as_seats(n: int) -> list[list[str]]:
    names = [str(i) for i in range(1, n + 1)]
    return [[f"{p.white}-{p.black}" for p in rnd] for rnd in berger_schedule(names)]


@pytest.mark.parametrize(("n", "table"), [(4, FIDE_4), (6, FIDE_6)])
def test_roundrobin_matches_fide_berger_tables(n: int, table: list[list[str]]) -> None:
    assert _as_seats(n) == table


def test_roundrobin_odd_count_gives_the_dummy_seat_as_a_bye() -> None:
    # 3 players use the 4-table; seat 4 is the dummy, so its opponent has the bye.
    rounds = berger_schedule(["1", "2", "3"])
    assert [[(p.white, p.black) for p in r] for r in rounds] == [
        [("2", "3"), ("1", None)],
        [("1", "2"), ("3", None)],
        [("3", "1"), ("2", None)],
    ]


@given(st.integers(min_value=2, max_value=16))
def test_roundrobin_every_pair_meets_exactly_once(n: int) -> None:
    names = [f"P{i}" for i in range(n)]
    schedule = berger_schedule(names)
    met: Counter[frozenset[str]] = Counter()
    whites: Counter[str] = Counter()
    blacks: Counter[str] = Counter()
    byes: Counter[str] = Counter()
    for number, rnd in enumerate(schedule, start=1):
        seen = [name for p in rnd for name in (p.white, p.black) if name is not None]
        assert sorted(seen) == sorted(names), "each player exactly once a round"
        assert [p.board for p in rnd] == list(range(1, len(rnd) + 1))
        assert all(p.round == number for p in rnd)
        for p in rnd:
            if p.black is None:
                byes[p.white] += 1
                continue
            met[frozenset((p.white, p.black))] += 1
            whites[p.white] += 1
            blacks[p.black] += 1
    assert set(met) == {frozenset(pair) for pair in itertools.combinations(names, 2)}
    assert set(met.values()) == {1}
    assert dict(byes) == ({name: 1 for name in names} if n % 2 else {})
    assert all(abs(whites[x] - blacks[x]) <= 1 for x in names)


def test_roundrobin_refuses_rounds_out_of_range_and_one_player() -> None:
    with pytest.raises(PairingError):
        berger_round(["a", "b", "c", "d"], 4)
    with pytest.raises(PairingError):
        berger_round(["a", "b"], 0)
    with pytest.raises(PairingError):
        berger_round(["a"], 1)
