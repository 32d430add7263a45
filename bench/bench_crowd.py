"""Benchmark the page under a crowd: 200 streams and 120 idle or slow connections.

Run: .venv/bin/python bench/bench_crowd.py [--streams 200] [--slow 120] [--requests 500]

The page is served by a child process (the simulator arbiter, its app and
``web.kit.serve.make_server`` with its defaults) so that the crowd, held by this
process, does not share the server's interpreter. Prints: streams held, the
``/api/status`` latency p50/p99/max while the crowd is there, the latency of
the 503 that refuses one stream more, the server's RSS and threads, and how
long the server took to close the slow connections (``request_timeout``).
Target (issue 8.3): p99 <= 50 ms.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.crowd import (  # noqa: E402
    SlowCrowd,
    close_all,
    hold_streams,
    percentile,
    timed_get,
)
from tests.support.proc import status  # noqa: E402

FAST_CONFIG = """
[signals]
battle_phrase = false
[tunes]
ready = "Ready:d=32,o=5,b=200:c"
error = "Error:d=32,o=4,b=200:c"
"""


def serve(data_dir: Path, streams: int, request_timeout: float) -> None:
    """The child: serve the simulator's page, print the port, stop when stdin closes."""
    import threading

    from arbiter.app.assembly import build_arbiter
    from arbiter.app.config import load_config
    from arbiter.app.service import quiet_web_server_logs
    from web.kit.serve import make_server
    from web.table import create_app

    quiet_web_server_logs()
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as the arbiter wants
    config_path = data_dir.parent / "bench.toml"
    config_path.write_text(FAST_CONFIG, encoding="utf-8")
    device = build_arbiter(load_config(config_path), data_dir=data_dir, sim=True)
    device.start()
    app = create_app(device, {"TESTING": True, "ADMIN_PIN": "246813"})
    server = make_server(app, "127.0.0.1", 0, streams=streams, request_timeout=request_timeout)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    print(server.port, flush=True)
    sys.stdin.read()  # until the parent closes our stdin
    server.close()
    device.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--slow", type=int, default=120, help="half idle, half trickling")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--request-timeout", type=float, default=10.0)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.streams, args.request_timeout)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(Path(tmp) / "data"),
             "--streams", str(args.streams), "--request-timeout", str(args.request_timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        assert child.stdout is not None and child.stdin is not None
        try:
            port = int(child.stdout.readline())
            base = status(child.pid)

            t0 = time.perf_counter()
            streams = hold_streams(port, args.streams, timeout=60)
            opened = time.perf_counter() - t0
            slow = SlowCrowd(port, idle=args.slow // 2, trickling=args.slow - args.slow // 2)
            slow.start()
            try:
                for _ in range(20):  # warm-up
                    timed_get(port, "/api/status")
                latencies = []
                for _ in range(args.requests):
                    answer = timed_get(port, "/api/status")
                    assert answer.status == 200, answer.status
                    latencies.append(answer.seconds)
                slow_open = slow.open_count
                refusals = []
                for _ in range(20):
                    answer = timed_get(port, "/api/events")
                    assert answer.status == 503, answer.status
                    refusals.append(answer.seconds)
                loaded = status(child.pid)
                deadline = time.monotonic() + args.request_timeout + 30
                while slow.open_count and time.monotonic() < deadline:
                    time.sleep(0.1)
                lived = slow.closed_after()
            finally:
                slow.stop()
                close_all(streams)

            ms = [x * 1000 for x in latencies]
            print(f"streams held: {len(streams)} of {args.streams} (opened in {opened:.2f} s); "
                  f"slow connections open while measuring: {slow_open} of {args.slow}")
            print(f"/api/status over {args.requests} requests (new connection each): "
                  f"p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
                  f"max {max(ms):.1f} ms  (target p99 <= 50 ms)")
            refused = [x * 1000 for x in refusals]
            print(f"stream {args.streams + 1}: 503 in p50 {percentile(refused, 0.5):.1f} ms, "
                  f"max {max(refused):.1f} ms")
            print(f"server RSS {base['VmRSS']} idle, {loaded['VmRSS']} under the crowd; "
                  f"threads {base['Threads']} idle, {loaded['Threads']} under the crowd")
            if lived:
                print(f"slow connections closed: {len(lived)} of {args.slow}, "
                      f"{min(lived):.2f}..{max(lived):.2f} s after opening "
                      f"(request_timeout {args.request_timeout:g} s)")
            else:
                print("slow connections closed: none")
        finally:
            child.stdin.close()
            child.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
