"""Make the Swiss golden files: random events paired round by round by a FIDE-endorsed engine.

Usage: python scripts/make_golden_swiss.py ENGINE [--out tests/tournament/golden]
                                          [--only 500,1000]  (those sizes of EVENTS)
       python scripts/make_golden_swiss.py ENGINE --measure EVENTS   (compare, write nothing)

ENGINE is a bbpPairings binary (``bbpPairings --dutch IN.trf -p OUT``). Each
event (players, rounds, seed below) starts from players rated 2400 down in
steps of 7; every round the engine pairs the TRF of the rounds so far and
each game gets a random result (White wins 45 %, Black wins 45 %, draw 10 %).
The file written is the event's final TRF: round r of it is the engine's
pairing of round r after rounds 1..r-1, which tests/tournament/test_golden.py
compares with ours. Engine code never enters the repository: only its output.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from arbiter.tournament.errors import PairingError
from arbiter.tournament.model import Game, Pairing, Player, Result
from arbiter.tournament.swiss import swiss_round
from arbiter.tournament.trf import export_trf

#: (players, rounds, seed): the issue's sizes up to 101, 5 to 9 rounds, and two big opens
#: (issue 26) of a few rounds; tests/tournament/test_golden.py replays them all in about
#: a minute on a quiet machine, the 1,000 players most of it (more sizes: ``--measure``).
EVENTS = [
    (8, 5, 1), (8, 7, 2), (8, 9, 12), (9, 5, 3), (9, 7, 4), (9, 9, 13), (16, 7, 5),
    (16, 9, 6), (21, 7, 7), (21, 9, 8), (40, 9, 9), (101, 5, 10),
    # The big opens (issue 26): a few rounds each, the engine taking seconds a round.
    (500, 4, 14), (1000, 3, 15),
]


def players_for(n: int) -> list[Player]:
    # Past 343 players the ratings would go below 0: the rest are unrated (TRF: blank).
    return [Player(f"Player {i + 1:03d}", max(0, 2400 - 7 * i)) for i in range(n)]


def engine_round(
    engine: str, players: list[Player], games: list[Game], number: int, total: int
) -> list[Pairing] | None:
    """The engine's pairing of round ``number``; None when it finds no legal pairing."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "in.trf"), Path(tmp, "out.txt")
        src.write_text(export_trf("golden", players, games, total), encoding="utf-8")
        done = subprocess.run(
            [engine, "--dutch", str(src), "-p", str(out)], capture_output=True, text=True
        )
        if done.returncode == 1:
            return None
        if done.returncode != 0:
            sys.exit(f"engine failed ({done.returncode}): {done.stdout}{done.stderr}")
        lines = out.read_text(encoding="utf-8").split()
    nums = [int(x) for x in lines[1:]]
    pairings: list[Pairing] = []
    byes: list[str] = []
    for w, b in zip(nums[0::2], nums[1::2], strict=True):
        if b == 0:
            byes.append(players[w - 1].name)
        else:
            pairings.append(Pairing(number, len(pairings) + 1, players[w - 1].name,
                                    players[b - 1].name))
    pairings += [Pairing(number, len(pairings) + 1 + i, n, None) for i, n in enumerate(byes)]
    return pairings


def play(rng: random.Random, pairings: list[Pairing]) -> list[Game]:
    out = []
    for p in pairings:
        if p.is_bye:
            out.append(Game(p))
            continue
        x = rng.random()
        res = Result.WHITE_WIN if x < 0.45 else Result.BLACK_WIN if x < 0.9 else Result.DRAW
        out.append(Game(p, res))
    return out


def key(pairings: list[Pairing]) -> set[tuple[str, str | None]]:
    return {(p.white, p.black) for p in pairings}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("--out", default="tests/tournament/golden")
    ap.add_argument("--measure", type=int, default=0, help="events per size to compare")
    ap.add_argument("--sizes", default="8,9,16,21,40,101,200")
    ap.add_argument("--only", default="", help="player counts of EVENTS to make, comma-separated")
    args = ap.parse_args()
    if args.measure:
        measure(args.engine, args.measure, [int(s) for s in args.sizes.split(",")])
        return
    only = {int(s) for s in args.only.split(",") if s}
    for n, rounds, seed in EVENTS:
        if only and n not in only:
            continue
        rng = random.Random(seed)
        players = players_for(n)
        games: list[Game] = []
        for number in range(1, rounds + 1):
            pairings = engine_round(args.engine, players, games, number, rounds)
            if pairings is None:
                break
            games += play(rng, pairings)
        path = Path(args.out, f"dutch-{n:03d}p-{rounds}r-seed{seed}.trf")
        path.write_text(export_trf(path.stem, players, games, rounds), encoding="utf-8")
        print(path)


def measure(engine: str, per_size: int, sizes: list[int]) -> None:
    """Share of rounds where our pairing (pairs and colours) equals the engine's."""
    same: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    none: dict[int, int] = defaultdict(int)  # rounds the engine found no legal pairing for
    times: dict[int, float] = defaultdict(float)
    for n in sizes:
        for e in range(per_size):
            rng = random.Random(1000 * n + e)
            rounds = rng.randint(5, 9)
            players = players_for(n)
            games: list[Game] = []
            for number in range(1, rounds + 1):
                theirs = engine_round(engine, players, games, number, rounds)
                t = time.perf_counter()
                try:
                    ours = swiss_round(players, games, number, rounds)
                except PairingError:
                    ours = None
                times[n] += time.perf_counter() - t
                if theirs is None:
                    none[n] += 1
                    same[n][0] += 1
                    same[n][1] += ours is None
                    break
                same[n][0] += 1
                same[n][1] += ours is not None and key(ours) == key(theirs)
                if number > 1:
                    same[n][2] += 1
                    same[n][3] += ours is not None and key(ours) == key(theirs)
                games += play(rng, theirs)
        total, equal, later, later_equal = same[n]
        print(
            f"{n} players: {equal}/{total} rounds identical ({100 * equal / total:.1f} %),"
            f" from round 2 {later_equal}/{later} ({100 * later_equal / max(later, 1):.1f} %),"
            f" {none[n]} of them without a legal pairing,"
            f" ours {1000 * times[n] / total:.0f} ms a round",
            flush=True,
        )


if __name__ == "__main__":
    main()
