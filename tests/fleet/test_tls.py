"""A table on a TLS broker (mqtts:// with ca_file or run --ca-file): published when the
CA is right; refused, with the cause on its page, when it is not, and judging its game
all along."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.fleet.outbox import CursorFile
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import Mosquitto, Subscriber, make_tls, seqs, tls_mosquitto
from tests.support.spawn import Session
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[Mosquitto]:
    # A certificate for localhost only: 127.0.0.1 is a name it was not made for.
    with tls_mosquitto(tmp_path / "tls-broker", "localhost") as b:
        yield b


def _play(table: object, pairs: list[tuple[str, str]]) -> None:
    for attacker, defender in pairs:
        table.rig.challenge(attacker, defender)  # type: ignore[attr-defined]
        table.rig.empty()  # type: ignore[attr-defined]


def test_table_publishes_its_game_over_tls(
    tls_broker: Mosquitto, make_table: TableFactory
) -> None:
    assert tls_broker.tls and tls_broker.tls_port
    sub = Subscriber(tls_broker.tls_port, "gg/#", ca_file=tls_broker.tls.ca, host="localhost")
    try:
        table = make_table(tls_broker.tls_url(), extra=f'ca_file = "{tls_broker.tls.ca}"\n')
        wait_until(lambda: table.arbiter.status()["broker"]["state"] == "connected",
                   what="the table connected over TLS")
        _play(table, GAME)
        sub.wait(lambda s: len(s.events()) >= len(GAME) + 2, what="every event over TLS")
        assert seqs(sub.events()) == list(range(1, len(GAME) + 3))  # new game .. game over
    finally:
        sub.close()


@pytest.mark.parametrize("trouble", ["another CA", "missing CA file", "name mismatch",
                                     "TLS to a plain port", "plain to the TLS port"])
def test_tls_trouble_is_named_on_the_page_and_the_table_judges_on(
    trouble: str, tls_broker: Mosquitto, make_table: TableFactory, tmp_path: Path
) -> None:
    assert tls_broker.tls
    ca = tls_broker.tls.ca
    url, expect = tls_broker.tls_url(), ""
    if trouble == "another CA":
        ca, expect = make_tls(tmp_path / "other").ca, "does not verify"
        cause = "certificate not signed by the CA file"
    elif trouble == "missing CA file":
        ca, expect = tmp_path / "missing.pem", "cannot read it"
        cause = "the CA file cannot be used"
    elif trouble == "name mismatch":
        url, expect = tls_broker.tls_url("127.0.0.1"), "is not for the name '127.0.0.1'"
        cause = "certificate made for another name"
    elif trouble == "TLS to a plain port":
        url, expect = f"mqtts://localhost:{tls_broker.port}", "answers plain MQTT"
        cause = "the broker's port is not TLS"
    else:
        url, expect = f"mqtt://localhost:{tls_broker.tls_port}", "speaks TLS"
        cause = "the broker wants TLS (mqtts://)"
    extra = f'ca_file = "{ca}"\n' if url.startswith("mqtts") else ""
    table = make_table(url, extra=extra)
    wait_until(lambda: expect in table.arbiter.status()["broker"]["detail"],
               what=f"the page names the cause: {expect}")
    _play(table, GAME)
    status = table.arbiter.status()
    assert status["challenge_count"] == len(GAME) and status["state"] == "game_over"
    assert status["broker"]["state"] == "reconnecting"
    assert status["broker"]["cause"] == cause  # the footer's few words
    assert CursorFile(tmp_path / "data").load().seq == 0  # nothing went out, in plain or not


def _run_table(url: str, data: Path, *extra: str) -> Session:
    session = Session(["run", "--sim", "--data", str(data), "--port", "0", "--broker", url,
                       "--event", "demo", "--table", "7", *extra])
    session.expect("gg-arbiter ready")
    return session


def test_run_ca_file_flag_wins_over_the_config_file(
    tls_broker: Mosquitto, tmp_path: Path
) -> None:
    assert tls_broker.tls and tls_broker.tls_port
    # The file names another CA: connecting proves the flag's CA file was used.
    config = tmp_path / "table.toml"
    config.write_text(f'[tournament]\nca_file = "{make_tls(tmp_path / "other").ca}"\n')
    sub = Subscriber(tls_broker.tls_port, "gg/#", ca_file=tls_broker.tls.ca, host="localhost")
    session = _run_table(tls_broker.tls_url(), tmp_path / "data", "--config", str(config),
                         "--ca-file", str(tls_broker.tls.ca))
    try:
        sub.wait(lambda s: [m.payload for m in s.on("/online")][-1:] == [b"true"],
                 what="the table online over TLS with --ca-file")
    finally:
        session.kill()
        sub.close()


def test_run_ca_file_flag_missing_is_one_clear_line(
    tls_broker: Mosquitto, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.pem"
    session = _run_table(tls_broker.tls_url(), tmp_path / "data", "--ca-file", str(missing))
    try:
        session.expect(f"CA file {missing}: cannot read it")
        session.send("quit")
        _code, output = session.finish()
    finally:
        session.kill()
    assert sum("cannot read it" in line for line in output.splitlines()) == 1, output


@pytest.mark.parametrize("broker_flags", [["--broker", "mqtt://localhost:1883"], []],
                         ids=["plain broker", "no broker"])
def test_run_ca_file_flag_needs_an_mqtts_broker(
    broker_flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--sim", *broker_flags, "--event", "e", "--table", "1", "--ca-file", "x.pem"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mqtts://" in err[0], err
