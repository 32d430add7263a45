"""Benchmark the venue with one table that opened many games (issue 27: a stuck NEW GAME
button, or a table login publishing valid ``new_game`` events by the thousand).

Run: .venv/bin/python bench/bench_hub_games.py [--games N] [--tables N] [--fetches N]
Builds round 1 at --tables tables; table 1 publishes --games NEW GAMEs under its own
assignment (as its login can), the others one game each. Then times GET /api/venue, GET /
and GET /organiser (logged in), and one event of another table (its NEW GAME and its
game over: the write the live feed waits for), and prints p50/p99 in milliseconds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.timing

from arbiter import wire  # noqa: E402
from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.tournament.model import Player  # noqa: E402
from bench.timing import organiser_client, percentile, time_gets  # noqa: E402

AT = 1795464000.0


def carried(ledger: Ledger, table: str) -> wire.AssignmentBody:
    """The assignment a table carries into its NEW GAME: the hub's payload, less its format."""
    payload: dict[str, Any] = dict(ledger.admin.assignments(1)[table])
    del payload["format"]
    return wire.check_assignment(payload)


def event(table: str, seq: int, game: int, body: wire.EventBody) -> wire.Event:
    return wire.event(table, seq, game, body)


def build(ledger: Ledger, games: int, tables: int) -> None:
    ledger.admin.add_players([Player(f"Player {i:03d}", 2400 - i) for i in range(2 * tables)])
    ledger.admin.pair_round("swiss")
    for board in range(1, tables + 1):
        ledger.admin.assign_table(1, board, str(board), "bench")
    flood = carried(ledger, "1")
    with ledger.store.batch(durable=False):
        for game in range(1, games + 1):
            ledger.events.record("1", event("1", game, game, wire.new_game(flood, AT)))
        for board in range(2, tables):  # the last table has not begun
            table = str(board)
            ledger.events.record(table, event(table, 1, 1, wire.new_game(
                carried(ledger, table), AT)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--fetches", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        with Ledger(data / "hub.sqlite", "bench") as ledger:
            started = time.perf_counter()
            build(ledger, args.games, args.tables)
            print(f"table 1: {args.games} games, {args.tables} tables"
                  f" (built in {time.perf_counter() - started:.1f} s)")
            client = organiser_client(ledger, data)
            for path in ("/api/venue", "/", "/organiser"):
                times, _ = time_gets(client, path, args.fetches)
                print(f"GET {path}: p50 {percentile(times, 0.5):.1f} ms,"
                      f" p99 {percentile(times, 0.99):.1f} ms")
            last = str(args.tables)
            t0 = time.perf_counter()
            ledger.events.record(last, event(last, 1, 1, wire.new_game(carried(ledger, last),
                                                                        AT)))
            ledger.events.record(last, event(last, 2, 1, wire.game_over("resignation", "W",
                                                                         AT)))
            print(f"another table's NEW GAME and game over: "
                  f"{(time.perf_counter() - t0) * 1000:.1f} ms (two durable writes)")
            t0 = time.perf_counter()
            ledger.events.record("1", event("1", args.games + 1, args.games + 1,
                                            wire.new_game(carried(ledger, "1"), AT)))
            print(f"table 1's next NEW GAME: {(time.perf_counter() - t0) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
