"""The hub's start on a broker that is slow or refuses it (issue 19, findings 3 and 13)."""

from __future__ import annotations

import json
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
from tests.support.contract import new_game
from tests.support.mqtt import Mosquitto, Proxy, Subscriber
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
    from arbiter.venue.broker_logins import password_line

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


def _get(port: int, path: str) -> bytes | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return bytes(r.read())
    except OSError:
        return None


def _venue(port: int) -> dict[str, Any]:
    body = _get(port, "/api/venue")
    assert body is not None
    return dict(json.loads(body))


def _serve_while(data: Path, broker_url: str, web: int, body: Callable[[], None],
                 *more: str) -> tuple[int, list[BaseException]]:
    """Run ``gg-arbiter hub`` (in this thread, as ``main`` is) while ``body`` runs in
    another; then the hub's own stop (SIGTERM). Returns its exit code and body's failure."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # reported by the test, after the hub stopped
            failed.append(exc)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    helper = threading.Thread(target=run)
    try:
        helper.start()
        code = hub(data, "--broker", broker_url, "--host", "127.0.0.1", "--port", str(web),
                   *more)
    finally:
        helper.join(60)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return code, failed


def test_hub_with_no_broker_serves_at_once_says_so_and_takes_events_when_it_comes(
    tmp_path: Path
) -> None:
    port, web = free_port(), free_port()
    broker = Mosquitto(tmp_path / "broker", port=port)
    seen: dict[str, Any] = {}

    def body() -> None:
        # Issue 27: no broker made the hub exit 2 after 13 s, with no page.
        wait_until(lambda: _get(web, "/api/venue"), timeout=10, what="the hub's pages")
        down = _venue(web)["broker"]
        seen["down"] = down
        page = _get(web, "/") or b""
        seen["page"] = page.decode()
        organiser = _get(web, "/organiser") or b""
        seen["organiser"] = organiser.decode()
        broker.start()
        # Within the backoff's longest wait (and its first, jittered), the link is up...
        wait_until(lambda: _venue(web)["broker"]["up"], timeout=30, what="the link up")
        # ... and a table's events flow in.
        table = Subscriber(port, f"gg/{EVENT}/table/T1/assignment")
        table.client.publish(f"gg/{EVENT}/table/T1/events",
                             json.dumps(new_game("T1", 1, "g1")), qos=1).wait_for_publish(5)
        wait_until(lambda: any(t["table"] == "T1" and t["game"] == "g1"
                               for t in _venue(web)["tables"]), what="table T1's game")
        # ... and the resender works again: the table says it published two events.
        asked = Subscriber(port, f"gg/{EVENT}/table/T1/resend")
        table.client.publish(f"gg/{EVENT}/table/T1/status",
                             json.dumps({"format": 1, "table": "T1", "state": "idle",
                                         "event_seq": 2}), qos=1,
                             retain=True).wait_for_publish(5)
        asked.wait(lambda s: s.messages, what="the hub's resend request")
        seen["asked"] = asked.messages[-1].json()["ranges"]
        asked.close()
        table.close()

    try:
        code, failed = _serve_while(tmp_path / "hub", broker.url, web, body,
                                    "--resend-after", "0.5")
    finally:
        broker.stop()
    assert not failed, failed
    assert code == 0
    assert seen["down"]["up"] is False and seen["down"]["since"] > 0
    assert "broker link down since" in seen["page"]
    assert "broker link is down" in seen["organiser"] or "broker link down" in seen["organiser"]
    assert seen["asked"] == [[2, 2]]


def test_a_broker_that_holds_its_connack_does_not_wedge_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A broker that accepts the connection and then says nothing (a tiny socket server
    # that reads nothing: the proxy stalled) until it forwards to a real one.
    broker = Mosquitto(tmp_path / "broker").start()
    held = Proxy(broker.port)
    held.mode = "stall"
    # The held connection is dropped after the keep-alive: 2 s here, not 15.
    monkeypatch.setattr(ingest_module, "KEEPALIVE", 2)
    web = free_port()

    def body() -> None:
        wait_until(lambda: _get(web, "/api/venue"), timeout=10, what="the hub's pages")
        assert _venue(web)["broker"]["up"] is False
        held.mode = "forward"
        wait_until(lambda: _venue(web)["broker"]["up"], timeout=30,
                   what="the link up once the broker answers")

    try:
        code, failed = _serve_while(tmp_path / "hub", f"mqtt://127.0.0.1:{held.port}", web,
                                    body)
    finally:
        held.close()
        broker.stop()
    assert not failed, failed
    assert code == 0
