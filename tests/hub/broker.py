"""A real Mosquitto broker for a test, on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.spawn import free_port
from tests.support.waiting import wait_until

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Broker:
    """Mosquitto (persistent, anonymous, 127.0.0.1 only) that can be stopped and started
    again on the same port and persistence file."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.conf = workdir / "mosquitto.conf"
        # As root, mosquitto drops to the "mosquitto" user, which cannot write its
        # persistence file into the test's private temp dir: persistence would do nothing.
        user = "user root\n" if os.geteuid() == 0 else ""
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            f"{user}"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {workdir}/\n"
            "max_queued_messages 100000\n"
            "autosave_on_changes true\n"
            "autosave_interval 1\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with (self.workdir / "mosquitto.log").open("a") as log:
            self.proc = subprocess.Popen(
                [MOSQUITTO, "-c", str(self.conf)], stdout=log, stderr=subprocess.STDOUT
            )
        proc = self.proc
        wait_until(lambda: _accepts(self.port) or proc.poll() is not None,
                   what="mosquitto listening")
        assert proc.poll() is None, (self.workdir / "mosquitto.log").read_text()

    def kill(self) -> None:
        """kill -9: nothing saved since its last save (start, or a clean stop)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        wait_until(lambda: not _accepts(self.port), what="the broker's port closed")

    def stop(self) -> None:
        """Stop it cleanly (SIGTERM: it saves its persistence file first)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@contextmanager
def mosquitto(workdir: Path) -> Iterator[int]:
    """Run Mosquitto for the block; yields its port."""
    broker = Broker(workdir)
    broker.start()
    try:
        yield broker.port
    finally:
        broker.stop()
