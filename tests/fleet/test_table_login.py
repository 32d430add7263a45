"""How a ``run --sim`` table gets its broker password (issue 19): the ``[tournament]
password_file`` with the broker from ``--broker``, and ``run --password-file``, so the
password need not be in the URL, where ``ps`` shows it. Real Mosquitto (broker-config)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fleet.conftest import heard_online
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.spawn import free_port
from tests.support.venue import Node
from tests.support.web import FAST_CONFIG, PIN

pytestmark = pytest.mark.timeout(120)


def _table(tmp_path: Path, broker: Mosquitto, config_extra: str, *args: str) -> Node:
    config = tmp_path / "table.toml"
    config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n' + config_extra)
    port = free_port()
    return Node(["run", "--sim", "--config", str(config), "--data", str(tmp_path / "t1"),
                 "--host", "127.0.0.1", "--port", str(port),
                 "--broker", f"mqtt://table-1@127.0.0.1:{broker.port}",
                 "--event", "demo", "--table", "1", *args], port, "gg-arbiter ready")


def _connected(tmp_path: Path, locked: tuple[Mosquitto, Path], config_extra: str,
               *args: str) -> None:
    broker, out = locked
    hub = Subscriber(broker.port, "gg/demo/#", username="hub",
                     password=(out / "secrets" / "hub.password").read_text().strip())
    table = _table(tmp_path, broker, config_extra, *args).start()
    try:
        heard_online(table, hub)
    finally:
        table.stop()
        hub.close()


def test_table_login_password_file_of_the_config_with_the_broker_from_the_command_line(
    tmp_path: Path, locked: tuple[Mosquitto, Path]
) -> None:
    # README: with --broker the password still comes from [tournament] password_file.
    secret = locked[1] / "secrets" / "table-1.password"
    _connected(tmp_path, locked, f'\n[tournament]\npassword_file = "{secret}"\n')


def test_table_login_run_password_file(tmp_path: Path, locked: tuple[Mosquitto, Path]) -> None:
    secret = locked[1] / "secrets" / "table-1.password"
    _connected(tmp_path, locked, "", "--password-file", str(secret))


def test_table_login_password_file_needs_a_broker(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    from arbiter.app.cli import main

    (tmp_path / "pw").write_text("x\n")
    assert main(["run", "--sim", "--password-file", str(tmp_path / "pw")]) == 2
    assert "--broker" in capsys.readouterr().err
