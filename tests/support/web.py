"""Helpers for the web tests: a real simulator arbiter, the app, a live server."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.drivers.pins import mock_pin_factory
from arbiter.rules.ranks import Rank
from tests.support.waiting import wait_until
from web.kit.aserve import AsyncWebServer, make_async_server
from web.kit.serve import REQUEST_TIMEOUT, WebServer, make_server
from web.table import create_app

# Debian's Chromium, driven by Playwright (which never downloads a browser); the
# background-networking flags keep it off the network this machine does not have.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

PIN = "246813"

#: Fast signals: no battle phrase, short tunes (the default Taps takes 23 s).
FAST_CONFIG = """
[signals]
battle_phrase = false

[tunes]
taps = "Taps:d=16,o=5,b=200:g4,c,e"
ready = "Ready:d=32,o=5,b=200:c"
error = "Error:d=32,o=4,b=200:c"
fault = "Fault:d=32,o=4,b=200:c"
"""


#: Reader sections for :func:`build_device`: keys on mock pins, or RDM6300 RFID
#: readers on pyserial ``loop://`` ports (so enrollment is possible).
READERS = {
    "sim": "",
    "keys": "",
    "rfid": '[reader]\nkind = "rdm6300"\nattacker_port = "loop://"\ndefender_port = "loop://"\n',
}


def build_device(data_dir: Path, *, kind: str = "sim") -> Any:
    """A started arbiter on mock pins with fast signals: ``sim``, ``keys`` or ``rfid``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "test.toml"
    path.write_text(FAST_CONFIG + READERS[kind], encoding="utf-8")
    config = load_config(path)
    if kind == "sim":
        device = build_arbiter(config, data_dir=data_dir, sim=True)
    else:
        device = build_arbiter(config, data_dir=data_dir, pin_factory=mock_pin_factory())
    device.start()
    return device


def build_app(device: Any, **overrides: Any) -> Any:
    settings: dict[str, Any] = {"TESTING": True, "ADMIN_PIN": PIN}
    settings.update(overrides)
    return create_app(device, settings)


@contextlib.contextmanager
def running_device(data_dir: Path, *, kind: str = "sim") -> Iterator[Any]:
    """A started device (see :func:`build_device`), closed at the end."""
    dev = build_device(data_dir, kind=kind)
    try:
        yield dev
    finally:
        dev.close()


# -- rank detection ---------------------------------------------------------

_CODES = [re.escape(rank.code) for rank in Rank]
_NAMES = sorted({rank.full_name for rank in Rank}, key=len, reverse=True)
#: A rank code standing alone (not part of a longer word or number).
CODE_RE = re.compile(r"(?<![A-Za-z0-9*])(?:" + "|".join(_CODES) + r")(?![A-Za-z0-9*])")
#: A rank's full name as a word, any case ("Spy", "private", "General" but not "Generals").
NAME_RE = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in _NAMES) + r")\b", re.IGNORECASE)
#: A piece in text, W:SPY or b:pvt.
PIECE_RE = re.compile(r"\b[WB]\s*:\s*(?:" + "|".join(_CODES) + r")", re.IGNORECASE)


def rank_leaks(text: str) -> list[str]:
    """Every rank code, rank name or piece text found in ``text``."""
    found = [m.group(0) for m in CODE_RE.finditer(text)]
    found += [m.group(0) for m in NAME_RE.finditer(text)]
    found += [m.group(0) for m in PIECE_RE.finditer(text)]
    return found


# -- a live server -----------------------------------------------------------


@contextlib.contextmanager
def live_server(
    app: Any, streams: int = 32, request_timeout: float = REQUEST_TIMEOUT
) -> Iterator[WebServer]:
    """The app served by waitress on 127.0.0.1 (any free port) in a thread.

    ``streams`` is smaller than the product's default: most tests open a few
    streams, and a pool of 216 threads per test would only cost time.
    """
    server = make_server(app, "127.0.0.1", 0, streams=streams, request_timeout=request_timeout)
    with _running(server, "test-web"):
        yield server


