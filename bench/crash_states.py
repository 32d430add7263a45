"""Power-cut crash states of the game journal, explored larger than the test does.

Run: .venv/bin/python bench/crash_states.py [--plans N] [--length L] [--max-per-cut K]
Needs strace (bash setup.sh --dev installs it). Records N random plans of L steps
(challenges, NEW GAME, resignations, tag enrollments) under strace, builds every crash state a
power cut could leave after each call (bounded as :mod:`tests.support.crash`
says), recovers each with ``GameStore(repair=True)`` and checks it. Then does the
same with the fsync of the journal's append, of its whole-file rewrite, and of
the tag registry's write removed, and with NEW GAME's order and the outbox's walk as they
were before issue 19: those must fail (each plan stops at its fifth failing state). Each
state is also checked for the broker outbox's events (no renumbering, no ending skipped).
Prints calls, cut points, states checked and failures.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.crash import Report, explore


def _plan(rng: random.Random, length: int) -> str:
    return "".join(rng.choices("cnrt", weights=(8, 2, 1, 1), k=length))


def _run(
    plans: list[str], mutation: str, max_per_cut: int, stop_after: int, walk: str
) -> tuple[Report, float]:
    total = Report()
    started = time.perf_counter()
    for seed, plan in enumerate(plans, 1):
        report = explore(
            plan, seed=seed, mutation=mutation, max_per_cut=max_per_cut, stop_after=stop_after,
            walk=walk,
        )
        total.calls += report.calls
        total.cuts += report.cuts
        total.states += report.states
        total.failures += [f"plan {plan} seed {seed}: {f}" for f in report.failures]
    return total, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plans", type=int, default=10)
    parser.add_argument("--length", type=int, default=30)
    parser.add_argument("--max-per-cut", type=int, default=256)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # each recovered state logs its repairs
    rng = random.Random(args.seed)
    plans = [_plan(rng, args.length) for _ in range(args.plans)]
    ok = True
    for mutation, walk, label in (
        ("", "outbox", "journal as shipped"),
        ("append", "outbox", "without the append's fsync"),
        ("rewrite", "outbox", "without the rewrite's fsync"),
        ("registry", "outbox", "without the registry's fsync"),
        # Issue 19: NEW GAME's old order and the outbox's old walk past an open game.
        ("order", "past-open", "NEW GAME race put back"),
    ):
        # A mutated journal fails in most states; the first few per plan prove it.
        stop = 5 if mutation else 0
        report, seconds = _run(plans, mutation, args.max_per_cut, stop, walk)
        print(f"{label:30} {report} ({seconds:.1f} s)")
        for failure in report.failures[:3]:
            print(f"    {failure}")
        ok = ok and (not report.failures if not mutation else bool(report.failures))
    print("PASS: the journal survives every state; each mutation is caught" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
