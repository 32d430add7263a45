"""Benchmark the rules core: ``resolve`` and durable ``accept`` (fsync included).

Run: .venv/bin/python bench/bench_core.py [--challenges N] [--data DIR]
Prints p50/p99 in microseconds/milliseconds. Target: durable accept p99 <= 10 ms.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.timing

from arbiter.rules.contenders import Contenders  # noqa: E402
from arbiter.rules.errors import ChallengeRefusedError  # noqa: E402
from arbiter.rules.pieces import Piece  # noqa: E402
from arbiter.rules.ranks import Rank, Side  # noqa: E402
from arbiter.rules.verdict import resolve  # noqa: E402
from arbiter.storage.journal import GameStore  # noqa: E402
from bench.timing import percentile  # noqa: E402


def bench_resolve(rounds: int) -> list[float]:
    pairs = list(itertools.product(Rank, Rank))
    samples = []
    for _ in range(rounds):
        for a, d in pairs:
            t0 = time.perf_counter_ns()
            resolve(a, d)
            samples.append((time.perf_counter_ns() - t0) / 1000)
    return samples


def bench_accept(data_dir: Path, count: int, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    ranks = [r for r in Rank if r is not Rank.FLAG]
    samples: list[float] = []
    with GameStore(data_dir) as store:
        while len(samples) < count:
            side = rng.choice(list(Side))
            attacker = Piece(side, rng.choice(ranks))
            defender = Piece(side.opponent, rng.choice(ranks))
            try:
                store.current.check(Contenders.untagged(attacker, defender))
            except ChallengeRefusedError:
                if rng.random() < 0.05:
                    store.new_game()
                continue
            t0 = time.perf_counter()
            store.accept(Contenders.untagged(attacker, defender))
            samples.append((time.perf_counter() - t0) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=10_000)
    parser.add_argument("--data", help="directory on the disk to measure (default: a temp dir)")
    args = parser.parse_args()
    r = bench_resolve(200)
    print(
        f"resolve: {len(r)} calls  p50 {percentile(r, .5):.2f} us  "
        f"p99 {percentile(r, .99):.2f} us"
    )
    with tempfile.TemporaryDirectory(dir=args.data) as tmp:
        a = bench_accept(Path(tmp), args.challenges)
    print(
        f"durable accept (fsync): {len(a)} challenges  p50 {percentile(a, .5):.3f} ms  "
        f"p99 {percentile(a, .99):.3f} ms  max {max(a):.3f} ms  mean {statistics.mean(a):.3f} ms"
    )
    print(f"target p99 <= 10 ms: {'met' if percentile(a, .99) <= 10 else 'MISSED'}")


if __name__ == "__main__":
    main()
