"""Child process for the ledger's kill -9 test: records table events forever.

Each event is a pure function of (table, seq) (:func:`event_for`), so the
parent can check every stored one. Prints ``ack TABLE SEQ`` once
``ledger.events.record`` has returned, and now and then re-sends the previous event
(a table repeating itself), which must be a no-op.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from arbiter import wire
from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Player
from tests.support.contract import assigned, challenge, game_over, new_game

TABLES = ("T1", "T2", "T3")
EVENT = "kill-test"
#: Events per game: new_game, four challenges, game_over.
PER_GAME = 6


def setup(ledger: Ledger) -> None:
    """Players, round 1 of a round robin, and its boards at the tables; each step resumable."""
    if not ledger.admin.players():
        ledger.admin.add_players([Player(f"P{i}") for i in range(1, 7)])
    if not ledger.admin.rounds():
        ledger.admin.pair_round("round-robin")
    for row, table in zip(ledger.admin.pairings(1), TABLES, strict=True):
        if row.table is None:
            ledger.admin.assign_table(1, row.pairing.board, table, who="child")


def event_for(ledger_pairings: dict[str, wire.AssignmentBody], table: str, seq: int) -> Any:
    """The seq-th event of ``table``: games of six events; only the first is assigned."""
    number, step = divmod(seq - 1, PER_GAME)
    game = f"g{number + 1}"
    if step == 0:
        a = ledger_pairings[table] if number == 0 else None
        return new_game(table, seq, game, a)
    if step < PER_GAME - 1:
        return challenge(table, seq, game, step, step // 2, (step + 1) // 2)
    winner = ("W", "B", None)[(seq + len(table)) % 3]
    return game_over(table, seq, game, "draw" if winner is None else "flag_captured", winner)


def boards(ledger: Ledger) -> dict[str, wire.AssignmentBody]:
    """Each table's assignment, as the table carries it into its NEW GAME."""
    out: dict[str, wire.AssignmentBody] = {}
    for row in ledger.admin.pairings(1):
        assert row.table is not None and row.pairing.black is not None
        out[row.table] = assigned(ledger, 1, row.pairing.board)
    return out


def main(path: str, seed: int) -> None:
    rng = random.Random(seed)
    ledger = Ledger(path, EVENT)
    setup(ledger)
    where = boards(ledger)
    print("ready", flush=True)
    while True:
        table = rng.choice(TABLES)
        seq = ledger.events.last_seq(table) + 1
        ledger.events.record(table, event_for(where, table, seq))
        print("ack", table, seq, flush=True)
        if seq > 1 and rng.random() < 0.2:
            assert ledger.events.record(table, event_for(where, table, seq - 1)) is False


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
