"""``gg-arbiter broker-config --tls-cert --tls-key``: the TLS listener lines, accepted by
the real Mosquitto, carry a table's game to the hub's account over TLS."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arbiter.app.cli import main
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import MOSQUITTO, Mosquitto, Subscriber, make_tls, seqs
from tests.support.spawn import free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


def _venue(tmp_path: Path, plain: int, tls: int) -> tuple[Path, Path, list[str]]:
    files = make_tls(tmp_path / "certs", "localhost")
    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "2", "--event", "demo", "--out", str(out),
                 "--listen-port", str(plain), "--tls-cert", str(files.cert),
                 "--tls-key", str(files.key), "--tls-port", str(tls)]) == 0
    return out, files.ca, (out / "mosquitto.conf").read_text().splitlines()


def test_tls_lines_are_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ca, conf = _venue(tmp_path, 1883, 8883)
    assert "TLS on port 8883 (plain MQTT on 1883 for this machine only)" in (
        capsys.readouterr().out)
    certs = (tmp_path / "certs").resolve()
    listeners = [ln for ln in conf if ln.startswith(("listener", "certfile", "keyfile"))]
    assert listeners == ["listener 1883 127.0.0.1", "listener 8883",
                         f"certfile {certs / 'broker.pem'}", f"keyfile {certs / 'broker.key'}"]
    assert "allow_anonymous false" in conf and f"password_file {out / 'passwd'}" in conf


def test_tls_options_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_tls(tmp_path / "certs")
    base = ["broker-config", "--tables", "1", "--event", "demo", "--out", str(tmp_path / "v")]
    assert main([*base, "--tls-cert", str(files.cert)]) == 2
    assert "--tls-cert and --tls-key together" in capsys.readouterr().err
    assert main([*base, "--tls-cert", str(tmp_path / "nope.pem"),
                 "--tls-key", str(files.key)]) == 2
    assert "nope.pem: no such file" in capsys.readouterr().err
    assert main([*base, "--tls-cert", str(files.cert), "--tls-key", str(files.key),
                 "--tls-port", "1883"]) == 2
    assert "the plain port too" in capsys.readouterr().err
    assert not (tmp_path / "v" / "passwd").exists()


def test_real_mosquitto_takes_the_tls_lines_and_a_table_plays_over_them(
    tmp_path: Path, make_table: TableFactory
) -> None:
    if not shutil.which(MOSQUITTO):
        pytest.skip("mosquitto is not installed (bash setup.sh --dev installs it)")
    plain, tls = free_port(), free_port()
    out, ca, conf = _venue(tmp_path, plain, tls)
    # The test's broker listens on 127.0.0.1 only; every other line as written.
    text = "\n".join(f"listener {tls} 127.0.0.1" if ln == f"listener {tls}" else ln
                     for ln in conf)
    broker = Mosquitto.with_config(tmp_path / "broker", text, plain, tls).start()
    secrets = out / "secrets"
    try:
        hub = Subscriber(tls, "gg/demo/#", username="hub", ca_file=ca, host="localhost",
                         password=(secrets / "hub.password").read_text().strip())
        table = make_table(f"mqtts://table-1@localhost:{tls}", table="1",
                           extra=f'password_file = "{secrets / "table-1.password"}"\n'
                                 f'ca_file = "{ca}"\n')
        wait_until(lambda: table.arbiter.status()["broker"]["state"] == "connected",
                   what="table 1 on the TLS listener")
        for attacker, defender in GAME:
            table.rig.challenge(attacker, defender)
            table.rig.empty()
        hub.wait(lambda s: len(s.events()) >= len(GAME) + 2, what="the game over TLS")
        assert seqs(hub.events()) == list(range(1, len(GAME) + 3))
        hub.close()
    finally:
        broker.stop()
    assert "Opening ipv4 listen socket on port " + str(tls) in broker.log.read_text()
