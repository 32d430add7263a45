"""``gg-arbiter hub`` under systemd (gg-hub.service is Type=notify): a real hub spawned with
a NOTIFY_SOCKET of the test's own says READY=1 once its pages answer, its broker link's
state in STATUS= lines as it changes, WATCHDOG=1 while it is alive (the unit's
WatchdogSec), and STOPPING=1 when SIGTERM stops it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.mqtt import Mosquitto
from tests.support.spawn import free_port, gg_arbiter
from tests.support.waiting import WAIT

pytestmark = pytest.mark.timeout(120)
EVENT = "club-night"


@contextmanager
def notify_socket() -> Iterator[tuple[str, socket.socket]]:
    """A unix datagram socket in the abstract namespace (no path-length limit), as systemd's
    own: the value for NOTIFY_SOCKET, and the socket to read the messages from."""
    name = f"gg-hub-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(f"\0{name}")
        yield f"@{name}", sock
    finally:
        sock.close()


class Notes:
    """The messages the hub sent, read as they come."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.seen: list[str] = []

    def until(self, wanted: Callable[[str], bool], timeout: float = 3 * WAIT) -> str:
        """The first message from now on for which ``wanted`` holds (fails after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            self._sock.settimeout(left)
            try:
                message = self._sock.recv(4096).decode()
            except TimeoutError:
                break
            self.seen.append(message)
            if wanted(message):
                return message
        raise AssertionError(f"no such message within {timeout} s; seen: {self.seen}")


def _answers(port: int, path: str) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
        return int(answer.status)


def test_the_hub_tells_systemd_ready_its_link_and_stopping(tmp_path: Path) -> None:
    broker_port, web = free_port(), free_port()
    broker = Mosquitto(tmp_path / "broker", port=broker_port)  # not started yet
    with notify_socket() as (address, sock):
        notes = Notes(sock)
        # systemd's WatchdogSec=0.4: fed every 0.2 s.
        env = {**os.environ, "NOTIFY_SOCKET": address, "WATCHDOG_USEC": "400000"}
        hub = subprocess.Popen(
            [*gg_arbiter(), "hub", "--event", EVENT, "--data", str(tmp_path / "hub"),
             "--broker", f"mqtt://127.0.0.1:{broker_port}", "--host", "127.0.0.1",
             "--port", str(web), "--connect-timeout", "0.5"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            # No broker: the hub serves all the same, and says so.
            ready = notes.until(lambda m: "READY=1" in m.splitlines())
            assert _answers(web, "/api/venue") == 200  # at once: READY=1 came once they answer
            status = next(line for line in ready.splitlines() if line.startswith("STATUS="))
            assert f"http://127.0.0.1:{web}/" in status
            assert "no connection to the broker" in status
            assert f"mqtt://127.0.0.1:{broker_port}" in status
            notes.until(lambda m: m == "WATCHDOG=1")
            broker.start()
            notes.until(lambda m: m.startswith("STATUS=") and "connected to the broker" in m
                        and "no connection" not in m)
            hub.send_signal(signal.SIGTERM)
            notes.until(lambda m: "STOPPING=1" in m.splitlines())
            assert hub.wait(3 * WAIT) == 0
        finally:
            if hub.poll() is None:
                hub.kill()
                hub.wait(WAIT)
            broker.stop()
            out = hub.stdout.read().decode() if hub.stdout else ""
    assert "READY=1" not in out  # told to systemd, not printed
    assert not [m for m in notes.seen if "READY=1" in m][1:]  # once
    fed = [n for n, note in enumerate(notes.seen) if note == "WATCHDOG=1"]
    first_ready = next(n for n, note in enumerate(notes.seen) if "READY=1" in note)
    assert fed and fed[0] > first_ready  # fed once serving, not before
