"""The [tournament] section and run's --broker/--event/--table."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.app.config import load_config
from arbiter.app.errors import ConfigError


def test_default_config_has_no_tournament() -> None:
    assert not load_config().tournament.configured


def test_tournament_section_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[tournament]\nbroker = "mqtt://hall:1884"\nevent = "open-2026"\n'
                    'table = "12"\nkeepalive = 10\n')
    t = load_config(path).tournament
    assert t.broker is not None and (t.broker.host, t.broker.port) == ("hall", 1884)
    assert (t.event, t.table, t.keepalive) == ("open-2026", "12", 10)
    path.write_text('[tournament]\nbroker = "mqtt://hall"\nevent = "a b"\ntable = "1"\n')
    with pytest.raises(ConfigError, match=r"tournament.*event"):
        load_config(path)
    path.write_text('[tournament]\nbroker = "tcp://hall"\n')
    with pytest.raises(ConfigError, match=r"tournament.*broker"):
        load_config(path)


def test_run_refuses_a_bad_broker_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--sim", "--broker", "http://x", "--event", "e", "--table", "1"]) == 2
    assert "mqtt://" in capsys.readouterr().err
