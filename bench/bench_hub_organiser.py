"""Benchmark the organiser page's live fetch at a big event: what one open organiser
page costs the hub each time it refreshes its parts.

Run: .venv/bin/python bench/bench_hub_organiser.py [--players N] [--rounds N] [--fetches N]
Builds a ledger of --players players over --rounds Swiss rounds (each board at
its own table, every result in), then times GET /organiser/live (the page's
live parts, logged in) and GET /organiser, and prints p50/p99 in milliseconds
and the size of the answer.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.timing

from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.tournament.model import Player, Result  # noqa: E402
from bench.timing import organiser_client, percentile, time_gets  # noqa: E402


def build(ledger: Ledger, players: int, rounds: int, rng: random.Random) -> None:
    ledger.admin.add_players([Player(f"Player {i:03d}", 2400 - i) for i in range(players)])
    for number in range(1, rounds + 1):
        for p in ledger.admin.pair_round("swiss"):
            if p.black is None:
                continue
            ledger.admin.assign_table(number, p.board, str(p.board), "bench")
            ledger.admin.correct_result(number, p.board, rng.choice(list(Result)), "bench")
    for table in range(1, players // 2 + 1):
        ledger.tables.set_online(str(table), True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fetches", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        with Ledger(data / "hub.sqlite", "bench") as ledger:
            started = time.perf_counter()
            build(ledger, args.players, args.rounds, random.Random(7))
            print(f"event: {args.players} players, {args.rounds} rounds, "
                  f"{len(ledger.tables.names())} tables"
                  f" (built in {time.perf_counter() - started:.1f} s)")
            client = organiser_client(ledger, data)
            for path in ("/organiser/live", "/organiser"):
                times, size = time_gets(client, path, args.fetches)
                print(f"GET {path}: p50 {percentile(times, 0.5):.0f} ms, "
                      f"p99 {percentile(times, 0.99):.0f} ms, {size / 1024:.0f} KB")

if __name__ == "__main__":
    main()
