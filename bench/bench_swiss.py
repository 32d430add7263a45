"""Benchmark the Swiss (FIDE Dutch) pairing: the time to pair each round of a big event.

Run: .venv/bin/python bench/bench_swiss.py [--players 200] [--rounds 9] [--seed 1]
Players rated 2400 down in steps of 7; each game a random result (White wins
45 %, Black wins 45 %, draw 10 %). Prints each round's pairing time, then the
median and the slowest. The target is 2 s a round for 200 players.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from arbiter.tournament.model import Game, Player, Result
from arbiter.tournament.swiss import swiss_round


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    players = [Player(f"Player {i + 1:03d}", 2400 - 7 * i) for i in range(args.players)]
    games: list[Game] = []
    times: list[float] = []
    for number in range(1, args.rounds + 1):
        start = time.perf_counter()
        pairings = swiss_round(players, games, number, args.rounds)
        times.append(time.perf_counter() - start)
        print(f"round {number}: {times[-1]:.2f} s", flush=True)
        for p in pairings:
            x = rng.random()
            res = Result.WHITE_WIN if x < 0.45 else Result.BLACK_WIN if x < 0.9 else Result.DRAW
            games.append(Game(p, None if p.is_bye else res))
    print(
        f"{args.players} players, {args.rounds} rounds: median {statistics.median(times):.2f} s,"
        f" slowest {max(times):.2f} s a round"
    )


if __name__ == "__main__":
    main()