@contextlib.contextmanager
def live_hub_server(
    app: Any, streams: int = 32, request_timeout: float = REQUEST_TIMEOUT
) -> Iterator[AsyncWebServer]:
    """The hub's app served as ``gg-arbiter hub`` serves it (web.kit.aserve: the event
    stream on asyncio), on 127.0.0.1 (any free port), in a thread."""
    server = make_async_server(app, "127.0.0.1", 0, streams=streams,
                               request_timeout=request_timeout, workers=4)
    with _running(server, "test-hub-web"):
        yield server


@contextlib.contextmanager
def _running(server: WebServer | AsyncWebServer, name: str) -> Iterator[None]:
    """``server`` run on a thread of its own for the block, then closed."""
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.close()
        thread.join(timeout=10)


def http_get(
    server: WebServer, path: str, timeout: float = 10.0
) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def http_json(
    server: WebServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body)
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=payload, headers=all_headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def venue_states(events: list[dict[str, Any]]) -> Iterator[dict[str, dict[str, Any]]]:
    """The hub venue's rows after each message of its stream, as its page builds them:
    a snapshot replaces them, a patch sets the fields it names (null: the table is gone)."""
    rows: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.get("type") == "snapshot":
            rows = {r["table"]: dict(r) for r in e["tables"]}
        elif e.get("type") == "tables":
            for table, fields in e["patch"].items():
                if fields is None:
                    rows.pop(table, None)
                else:
                    rows.setdefault(table, {}).update(fields)
        else:
            continue
        yield rows


class SseClient:
    """Reads one /api/events stream on its own thread, keeping every line it gets."""

    def __init__(self, port: int, path: str = "/api/events") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        self.raw = b""
        self.lines: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.received_at: list[float] = []
        self.comments: list[str] = []
        self.closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                now = time.perf_counter()
                with self._cond:
                    self.raw += chunk
                    buffer += chunk
                    while b"\n" in buffer:
                        line, _, buffer = buffer.partition(b"\n")
                        text = line.decode("utf-8", "replace").rstrip("\r")
                        self.lines.append(text)
                        if text.startswith("data: "):
                            with contextlib.suppress(ValueError):
                                self.events.append(json.loads(text[6:]))
                                self.received_at.append(now)
                        elif text.startswith(": "):
                            self.comments.append(text[2:])
                    self._cond.notify_all()
        except OSError:
            pass
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def wait(self, predicate: Callable[[SseClient], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def text(self) -> str:
        with self._cond:
            return self.raw.decode("utf-8", "replace")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self._thread.join(timeout=5)


def play(
    put: Callable[[str, str], None],
    clear: Callable[[str], None],
    status: Callable[[], dict[str, Any]],
    attacker: str,
    defender: str,
) -> dict[str, Any]:
    """Seat two pieces, wait for the verdict (or refusal), take them out again.

    Returns the status right after the verdict.
    """
    before = status()["challenge_count"]
    put("attacker", attacker)
    put("defender", defender)
    def verdict_shown() -> dict[str, Any] | None:
        s = status()
        if s["challenge_count"] > before and s["state"] in ("result", "game_over"):
            return s
        return None

    after = wait_until(verdict_shown)
    assert after is not None
    clear("attacker")
    clear("defender")
    wait_until(lambda: status()["state"] in ("idle", "game_over"))
    return after


def csrf_field(html: str) -> str:
    """The CSRF token of the form in ``html``."""
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no CSRF field in the form"
    return match.group(1)


def admin_login(client: Any) -> str:
    """Log ``client`` in with :data:`PIN`; returns the admin page's CSRF token."""
    token = csrf_field(client.get("/admin/login").get_data(as_text=True))
    response = client.post("/admin/login", data={"pin": PIN, "csrf": token})
    assert response.status_code == 302 and response.headers["Location"].endswith("/admin")
    return csrf_field(client.get("/admin").get_data(as_text=True))
