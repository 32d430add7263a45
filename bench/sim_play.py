"""Random legal challenges played on a simulator arbiter, each verdict timed.

Shared by the benchmarks that time the device's verdicts (bench_device,
bench_fleet): pieces are seated in the simulator's slots as a player would,
the clock runs from the second slot's reading to the verdict hook, and the
pieces are lifted again until the device is back to idle.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import ChallengeRefusedError
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import Role


class SimPlayer:
    """Plays random challenges on ``arbiter`` (built with ``sim=True``), seeded by ``seed``.

    Installs itself as the arbiter's ``on_decided`` hook. ``samples`` holds each
    verdict's latency (ms); ``verdicts`` maps (game id, challenge number) to the
    ``perf_counter`` time its verdict was decided.
    """

    def __init__(self, arbiter: Any, seed: int = 1980) -> None:
        self.arbiter = arbiter
        self.rng = random.Random(seed)
        self.samples: list[float] = []
        self.verdicts: dict[tuple[int, int], float] = {}
        self._decided = threading.Event()
        self._stamp: list[float] = []
        arbiter.on_decided = self._hook

    def _hook(self, _elapsed: float) -> None:
        self._stamp.append(time.perf_counter())
        self._decided.set()

    def play(self, count: int, gap: float = 0.0) -> None:
        """Play ``count`` more challenges, pieces left seated ``gap`` s after each verdict
        (players lifting them and bringing the next two); a refused pairing of pieces is
        skipped, and now and then starts a new game."""
        arbiter, rng = self.arbiter, self.rng
        ranks = [r for r in Rank if r is not Rank.FLAG]
        sim = arbiter.sim
        assert sim is not None, "SimPlayer needs an arbiter built with sim=True"
        goal = len(self.samples) + count
        while len(self.samples) < goal:
            side = rng.choice(list(Side))
            attacker = Piece(side, rng.choice(ranks))
            defender = Piece(side.opponent, rng.choice(ranks))
            try:
                arbiter.store.current.check(Contenders.untagged(attacker, defender))
            except ChallengeRefusedError:
                if rng.random() < 0.05:
                    arbiter.new_game()
                continue
            self._decided.clear()
            self._stamp.clear()
            sim.seat(Role.ATTACKER, str(attacker))
            t0 = time.perf_counter()
            sim.seat(Role.DEFENDER, str(defender))  # the second reading is valid now
            if not self._decided.wait(5):
                raise RuntimeError(f"no verdict: {arbiter.status()}")
            self.samples.append((self._stamp[0] - t0) * 1000)
            game = arbiter.store.current
            self.verdicts[(game.id, game.challenge_count)] = self._stamp[0]
            if gap:
                time.sleep(gap)
            sim.clear(Role.ATTACKER)
            sim.clear(Role.DEFENDER)
            deadline = time.monotonic() + 5
            while arbiter.status()["state"] not in ("idle", "game_over"):
                if time.monotonic() > deadline:
                    raise RuntimeError("device did not return to idle")
                time.sleep(0.0005)
