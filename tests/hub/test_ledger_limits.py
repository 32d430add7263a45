"""A table's games a round are limited (issue 27): naming rounds this ledger never paired
opens no more, and a flood's flags do not depend on the order its events arrive in."""

from __future__ import annotations

import random
from pathlib import Path

from arbiter.hub.ledger import MAX_GAMES_PER_ROUND, Ledger
from arbiter.tournament.model import Pairing, Player
from tests.support.contract import assigned, assignment, new_game


def _paired(path: Path) -> Ledger:
    ledger = Ledger(path, "club")
    ledger.admin.add_players([Player("Ana"), Player("Ben")])
    ledger.admin.add_round([Pairing(1, 1, "Ana", "Ben")])
    ledger.admin.assign_table(1, 1, "T1", "org")
    return ledger


def test_limit_naming_unpaired_rounds_opens_no_more_games(tmp_path: Path) -> None:
    with _paired(tmp_path / "l.sqlite") as ledger:
        seq = 0
        for rnd in range(2, 52):  # 50 rounds never paired, 5 games each
            for _ in range(5):
                seq += 1
                ledger.events.record("T1", new_game("T1", seq, str(seq),
                                                    assignment(rnd, 1, "Ana", "Ben")))
        assert ledger.events.over_limit() == [("T1", None, 250 - MAX_GAMES_PER_ROUND)]
        # The round paired here keeps its own limit: its game is in, and counts.
        ledger.events.record("T1", new_game("T1", seq + 1, "real", assigned(ledger, 1, 1)))
        assert [g.game for g in ledger.events.games("T1") if not g.over_limit
                and g.round == 1] == ["real"]


def test_limit_flags_do_not_depend_on_arrival_order(tmp_path: Path) -> None:
    flags = []
    for n, shuffle in enumerate((False, True, True)):
        with _paired(tmp_path / f"{n}.sqlite") as ledger:
            a = assigned(ledger, 1, 1)
            seqs = list(range(1, 3 * MAX_GAMES_PER_ROUND + 1))
            if shuffle:
                random.Random(n).shuffle(seqs)
            for seq in seqs:
                ledger.events.record("T1", new_game("T1", seq, f"g{seq:03d}", a))
            flags.append(sorted(g.game for g in ledger.events.games() if g.over_limit))
            assert ledger.archive.verify() == []
    assert flags[0] == [f"g{s:03d}" for s in range(MAX_GAMES_PER_ROUND + 1,
                                                   3 * MAX_GAMES_PER_ROUND + 1)]
    assert flags[1] == flags[0] and flags[2] == flags[0]
