"""Benchmark the Swiss (FIDE Dutch) pairing: the time and memory to pair big events.

Run: .venv/bin/python bench/bench_swiss.py [--sizes 200,500,1000] [--rounds 5] [--seed 1]
Each size runs in a process of its own (so its peak memory is its own): players
rated 2400 down in steps of 7, each game a random result (White wins 45 %, Black
wins 45 %, draw 10 %), every round paired in turn. Prints each round's pairing
time, then per size the slowest and median round and the process's peak resident
memory (VmHWM, the interpreter's own ~30 MB included). Targets: 200 players at
most 0.5 s a round, 1,000 at most 10 s.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arbiter.tournament.model import Game, Player, Result  # noqa: E402
from arbiter.tournament.swiss import swiss_round  # noqa: E402
from tests.support.proc import memory_mb  # noqa: E402


def one_size(players_count: int, rounds: int, seed: int) -> None:
    """Pair ``rounds`` rounds of one event and print the figures (in this process)."""
    rng = random.Random(seed)
    players = [Player(f"Player {i + 1:04d}", 2400 - 7 * i) for i in range(players_count)]
    games: list[Game] = []
    times: list[float] = []
    for number in range(1, rounds + 1):
        start = time.perf_counter()
        pairings = swiss_round(players, games, number, rounds)
        times.append(time.perf_counter() - start)
        print(f"  {players_count} players, round {number}: {times[-1]:.2f} s", flush=True)
        for p in pairings:
            x = rng.random()
            res = Result.WHITE_WIN if x < 0.45 else Result.BLACK_WIN if x < 0.9 else Result.DRAW
            games.append(Game(p, None if p.is_bye else res))
    print(
        f"{players_count} players, {rounds} rounds: slowest {max(times):.2f} s, median"
        f" {statistics.median(times):.2f} s a round; peak memory"
        f" {memory_mb(os.getpid(), 'VmHWM'):.0f} MB",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,500,1000", help="player counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child's own size
    args = ap.parse_args()
    if args.one:
        one_size(args.one, args.rounds, args.seed)
        return
    for size in (int(s) for s in args.sizes.split(",")):
        subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--rounds", str(args.rounds),
             "--seed", str(args.seed)],
            check=True,
        )


if __name__ == "__main__":
    main()
