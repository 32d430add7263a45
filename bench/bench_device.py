"""Benchmark the device: verdict latency, idle CPU, memory and start-up time.

Run: .venv/bin/python bench/bench_device.py [--challenges 1000] [--idle-seconds 30]

- verdict latency: from the second slot's reading becoming valid to the
  verdict durable (fsync) and the LED driven, battle phrase off, over the
  simulator's slots with the real signals on gpiozero mock pins;
- start to ready: ``gg-arbiter run --sim`` launched until /api/status answers;
- idle CPU: that process's CPU time over ``--idle-seconds`` with the page server up;
- resident memory (VmRSS) of that process.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench.sim_play

from arbiter.app.assembly import build_arbiter  # noqa: E402
from arbiter.app.config import load_config  # noqa: E402
from bench.sim_play import SimPlayer  # noqa: E402
from bench.timing import percentile  # noqa: E402
from tests.support.proc import cpu_seconds, memory_mb  # noqa: E402


def bench_latency(count: int, data_dir: Path) -> list[float]:
    config = load_config(None, data_dir=data_dir)
    config = dataclasses.replace(
        config, signals=dataclasses.replace(config.signals, battle_phrase=False)
    )
    arbiter = build_arbiter(config, sim=True)
    player = SimPlayer(arbiter)
    arbiter.start()
    try:
        player.play(count)
    finally:
        arbiter.close()
    return player.samples


def bench_process(idle_seconds: float, data_dir: Path, port: int) -> tuple[float, float, float]:
    exe = shutil.which("gg-arbiter", path=str(Path(sys.executable).parent)) or "gg-arbiter"
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [exe, "run", "--sim", "--data", str(data_dir), "--host", "127.0.0.1", "--port", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/api/status"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1) as reply:
                    reply.read()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - t0 > 30:
                    raise RuntimeError("gg-arbiter run --sim did not start") from None
                time.sleep(0.01)
        ready = time.perf_counter() - t0
        time.sleep(2)  # let the ready tune finish
        cpu0, wall0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(idle_seconds)
        cpu = (cpu_seconds(proc.pid) - cpu0) / (time.perf_counter() - wall0) * 100
        return ready, cpu, memory_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=30.0)
    parser.add_argument("--port", type=int, default=18181)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lat = bench_latency(args.challenges, Path(tmp) / "lat")
        print(
            f"verdict latency (reading valid -> durable + LED, battle phrase off): "
            f"{len(lat)} challenges  p50 {percentile(lat, 0.5):.3f} ms  "
            f"p99 {percentile(lat, 0.99):.3f} ms  max {max(lat):.3f} ms  (target p99 <= 10 ms)"
        )
        ready, cpu, rss = bench_process(args.idle_seconds, Path(tmp) / "run", args.port)
        print(f"start to ready (/api/status answers): {ready:.2f} s  (target <= 1.5 s)")
        print(f"idle CPU over {args.idle_seconds:.0f} s: {cpu:.2f} % of one core  (target <= 1 %)")
        print(f"resident memory: {rss:.1f} MB  (target <= 60 MB)")


if __name__ == "__main__":
    main()
