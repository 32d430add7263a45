"""A port in use at start: the page retries binding and says so once (issue 8, item 11)."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest

from tests.support.rig import write_config
from tests.support.spawn import Session, free_port
from tests.support.waiting import WAIT


def _hold(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port``, as another program would hold it."""
    held = socket.socket()
    held.bind(("127.0.0.1", port))
    held.listen()
    return held


@pytest.mark.timeout(120)
def test_the_page_comes_up_once_its_port_is_freed(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    port = free_port()
    held = _hold(port)
    run = Session(["run", "--config", str(config), "--data", str(tmp_path / "data"),
                   "--host", "127.0.0.1", "--port", str(port)])
    try:
        at = run.expect(f"port {port} is in use")
        run.expect("gg-arbiter ready")  # the device does not wait for its page
        held.close()
        run.expect(f"Status page: http://127.0.0.1:{port}/", after=at)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=WAIT) as r:
            assert "state" in json.loads(r.read())
        run.send("quit")
        code, out = run.finish()
    finally:
        held.close()
        run.kill()
    assert code == 0, out
    # Said once (not at every attempt): one console line and one log line.
    said = [line for line in out.splitlines() if "in use" in line]
    assert len(said) == 2, out
    assert sum(" WARNING arbiter.app.service: " in line for line in said) == 1, out
    assert "not started" not in out, out


def test_a_port_held_for_good_gives_up_after_the_retries(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import threading

    from flask import Flask

    from arbiter.app import service

    monkeypatch.setattr(service, "BIND_RETRY_DELAYS", (0.01, 0.02, 0.04))
    port = free_port()
    held = _hold(port)
    said: list[str] = []
    page = service._Page(Flask("clash"), "127.0.0.1", port, threading.Event(), said.append)
    try:
        page.bind_once()
        page.run()  # returns once it gives up
    finally:
        page.close()
        held.close()
    assert [line for line in said if "in use" in line] == [
        f"status page: port {port} is in use (another gg-arbiter, or another program?); "
        "retrying for 0 s",
        f"status page not started: port {port} is still in use; the device judges "
        "without its page (free the port, or choose another with --port or [web] port, "
        "and restart)",
    ]
    assert sum("is in use" in r.getMessage() for r in caplog.records) == 1
    assert sum("still in use" in r.getMessage() for r in caplog.records) == 1
