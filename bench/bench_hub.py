"""Benchmark the tournament hub's core: durable events.record, Swiss pairing, standings.

Run: .venv/bin/python bench/bench_hub.py [--events N] [--players N] [--rounds N] [--data DIR]
Prints events.record p50/p99 in milliseconds (an fsynced SQLite commit each, on
the disk of --data), the time to pair each Swiss round of a --players event
(random results), and the time to compute the standings after the last round.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.timing

from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.tournament.model import Game, Player, Result  # noqa: E402
from arbiter.tournament.standings import standings  # noqa: E402
from arbiter.tournament.swiss import swiss_round  # noqa: E402
from bench.timing import percentile  # noqa: E402


def _event(table: str, seq: int) -> dict[str, Any]:
    game = f"g{(seq - 1) // 30 + 1}"
    if (seq - 1) % 30 == 0:
        return {"format": 1, "table": table, "seq": seq, "game": game, "type": "new_game",
                "assignment": None, "at": 1795464000.0}
    return {"format": 1, "table": table, "seq": seq, "game": game, "type": "challenge",
            "number": (seq - 1) % 30, "attacker_side": "W", "result": "attacker",
            "eliminated": {"W": 0, "B": 1}, "at": 1795464000.0}


def bench_record(data: Path, count: int, tables: int = 20) -> list[float]:
    samples: list[float] = []
    with Ledger(data / "bench.sqlite", "bench") as ledger:
        for i in range(count):
            table = f"T{i % tables + 1}"
            seq = i // tables + 1
            t0 = time.perf_counter()
            ledger.events.record(table, _event(table, seq))
            samples.append((time.perf_counter() - t0) * 1000)
    return samples


def bench_swiss(players: int, rounds: int, seed: int = 5) -> tuple[list[float], float]:
    rng = random.Random(seed)
    entrants = [Player(f"P{i:03d}", rating=2400 - i) for i in range(players)]
    games: list[Game] = []
    times: list[float] = []
    for number in range(1, rounds + 1):
        t0 = time.perf_counter()
        pairings = swiss_round(entrants, games, number)
        times.append(time.perf_counter() - t0)
        games += [
            Game(p, None if p.is_bye else rng.choice(list(Result))) for p in pairings
        ]
    t0 = time.perf_counter()
    standings(entrants, games)
    return times, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--players", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--data", type=Path, help="directory for the ledger (default: a temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp)
        samples = bench_record(data, args.events)
    print(f"events.record ({args.events} events, fsynced): "
          f"p50 {percentile(samples, 0.5):.2f} ms, p99 {percentile(samples, 0.99):.2f} ms")
    times, standing = bench_swiss(args.players, args.rounds)
    print(f"Swiss, {args.players} players: round times "
          + ", ".join(f"{t * 1000:.0f}" for t in times)
          + f" ms (max {max(times) * 1000:.0f} ms)")
    print(f"standings after {args.rounds} rounds: {standing * 1000:.0f} ms")


if __name__ == "__main__":
    main()
