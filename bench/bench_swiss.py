"""Benchmark the Swiss (FIDE Dutch) pairing: the time, CPU and memory to pair big events,
beside bbpPairings' (the FIDE-endorsed engine) on the same rounds when it is at hand.

Run: .venv/bin/python bench/bench_swiss.py [--sizes 200,500,1000] [--rounds 5] [--seed 1]
                                          [--engine PATH/bbpPairings.exe]
Each size runs in a process of its own (so its peak memory is its own): players
rated 2400 down in steps of 7, each game a random result (White wins 45 %, Black
wins 45 %, draw 10 %), every round paired in turn. Prints each round's pairing
time (wall clock and CPU), then per size the slowest and median round and the
process's peak resident memory (VmHWM, the interpreter's own ~30 MB included).
With an engine (``--engine``, else $BBPPAIRINGS; optional: CI has none) the
engine pairs the same rounds from their TRF: its time, CPU and peak memory are
printed beside ours, and whether its pairing was ours. Targets: 200 players at
most 0.5 s a round, 1,000 at most 10 s. On a shared machine the wall clock waits
for the others: the CPU time is the pairing's own.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arbiter.tournament.model import Game, Pairing, Player, Result  # noqa: E402
from arbiter.tournament.swiss import swiss_round  # noqa: E402
from arbiter.tournament.trf import export_trf  # noqa: E402
from tests.support.proc import memory_mb  # noqa: E402

#: GNU time, which measures the engine's peak memory (its %M).
GNU_TIME = Path("/usr/bin/time")


def engine_round(
    engine: str, players: list[Player], games: list[Game], number: int, total: int
) -> tuple[set[tuple[int, int]], float, float, float]:
    """The engine's pairs of round ``number`` (pairing numbers; 0: the bye), its wall
    clock and CPU seconds, and its peak resident memory in MB (by GNU time: this
    process's own rusage would count the interpreter a child is forked from; 0 when
    /usr/bin/time is missing)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out, peak = Path(tmp, "in.trf"), Path(tmp, "out.txt"), Path(tmp, "peak")
        src.write_text(export_trf("bench", players, games, total), encoding="utf-8")
        timed = ["/usr/bin/time", "-f", "%M", "-o", str(peak)] if GNU_TIME.is_file() else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            [*timed, engine, "--dutch", str(src), "-p", str(out)], capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"engine failed ({done.returncode}): {done.stdout}{done.stderr}")
        numbers = [int(x) for x in out.read_text(encoding="utf-8").split()[1:]]
        peak_mb = int(peak.read_text(encoding="utf-8").split()[-1]) / 1024 if timed else 0.0
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    pairs = {(min(w, b), max(w, b)) if b else (w, 0)
             for w, b in zip(numbers[0::2], numbers[1::2], strict=True)}
    return pairs, wall, cpu, peak_mb


def _as_numbers(players: list[Player], pairings: list[Pairing]) -> set[tuple[int, int]]:
    number = {p.name: i + 1 for i, p in enumerate(players)}
    return {(min(number[p.white], number[p.black]), max(number[p.white], number[p.black]))
            if p.black is not None else (number[p.white], 0) for p in pairings}


def one_size(players_count: int, rounds: int, seed: int, engine: str | None) -> None:
    """Pair ``rounds`` rounds of one event and print the figures (in this process)."""
    rng = random.Random(seed)
    players = [Player(f"Player {i + 1:04d}", max(0, 2400 - 7 * i))
               for i in range(players_count)]
    games: list[Game] = []
    times: list[float] = []
    cpus: list[float] = []
    theirs: list[tuple[float, float, float]] = []
    for number in range(1, rounds + 1):
        start, cpu = time.perf_counter(), time.process_time()
        pairings = swiss_round(players, games, number, rounds)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        line = f"  {players_count} players, round {number}: {times[-1]:.2f} s, CPU {cpus[-1]:.2f} s"
        if engine:
            pairs, wall, engine_cpu, peak = engine_round(engine, players, games, number, rounds)
            theirs.append((wall, engine_cpu, peak))
            same = "same pairs" if pairs == _as_numbers(players, pairings) else "OTHER PAIRS"
            line += f"; bbpPairings {wall:.2f} s, CPU {engine_cpu:.2f} s ({same})"
        print(line, flush=True)
        for p in pairings:
            x = rng.random()
            res = Result.WHITE_WIN if x < 0.45 else Result.BLACK_WIN if x < 0.9 else Result.DRAW
            games.append(Game(p, None if p.is_bye else res))
    print(
        f"{players_count} players, {rounds} rounds: slowest {max(times):.2f} s"
        f" (CPU {max(cpus):.2f} s), median {statistics.median(times):.2f} s"
        f" (CPU {statistics.median(cpus):.2f} s) a round; peak memory"
        f" {memory_mb(os.getpid(), 'VmHWM'):.0f} MB",
        flush=True,
    )
    if theirs:
        walls, engine_cpus, peaks = zip(*theirs, strict=True)
        print(
            f"{players_count} players, bbpPairings: slowest {max(walls):.2f} s"
            f" (CPU {max(engine_cpus):.2f} s), median {statistics.median(walls):.2f} s"
            f" (CPU {statistics.median(engine_cpus):.2f} s) a round; peak memory"
            f" {max(peaks):.0f} MB",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200,500,1000", help="player counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", default=os.environ.get("BBPPAIRINGS"),
                    help="a bbpPairings binary to compare with (default: $BBPPAIRINGS)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child's own size
    args = ap.parse_args()
    engine = args.engine if args.engine and Path(args.engine).is_file() else None
    if args.engine and not engine:
        print(f"no engine at {args.engine}: ours alone", flush=True)
    if args.one:
        one_size(args.one, args.rounds, args.seed, engine)
        return
    for size in (int(s) for s in args.sizes.split(",")):
        subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--rounds", str(args.rounds),
             "--seed", str(args.seed), *(["--engine", engine] if engine else [])],
            check=True,
        )


if __name__ == "__main__":
    main()
