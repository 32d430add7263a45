"""Benchmark the page server: 20 open status pages on loopback.

Run: .venv/bin/python bench/bench_web.py [--viewers 20] [--requests 500] [--verdicts 30]

Prints ``/api/status`` latency p50/p99 while the event streams are open, and
the verdict fan-out: from the device publishing a verdict to each open stream
receiving it (p50/p99 over all streams and verdicts, and the worst "last
stream" time per verdict). Target: a verdict reaches 20 pages within 100 ms.
The simulator's battle phrase is off so only the page path is measured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import queue
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import contextlib

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from bench.timing import percentile
from web.kit.serve import make_server
from web.table import create_app

FAST_CONFIG = """
[signals]
battle_phrase = false
[tunes]
ready = "Ready:d=32,o=5,b=200:c"
error = "Error:d=32,o=4,b=200:c"
"""


class Stream:
    """One open /api/events stream; records when each status ``seq`` arrived."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.arrived: dict[int, float] = {}
        self.opened = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        try:
            while chunk := self.sock.recv(65536):
                now = time.perf_counter()
                buffer += chunk
                while b"\n" in buffer:
                    line, _, buffer = buffer.partition(b"\n")
                    if line.startswith(b"data: "):
                        seq = json.loads(line[6:]).get("seq")
                        self.arrived.setdefault(seq, now)
                        self.opened.set()
        except OSError:
            pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def get_status(port: int) -> float:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/status")
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"/api/status answered {response.status}")
    return time.perf_counter() - start


def put(port: int, method: str, path: str, body: Any = None) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(
        method,
        path,
        body=None if body is None else json.dumps(body),
        headers={"Content-Type": "application/json"},
    )
    conn.getresponse().read()
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=20)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--verdicts", type=int, default=30)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "bench.toml"
        config_path.write_text(FAST_CONFIG, encoding="utf-8")
        device = build_arbiter(load_config(config_path), data_dir=Path(tmp) / "data", sim=True)
        device.start()
        app = create_app(device, {"ADMIN_PIN": "246813", "TESTING": True})
        server = make_server(app, "127.0.0.1", 0)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        port = server.port
        streams = [Stream(port) for _ in range(args.viewers)]
        try:
            for stream in streams:
                if not stream.opened.wait(10):
                    raise RuntimeError("a stream did not open")

            latencies = [get_status(port) for _ in range(args.requests)]

            published: queue.Queue[dict[str, Any]] = device.subscribe()
            fan_out: list[float] = []
            last_stream: list[float] = []
            for _ in range(args.verdicts):
                device.new_game()
                put(port, "PUT", "/api/sim/slots/attacker", {"piece": "W:5*G"})
                put(port, "PUT", "/api/sim/slots/defender", {"piece": "B:PVT"})
                while True:  # the device's own publication of the verdict
                    status = published.get(timeout=10)
                    if status["state"] == "result":
                        at = time.perf_counter()
                        seq = status["seq"]
                        break
                deadline = time.monotonic() + 10
                while any(seq not in s.arrived for s in streams):
                    if time.monotonic() > deadline:
                        raise RuntimeError("a stream missed a verdict")
                    time.sleep(0.001)
                delays = [s.arrived[seq] - at for s in streams]
                fan_out.extend(delays)
                last_stream.append(max(delays))
                put(port, "DELETE", "/api/sim/slots/attacker")
                put(port, "DELETE", "/api/sim/slots/defender")
                while published.get(timeout=10)["state"] != "idle":
                    pass
            device.unsubscribe(published)
        finally:
            for stream in streams:
                stream.close()
            server.close()
            thread.join(timeout=10)
            device.close()

    ms = 1000.0
    print(f"{args.viewers} event streams open on loopback")
    print(
        f"/api/status latency over {len(latencies)} requests: "
        f"p50 {percentile(latencies, 0.5) * ms:.2f} ms, "
        f"p99 {percentile(latencies, 0.99) * ms:.2f} ms, max {max(latencies) * ms:.2f} ms"
    )
    print(
        f"verdict fan-out over {args.verdicts} verdicts x {args.viewers} streams: "
        f"p50 {percentile(fan_out, 0.5) * ms:.2f} ms, p99 {percentile(fan_out, 0.99) * ms:.2f} ms"
    )
    print(
        f"verdict reached all {args.viewers} streams: "
        f"median {statistics.median(last_stream) * ms:.2f} ms, worst {max(last_stream) * ms:.2f} ms"
        f" (target <= 100 ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
