"""``gg-arbiter broker-config --tls-cert --tls-key``: the TLS listener lines, accepted by
the real Mosquitto, carry a table's game to the hub's account over TLS."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.venue.brokerconf import BROKER_USER
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import Mosquitto, Subscriber, make_tls, port_open, seqs
from tests.support.spawn import free_port
from tests.support.tools import require_tool
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
    require_tool("mosquitto")
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
    # The table came in on the TLS port (its config names no other); the broker logs
    # notices only (broker-config's log types), so its connection is there, not the
    # listener's opening.
    assert "as table-1 (p" in broker.log.read_text()


def _has_broker_user() -> bool:
    try:
        pwd.getpwnam(BROKER_USER)
    except KeyError:
        return False
    return True


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory the broker's user can enter (pytest's own are 0700, root's)."""
    path = Path(tempfile.mkdtemp(prefix="gg-broker-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0 or not _has_broker_user(),
                    reason="as root, with Debian's mosquitto user: the broker drops to it")
def test_as_root_the_files_are_given_to_the_broker_user_and_mosquitto_starts(
    open_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_tool("mosquitto")
    files = make_tls(open_dir / "certs", "localhost")
    (open_dir / "certs").chmod(0o755)
    files.cert.chmod(0o644)
    files.key.chmod(0o600)  # root's alone: the broker could not read it
    plain, tls = free_port(), free_port()
    args = ["broker-config", "--tables", "1", "--event", "demo", "--out", str(open_dir / "v"),
            "--listen-port", str(plain), "--tls-cert", str(files.cert), "--tls-key",
            str(files.key), "--tls-port", str(tls)]
    assert main(args) == 0
    assert f"warning: user {BROKER_USER} cannot read {files.key}" in capsys.readouterr().err
    os.chown(files.key, 0, pwd.getpwnam(BROKER_USER).pw_gid)
    files.key.chmod(0o640)  # as docs/tournament/mqtt.md says
    assert main([*args, "--force"]) == 0
    assert "warning" not in capsys.readouterr().err
    out = open_dir / "v"
    broker_uid = pwd.getpwnam(BROKER_USER).pw_uid
    assert (out / "passwd").stat().st_uid == broker_uid
    assert (out / "db").stat().st_uid == broker_uid
    # The conf as written (no "user root"): mosquitto drops to its user, then reads.
    text = (out / "mosquitto.conf").read_text().replace(f"listener {tls}\n",
                                                       f"listener {tls} 127.0.0.1\n")
    broker = Mosquitto.with_config(open_dir / "run", "", plain, tls)
    broker.conf.write_text(text)
    broker.start()
    try:
        hub = Subscriber(tls, "gg/demo/#", username="hub", ca_file=files.ca, host="localhost",
                         password=(out / "secrets" / "hub.password").read_text().strip())
        hub.close()
    finally:
        broker.stop()
    assert not port_open(tls)
