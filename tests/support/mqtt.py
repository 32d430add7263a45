"""A real Mosquitto for the tests and the benchmark (plain, persistent, with a TLS
listener), a TCP proxy that can stall or refuse, and a subscriber that records
every message it receives."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from tests.support.spawn import free_port
from tests.support.tools import require_tool
from tests.support.waiting import WAIT, wait_until


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass(frozen=True)
class TlsFiles:
    """A broker's TLS files, made at test time by ``trustme``: ``ca`` signed ``cert``."""

    ca: Path
    cert: Path
    key: Path


def make_tls(directory: Path, *names: str, not_before: datetime | None = None,
             not_after: datetime | None = None) -> TlsFiles:
    """A fresh CA and a broker certificate for ``names`` (default localhost and 127.0.0.1),
    valid from ``not_before`` to ``not_after`` (default: trustme's, around now)."""
    import trustme  # only the TLS tests need it

    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    issued = ca.issue_cert(*(names or ("localhost", "127.0.0.1")), not_before=not_before,
                           not_after=not_after)
    files = TlsFiles(directory / "ca.pem", directory / "broker.pem", directory / "broker.key")
    ca.cert_pem.write_to_path(str(files.ca))
    for i, pem in enumerate(issued.cert_chain_pems):
        pem.write_to_path(str(files.cert), append=i > 0)
    issued.private_key_pem.write_to_path(str(files.key))
    return files


class Mosquitto:
    """``mosquitto -c FILE`` on free ports of 127.0.0.1 (``-p`` is ignored when the
    config names a listener); it can be killed or stopped and started again on the
    same ports.

    ``extra`` is more config (users, ACL). ``persistent``: a persistence file in
    ``workdir``, saved every second, as broker-config's venue broker has it.
    ``tls``: a second listener, on ``tls_port``, speaking TLS with those files.
    """

    def __init__(self, workdir: Path, extra: str = "", port: int | None = None, *,
                 persistent: bool = False, tls: TlsFiles | None = None,
                 tls_port: int | None = None) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.tls = tls
        self.tls_port = (tls_port or free_port()) if tls else None
        self.conf = workdir / "mosquitto.conf"
        body = extra if "allow_anonymous" in extra else "allow_anonymous true\n" + extra
        # As root, mosquitto would drop to the "mosquitto" user, which can neither read the
        # test's private temp files (password file, ACL, key) nor write its persistence file
        # there (persistence would silently do nothing).
        lines = [f"listener {self.port} 127.0.0.1"]
        if tls is not None:
            lines += [f"listener {self.tls_port} 127.0.0.1", f"cafile {tls.ca}",
                      f"certfile {tls.cert}", f"keyfile {tls.key}"]
        if os.geteuid() == 0:
            lines.append("user root")
        if persistent:
            lines += ["persistence true", f"persistence_location {workdir}/",
                      "max_queued_messages 100000", "autosave_on_changes false",
                      "autosave_interval 1"]
        else:
            lines.append("persistence false")
        self.conf.write_text("\n".join(lines) + "\n" + body + "\n")
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "mosquitto.log"

    @classmethod
    def with_config(cls, workdir: Path, text: str, port: int,
                    tls_port: int | None = None) -> Mosquitto:
        """Mosquitto on a whole config written elsewhere (broker-config's), whose listeners
        are ``port`` (and ``tls_port``); as root, told to stay root (see above)."""
        broker = cls(workdir, port=port)
        broker.tls_port = tls_port
        broker.conf.write_text(text + ("\nuser root\n" if os.geteuid() == 0 else "\n"))
        return broker

    def start(self) -> Mosquitto:
        with self.log.open("ab") as out:
            # Not installed: the test fails under CI, else it is skipped.
            self.proc = subprocess.Popen([require_tool("mosquitto"), "-c", str(self.conf)],
                                         stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: all(map(port_open, self.ports)) or self._died(),
                   what="mosquitto listening")
        assert self.proc.poll() is None, self.log.read_text()
        return self

    @property
    def ports(self) -> list[int]:
        return [self.port] + ([self.tls_port] if self.tls_port else [])

    def _died(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def kill(self) -> None:
        """kill -9: no goodbye to anyone; nothing saved since its last save."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(WAIT)
        wait_until(lambda: not any(map(port_open, self.ports)), what="the broker's port closed")

    def stop(self) -> None:
        """Stop it cleanly (SIGTERM: a persistent broker saves its file first)."""
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

    def tls_url(self, host: str = "localhost") -> str:
        assert self.tls_port, "a broker started with tls="
        return f"mqtts://{host}:{self.tls_port}"


@contextlib.contextmanager
def mosquitto(workdir: Path, *, persistent: bool = True) -> Iterator[int]:
    """Run a (persistent) Mosquitto for the block; yields its port."""
    broker = Mosquitto(workdir, persistent=persistent).start()
    try:
        yield broker.port
    finally:
        broker.stop()


@contextlib.contextmanager
def tls_mosquitto(workdir: Path, *names: str) -> Iterator[Mosquitto]:
    """A Mosquitto with a plain listener (``port``) and a TLS one (``tls_port``) whose
    certificate, for ``names`` (default localhost and 127.0.0.1), ``broker.tls.ca``
    signed (no mosquitto: see :func:`tests.support.tools.require_tool`)."""
    require_tool("mosquitto")
    broker = Mosquitto(workdir, tls=make_tls(workdir / "tls", *names)).start()
    try:
        yield broker
    finally:
        broker.stop()


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
                 wait: bool = True, ca_file: Path | None = None,
                 host: str = "127.0.0.1") -> None:
        self.messages: list[Message] = []
        self._cond = threading.Condition()
        self.topic = topic
        self.subscribed = threading.Event()
        self.refused: list[str] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
        if username:
            self.client.username_pw_set(username, password)
        if ca_file is not None:
            self.client.tls_set_context(ssl.create_default_context(cafile=str(ca_file)))
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.reconnect_delay_set(0.1, 0.5)  # type: ignore[arg-type]
        self.client.connect_async(host, port, keepalive=10)
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

    def records(self, game: int | str | None = None) -> list[Message]:
        """The messages on a table's ``record`` topic (of ``game``: naming it)."""
        return [m for m in self.on("/record")
                if game is None or (m.payload and str(m.json().get("game")) == str(game))]

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
