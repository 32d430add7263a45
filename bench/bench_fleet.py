"""Benchmark the tournament link: verdict latency with and without a broker, and how
long after a verdict its event reaches a subscriber.

Run: .venv/bin/python bench/bench_fleet.py [--challenges 1000]

Verdict latency (second reading valid to verdict durable and on the LEDs, battle
phrase off, simulator slots, real signals on mock pins), p50/p99 in ms, for:
no broker configured; broker connected; broker stopped (killed before the run);
broker behind a TCP proxy that accepts and then stalls. Target: each p99 within
1 ms of the no-broker p99. Then, with the broker connected: verdict to the
event's arrival at a subscriber on gg/#, p50/p99 in ms. Needs mosquitto.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.mqtt: the same broker and proxy the tests use

from arbiter.app.assembly import build_arbiter  # noqa: E402
from arbiter.app.config import Config, load_config  # noqa: E402
from arbiter.app.service import start_link  # noqa: E402
from arbiter.fleet.settings import TournamentSettings  # noqa: E402
from arbiter.rules.contenders import Contenders  # noqa: E402
from arbiter.rules.game import ChallengeRefusedError  # noqa: E402
from arbiter.rules.pieces import Piece  # noqa: E402
from arbiter.rules.ranks import Rank, Side  # noqa: E402
from arbiter.rules.verdict import Role  # noqa: E402
from tests.support.mqtt import Mosquitto, Proxy, Subscriber  # noqa: E402


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _config(data_dir: Path, url: str) -> Config:
    config = load_config(None, data_dir=data_dir)
    tournament = TournamentSettings.build(url, "bench", "1") if url else TournamentSettings()
    return dataclasses.replace(
        config,
        signals=dataclasses.replace(config.signals, battle_phrase=False),
        tournament=tournament,
    )


def run_challenges(
    count: int, data_dir: Path, url: str, on_verdict: Callable[[int, int, float], None],
    before_close: Callable[[], None] = lambda: None,
) -> list[float]:
    """Verdict latencies (ms) of ``count`` challenges on a sim table linked to ``url``."""
    config = _config(data_dir, url)
    arbiter = build_arbiter(config, sim=True)
    decided = threading.Event()
    stamp: list[float] = []

    def hook(_elapsed: float) -> None:
        stamp.append(time.perf_counter())
        decided.set()

    arbiter.on_decided = hook
    arbiter.start()
    link = start_link(config, arbiter, lambda _line: None)
    rng = random.Random(1980)
    ranks = [r for r in Rank if r is not Rank.FLAG]
    samples: list[float] = []
    sim = arbiter.sim
    assert sim is not None
    try:
        while len(samples) < count:
            side = rng.choice(list(Side))
            attacker = Piece(side, rng.choice(ranks))
            defender = Piece(side.opponent, rng.choice(ranks))
            try:
                arbiter.store.current.check(Contenders.untagged(attacker, defender))
            except ChallengeRefusedError:
                if rng.random() < 0.05:
                    arbiter.new_game()
                continue
            decided.clear()
            stamp.clear()
            sim.seat(Role.ATTACKER, str(attacker))
            t0 = time.perf_counter()
            sim.seat(Role.DEFENDER, str(defender))
            if not decided.wait(5):
                raise RuntimeError(f"no verdict: {arbiter.status()}")
            samples.append((stamp[0] - t0) * 1000)
            game = arbiter.store.current
            on_verdict(game.id, game.challenge_count, stamp[0])
            sim.clear(Role.ATTACKER)
            sim.clear(Role.DEFENDER)
            deadline = time.monotonic() + 5
            while arbiter.status()["state"] not in ("idle", "game_over"):
                if time.monotonic() > deadline:
                    raise RuntimeError("device did not return to idle")
                time.sleep(0.0005)
        before_close()
    finally:
        if link is not None:
            link.close()
        arbiter.close()
    return samples


def _line(name: str, samples: list[float]) -> str:
    return (f"{name:<34} p50 {percentile(samples, 0.5):7.3f} ms   "
            f"p99 {percentile(samples, 0.99):7.3f} ms   (n={len(samples)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=1000)
    parser.add_argument("--switchinterval", type=float, default=None,
                        help="sys.setswitchinterval for the run (default: Python's 0.005 s)")
    args = parser.parse_args()
    if args.switchinterval:
        sys.setswitchinterval(args.switchinterval)
    n = args.challenges
    print(f"tournament link, {n} challenges per case (battle phrase off), "
          f"switch interval {sys.getswitchinterval() * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        broker = Mosquitto(root / "broker").start()
        try:
            def nothing(_g: int, _n: int, _t: float) -> None:
                return None

            base = run_challenges(n, root / "none", "", nothing)
            print(_line("no broker configured", base))

            arrived: dict[tuple[int, int], float] = {}
            verdicts: dict[tuple[int, int], float] = {}
            sub = Subscriber(broker.port, "gg/bench/table/1/events")
            lock = threading.Lock()
            original = sub._on_message

            def timed(client: object, userdata: object, message: object) -> None:
                now = time.perf_counter()
                event = json.loads(message.payload)  # type: ignore[attr-defined]
                if event.get("type") == "challenge":
                    with lock:
                        arrived.setdefault((event["game"], event["number"]), now)
                original(client, userdata, message)  # type: ignore[arg-type]

            sub.client.on_message = timed

            def verdict_at(game: int, number: int, at: float) -> None:
                verdicts[(game, number)] = at

            def all_arrived() -> None:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    with lock:
                        if all(k in arrived for k in verdicts):
                            return
                    time.sleep(0.05)

            connected = run_challenges(n, root / "connected", broker.url, verdict_at,
                                       all_arrived)
            print(_line("broker connected", connected))
            delays = [(arrived[k] - verdicts[k]) * 1000 for k in verdicts if k in arrived]
            sub.close()

            stalled_proxy = Proxy(broker.port)
            stalled_proxy.mode = "stall"
            stalled = run_challenges(n, root / "stalled", f"mqtt://127.0.0.1:{stalled_proxy.port}",
                                     nothing)
            stalled_proxy.close()

            broker.kill()
            stopped = run_challenges(n, root / "stopped", broker.url, nothing)
            print(_line("broker stopped", stopped))
            print(_line("broker behind a stalled TCP proxy", stalled))
            print(_line("verdict to subscriber (connected)", delays))
            worst = max(percentile(s, 0.99) for s in (connected, stopped, stalled))
            slack = worst - percentile(base, 0.99)
            print(f"worst p99 with a broker minus no-broker p99: {slack:+.3f} ms "
                  f"({'within' if slack <= 1.0 else 'OVER'} the 1 ms target); "
                  f"events received {len(delays)}/{len(verdicts)}")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
