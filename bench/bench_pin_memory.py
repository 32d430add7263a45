"""Benchmark the memory a PIN check leaves behind: the table's page served by waitress.

Run: .venv/bin/python bench/bench_pin_memory.py [--requests 40] [--clients 8]

A child process serves a simulator arbiter's page (as ``gg-arbiter run`` does, its
default thread count); this process sends ``--requests`` admin API requests that
carry the PIN (each runs one scrypt check: 16 MB), ``--clients`` at a time, and
prints the child's resident memory (VmRSS) before and after. Before the PIN hash
had its own thread, glibc kept each server thread's 16 MB: a table grew from 56 to
473 MB after 40 admin requests (a Pi Zero 2 W has 512 MB).
"""

from __future__ import annotations

import argparse
import http.client
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.proc import memory_mb
from tests.support.web import FAST_CONFIG, PIN


def serve(data: Path) -> None:
    """The child: serve a simulator arbiter's page on a free port, print the port,
    and stop when standard input closes."""
    from arbiter.app.assembly import build_arbiter
    from arbiter.app.config import load_config
    from web.kit.serve import make_server
    from web.table import create_app

    config_path = data / "bench.toml"
    config_path.write_text(FAST_CONFIG, encoding="utf-8")
    device = build_arbiter(load_config(config_path), data_dir=data / "data", sim=True)
    device.start()
    app = create_app(device, {"ADMIN_PIN": PIN})
    app.logger.disabled = True
    server = make_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.run, daemon=True).start()
    print(server.port, flush=True)
    sys.stdin.read()
    server.close()
    device.close()


def request(port: int, method: str, path: str, pin: str | None = None, client: int = 1) -> int:
    """One request from loopback address 127.0.0.``client`` (the attempt limit is per
    address: concurrent checks from one address would be refused as guessing)."""
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=60, source_address=(f"127.0.0.{client}", 0)
    )
    try:
        conn.request(method, path, headers={"X-Admin-PIN": pin} if pin else {})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve))
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", tmp],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            port = int(child.stdout.readline())
            for _ in range(5):  # warm: the page, the streams' machinery, Flask's caches
                request(port, "GET", "/api/status")
            before = memory_mb(child.pid)
            with ThreadPoolExecutor(args.clients) as pool:
                codes = list(pool.map(
                    lambda i: request(port, "GET", "/api/admin/enrollment", PIN,
                                      2 + i % args.clients),
                    range(args.requests),
                ))
            after = memory_mb(child.pid)
        finally:
            child.stdin.close()
            child.wait(timeout=30)
    refused = [code for code in codes if code in (401, 403, 429, 503)]
    print(f"{args.requests} PIN requests, {args.clients} at a time "
          f"(answers: {sorted(set(codes))}; refused: {len(refused)})")
    print(f"server RSS before {before:.0f} MB, after {after:.0f} MB, "
          f"growth {after - before:.0f} MB")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
