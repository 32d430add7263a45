"""A real Mosquitto broker for a test, on a free port of 127.0.0.1."""

from __future__ import annotations

import shutil
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


@contextmanager
def mosquitto(workdir: Path) -> Iterator[int]:
    """Run Mosquitto (persistent, anonymous, 127.0.0.1 only) for the block; yields its port."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = workdir / "mosquitto.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\n"
        "allow_anonymous true\n"
        "persistence true\n"
        f"persistence_location {workdir}/\n"
        "max_queued_messages 100000\n"
    )
    log = (workdir / "mosquitto.log").open("w")
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _accepts(port) or proc.poll() is not None, what="mosquitto listening")
        assert proc.poll() is None, (workdir / "mosquitto.log").read_text()
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
