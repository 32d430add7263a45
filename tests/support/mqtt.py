"""A real Mosquitto for the tests and the benchmark, a TCP proxy that can stall or
refuse, and a subscriber that records every message it receives."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.support.spawn import free_port
from tests.support.waiting import WAIT, wait_until

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Mosquitto:
    """``mosquitto -c FILE`` on a free port of 127.0.0.1 (``-p`` is ignored when the
    config names a listener). ``extra`` is more config (users, ACL)."""

    def __init__(self, workdir: Path, extra: str = "", port: int | None = None) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.conf = workdir / "mosquitto.conf"
        body = extra if "allow_anonymous" in extra else "allow_anonymous true\n" + extra
        # As root, mosquitto would drop to the "mosquitto" user, which cannot read the
        # test's private temp files (the password file, the ACL).
        user = "user root\n" if os.geteuid() == 0 else ""
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\npersistence false\n{user}{body}\n")
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "mosquitto.log"

    def start(self) -> Mosquitto:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)],
                                         stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: port_open(self.port) or self._died(), what="mosquitto listening")
        assert self.proc.poll() is None, self.log.read_text()
        return self

    def _died(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def kill(self) -> None:
        """kill -9: no goodbye to anyone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(WAIT)
        wait_until(lambda: not port_open(self.port), what="the broker's port closed")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(WAIT)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


class Proxy:
    """A TCP proxy from a free port to ``upstream``: ``forward`` (the default),
    ``stall`` (accepts and then neither reads nor forwards a byte) or ``refuse``
    (accepts and closes at once)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.mode = "forward"
        self._server = socket.socket()
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port = int(self._server.getsockname()[1])
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            if self.mode == "refuse":
                conn.close()
                continue
            with self._lock:
                self._open.append(conn)
            if self.mode == "stall":
                continue  # held open: the client's bytes sit unread
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream), timeout=2)
            except OSError:
                self._drop(conn)
                continue
            with self._lock:
                self._open.append(up)
            for a, b in ((conn, up), (up, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        self._drop(src)
        self._drop(dst)

    def _drop(self, s: socket.socket) -> None:
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            s.close()

    def cut(self) -> None:
        """Close every connection through the proxy (a network cut)."""
        with self._lock:
            conns, self._open = self._open, []
        for s in conns:
            self._drop(s)

    def close(self) -> None:
        self._closed = True
        self._drop(self._server)
        self.cut()


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool

    def json(self) -> Any:
        return json.loads(self.payload)


class Subscriber:
    """A paho client subscribed to ``topic`` that records every message, in order."""

    def __init__(self, port: int, topic: str = "gg/#", *, username: str | None = None,
                 password: str | None = None, client_id: str = "",
                 wait: bool = True) -> None:
        self.messages: list[Message] = []
        self._cond = threading.Condition()
        self.topic = topic
        self.subscribed = threading.Event()
        self.refused: list[str] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
        if username:
            self.client.username_pw_set(username, password)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.1, 0.5)  # type: ignore[arg-type]
        self.client.connect_async("127.0.0.1", port, keepalive=10)
        self.client.loop_start()
        if wait:
            wait_until(self.subscribed.is_set, what=f"subscribed to {topic}")

    def _on_connect(self, client: mqtt.Client, _u: object, _f: object, reason: Any,
                    _p: object) -> None:
        if reason.is_failure:
            self.refused.append(str(reason))
            return
        self.subscribed.clear()
        client.subscribe(self.topic, qos=1)

    def _on_subscribe(self, _c: mqtt.Client, _u: object, _mid: int, _codes: object,
                      _p: object) -> None:
        self.subscribed.set()

    def _on_message(self, _c: mqtt.Client, _u: object, message: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.messages.append(Message(message.topic, message.payload, bool(message.retain)))
            self._cond.notify_all()

    def on(self, suffix: str) -> list[Message]:
        with self._cond:
            return [m for m in self.messages if m.topic.endswith(suffix)]

    def events(self) -> list[dict[str, Any]]:
        return [m.json() for m in self.on("/events")]

    def wait(self, predicate: Callable[[Subscriber], object], timeout: float = WAIT,
             what: str = "") -> None:
        wait_until(lambda: predicate(self), timeout, what=what)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def seqs(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["seq"]) for e in events]


def time_to(predicate: Callable[[], bool], timeout: float = WAIT) -> float:
    """Seconds until ``predicate`` holds (waiting on it, never a fixed sleep)."""
    t0 = time.monotonic()
    wait_until(predicate, timeout)
    return time.monotonic() - t0
