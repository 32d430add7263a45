"""Benchmark the tournament link: verdict latency with and without a broker, and how
long after a verdict its event reaches a subscriber.

Run: .venv/bin/python bench/bench_fleet.py [--challenges 1000] [--gap 0.05]

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
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.mqtt: the same broker and proxy the tests use

from arbiter.app.assembly import build_arbiter  # noqa: E402
from arbiter.app.config import Config, load_config  # noqa: E402
from arbiter.app.service import start_link  # noqa: E402
from arbiter.fleet.settings import TournamentSettings  # noqa: E402
from bench.sim_play import SimPlayer  # noqa: E402
from bench.timing import percentile  # noqa: E402
from tests.support.mqtt import Mosquitto, Proxy, Subscriber  # noqa: E402


def _config(data_dir: Path, url: str) -> Config:
    config = load_config(None, data_dir=data_dir)
    tournament = TournamentSettings.build(url, "bench", "1") if url else TournamentSettings()
    return dataclasses.replace(
        config,
        signals=dataclasses.replace(config.signals, battle_phrase=False),
        tournament=tournament,
    )


class BenchTable:
    """A sim table linked to ``url`` (none: empty), with the verdict hook in place."""

    def __init__(self, name: str, data_dir: Path, url: str) -> None:
        self.name = name
        self.config = _config(data_dir, url)
        self.arbiter = build_arbiter(self.config, sim=True)
        self.arbiter.start()
        self.link = start_link(self.config, self.arbiter, lambda _line: None)
        self.player = SimPlayer(self.arbiter)

    @property
    def samples(self) -> list[float]:
        return self.player.samples

    @property
    def verdicts(self) -> dict[tuple[int, int], float]:
        return self.player.verdicts

    def challenges(self, count: int, gap: float) -> None:
        """Play ``count`` more challenges ``gap`` s apart; record each verdict's latency (ms)."""
        self.player.play(count, gap)

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
        self.arbiter.close()


def _line(name: str, samples: list[float]) -> str:
    return (f"{name:<34} p50 {percentile(samples, 0.5):7.3f} ms   "
            f"p99 {percentile(samples, 0.99):7.3f} ms   (n={len(samples)})")


class Arrivals:
    """When each challenge event reached a subscriber on the table's events topic."""

    def __init__(self, port: int) -> None:
        self.at: dict[tuple[int, int], float] = {}
        self.lock = threading.Lock()
        self.sub = Subscriber(port, "gg/bench/table/1/events")
        self.sub.client.on_message = self._on_message

    def _on_message(self, _client: object, _userdata: object, message: object) -> None:
        now = time.perf_counter()
        event = json.loads(message.payload)  # type: ignore[attr-defined]
        if event.get("type") == "challenge":
            with self.lock:
                self.at.setdefault((event["game"], event["number"]), now)

    def wait_for(self, keys: list[tuple[int, int]], timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(k in self.at for k in keys):
                    return
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=1000)
    parser.add_argument("--round", type=int, default=50,
                        help="challenges per case per round: the cases take turns, so a "
                             "busy machine weighs on each alike")
    parser.add_argument("--gap", type=float, default=0.05,
                        help="seconds between one verdict and the next pair (a real table's "
                             "challenges are seconds apart, longer than the link's 20 ms "
                             "settle); 0 plays them back to back, the publisher's work then "
                             "overlapping the next verdict")
    parser.add_argument("--switchinterval", type=float, default=None,
                        help="sys.setswitchinterval for the run (default: Python's 0.005 s)")
    args = parser.parse_args()
    if args.switchinterval:
        sys.setswitchinterval(args.switchinterval)
    n = args.challenges
    print(f"tournament link, {n} challenges per case in rounds of {args.round} "
          f"{args.gap * 1000:.0f} ms apart (battle phrase off), "
          f"switch interval {sys.getswitchinterval() * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        broker = Mosquitto(root / "broker").start()
        stalled_proxy = Proxy(broker.port)
        stalled_proxy.mode = "stall"
        arrivals = Arrivals(broker.port)
        nobody = Mosquitto(root / "nobody")  # its port, with no broker started: a stopped broker
        tables = [
            BenchTable("no broker configured", root / "none", ""),
            BenchTable("broker connected", root / "connected", broker.url),
            BenchTable("broker stopped", root / "stopped", nobody.url),
            BenchTable("broker behind a stalled TCP proxy", root / "stalled",
                       f"mqtt://127.0.0.1:{stalled_proxy.port}"),
        ]
        try:
            done = 0
            while done < n:
                step = min(args.round, n - done)
                for table in tables:
                    table.challenges(step, args.gap)
                done += step
            connected = tables[1]
            arrivals.wait_for(list(connected.verdicts))
            delays = [(arrivals.at[k] - t) * 1000 for k, t in connected.verdicts.items()
                      if k in arrivals.at]
            for table in tables:
                print(_line(table.name, table.samples))
            print(_line("verdict to subscriber (connected)", delays))
            base = percentile(tables[0].samples, 0.99)
            worst = max(percentile(t.samples, 0.99) for t in tables[1:])
            slack = worst - base
            print(f"worst p99 with a broker minus no-broker p99: {slack:+.3f} ms "
                  f"({'within' if slack <= 1.0 else 'OVER'} the 1 ms target); "
                  f"events received {len(delays)}/{len(connected.verdicts)}")
        finally:
            for table in tables:
                table.close()
            arrivals.sub.close()
            stalled_proxy.close()
            broker.stop()


if __name__ == "__main__":
    main()
