"""The terminal shows the device's lines, not the web server's chatter (issue 8, item 10)."""

from __future__ import annotations

import logging
import os
import re
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.service import WEB_SERVER_LOGGERS, quiet_web_server_logs
from tests.support.rig import write_config
from tests.support.spawn import Session


@pytest.fixture
def web_loggers() -> Iterator[None]:
    saved = {name: logging.getLogger(name).level for name in WEB_SERVER_LOGGERS}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_web_server_info_quiet_but_errors_kept(web_loggers: None) -> None:
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.INFO)
    try:
        quiet_web_server_logs()
    finally:
        root.setLevel(before)
    for name in WEB_SERVER_LOGGERS:
        logger = logging.getLogger(name)
        assert not logger.isEnabledFor(logging.INFO), name
        assert logger.isEnabledFor(logging.WARNING) and logger.isEnabledFor(logging.ERROR), name


def _open_stream_and_drop(port: int) -> None:
    """Open the event stream, read its headers, then vanish (a phone closing the page)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(4096)
        assert chunk, "the stream closed before its headers"
        got += chunk
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST
    sock.close()


@pytest.mark.timeout(90)
def test_client_disconnected_stays_off_the_console(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    env = dict(os.environ, GG_ARBITER_LOG="INFO")
    run = Session(["run", "--config", str(config), "--data", str(tmp_path / "data"),
                   "--host", "127.0.0.1", "--port", "0"], env=env)
    try:
        at = run.expect("web page on http://")
        found = re.search(r"web page on http://[^:]+:(\d+)", run.lines[at])
        assert found is not None, run.lines[at]
        port = int(found.group(1))
        at = run.expect("simulator: type 'help'")
        for _ in range(3):
            _open_stream_and_drop(port)
        # Status changes make the server write to each dropped stream, which fails.
        for _ in range(3):
            run.send("attacker W:SPY")
            at = run.expect("[state] waiting", after=at)
            run.send("clear")
            at = run.expect("[state] idle", after=at)
        run.send("quit")
        code, out = run.finish(timeout=60)
    finally:
        run.kill()
    assert code == 0, out
    assert "[state] idle" in out
    assert "waitress" not in out and "Client disconnected" not in out, out
