"""The hub's start on a broker that is slow or refuses it (issue 19, findings 3 and 13)."""

from __future__ import annotations

import logging
import os
import signal
import threading
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.cli import main
from arbiter.hub import broker_link as ingest_module
from arbiter.hub.broker_link import Ingest
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.spawn import free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)
EVENT = "club-night"


def hub(data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(data), *args])


def test_hub_start_survives_a_broker_slow_to_take_the_round_it_re_sends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "hub"
    for name in ("Ana", "Ben"):
        assert hub(data, "players", "add", name) == 0
    assert hub(data, "pair", "--system", "round-robin") == 0
    assert hub(data, "assign", "1", "1", "T1") == 0
    broker = Mosquitto(tmp_path / "broker").start()
    assert broker.proc is not None
    pid = broker.proc.pid
    # The broker stops answering just as the hub re-sends the last round's assignments
    # (paused: its socket open, nothing acknowledged), as a broker under a backlog does.
    for name in ("publish_round", "republish_round"):
        real: Callable[..., Any] | None = getattr(Ingest, name, None)
        if real is not None:
            def paused(self: Ingest, *args: Any, _real: Callable[..., Any] = real) -> Any:
                os.kill(pid, signal.SIGSTOP)
                return _real(self, *args)

            monkeypatch.setattr(Ingest, name, paused)
    monkeypatch.setattr(ingest_module, "PUBLISH_TIMEOUT", 1.0)  # the wait that was fatal
    port = free_port()
    seen: dict[str, Any] = {}

    def logged(text: str) -> bool:
        return any(text in r.getMessage() for r in caplog.records)

    def organiser() -> None:
        try:
            def up() -> bool:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                        return True
                except OSError:
                    return False

            # Serving while the broker still holds the assignment unacknowledged.
            wait_until(up, timeout=30, what="the hub serves its pages")
            seen["served"] = True
            wait_until(lambda: logged("not taken those of table(s) T1"), what="the hub says "
                       "the broker has not taken the assignment yet")
        except AssertionError:
            pass
        finally:
            os.kill(pid, signal.SIGCONT)
        try:
            table = Subscriber(broker.port, f"gg/{EVENT}/table/T1/assignment")
            table.wait(lambda s: s.messages, what="the re-sent assignment, once resumed")
            seen["assignment"] = table.messages[0].json()
            table.close()
            wait_until(lambda: logged("has them all now"), what="the hub says so")
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # the hub's own stop

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    helper = threading.Thread(target=organiser)
    caplog.set_level(logging.WARNING, logger="arbiter.hub.broker_link")
    try:
        helper.start()
        code = hub(data, "--broker", broker.url, "--host", "127.0.0.1", "--port", str(port))
    finally:
        helper.join(60)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        os.kill(pid, signal.SIGCONT)
        broker.stop()
    assert code == 0
    assert seen.get("served"), "the hub did not serve while the broker was slow"
    assert seen["assignment"]["white"] == "Ana"
    assert logged("not taken those of table(s) T1") and logged("has them all now")


def test_hub_refused_by_the_broker_says_so(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    passwd = tmp_path / "passwd"
    from arbiter.venue.brokerconf import password_line

    passwd.write_text(password_line("hub", "right") + "\n")
    broker = Mosquitto(tmp_path / "broker",
                       extra=f"allow_anonymous false\npassword_file {passwd}\n").start()
    try:
        secret = tmp_path / "hub.password"
        secret.write_text("wrong\n")
        code = hub(tmp_path / "hub", "--broker", f"mqtt://hub@127.0.0.1:{broker.port}",
                   "--password-file", str(secret), "--port", str(free_port()),
                   "--host", "127.0.0.1", "--connect-timeout", "5")
    finally:
        broker.stop()
    err = capsys.readouterr().err
    assert code == 2
    assert "refused the hub" in err and "not authorized" in err.lower(), err
    assert "no connection" not in err
