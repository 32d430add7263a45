"""enroll and selftest beside a running arbiter: through its local API, never a second copy.

The arbiter runs in this process on a real waitress server (any free port) and
holds its data directory, as the service does; its RFID reader reads a pty, so
the test holds a tag over it by writing RDM6300 frames to the pty's other end.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.cli import main
from arbiter.app.commands import common
from arbiter.app.config import load_config
from arbiter.drivers.fakes import FakeRdm6300, PtyPort
from arbiter.drivers.pins import mock_pin_factory
from arbiter.rules.army import PhysicalPiece
from arbiter.rules.verdict import Role
from arbiter.storage.registry import TagRegistry
from tests.support.waiting import wait_until
from tests.support.web import FAST_CONFIG, PIN, build_app, live_server, running_device

TAG = "62E3086CED"


class Service(NamedTuple):
    """A running arbiter: its device, its port and the CLI options that reach it."""

    device: Any
    port: int
    options: list[str]


def _options(config: Path, data: Path, port: int) -> list[str]:
    return ["--config", str(config), "--data", str(data), "--port", str(port)]


@pytest.fixture
def sim_service(tmp_path: Path) -> Iterator[Service]:
    data = tmp_path / "data"
    with running_device(data) as device, live_server(build_app(device)) as server:
        yield Service(device, server.port, _options(data / "test.toml", data, server.port))


@pytest.fixture
def rfid_service(tmp_path: Path) -> Iterator[tuple[Service, FakeRdm6300]]:
    data = tmp_path / "data"
    data.mkdir()
    pty = PtyPort()
    field = FakeRdm6300(pty)
    config = data / "test.toml"
    config.write_text(
        FAST_CONFIG + f'[reader]\nkind = "rdm6300"\nattacker_port = "{pty.name}"\n'
        'defender_port = "loop://"\n', encoding="utf-8")
    device = build_arbiter(load_config(config), data_dir=data, pin_factory=mock_pin_factory())
    device.start()
    try:
        with live_server(build_app(device)) as server:
            yield Service(device, server.port, _options(config, data, server.port)), field
    finally:
        device.close()
        field.close()
        pty.close()


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *argv: str, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- selftest --------------------------------------------------------------------


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_selftest_beside_the_arbiter_runs_it_there(
    sim_service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    played_before = len(sim_service.device.outputs()["played"])
    code, out, err = _cli(monkeypatch, capsys, "selftest", "--tune", "ready", "--pin", PIN,
                          *sim_service.options)
    assert code == 0, err
    assert f"through the running arbiter at http://127.0.0.1:{sim_service.port}" in out
    assert "  LED attacker: lit" in out and "  slot defender: empty" in out
    assert out.endswith("PASS\n")
    # It was the running arbiter's buzzer that played, not a second one.
    assert len(sim_service.device.outputs()["played"]) > played_before


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_selftest_beside_the_arbiter_pin_from_the_environment_and_wrong_pin(
    sim_service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GG_ARBITER_PIN", PIN)
    code, out, _ = _cli(monkeypatch, capsys, "selftest", "--tune", "ready",
                        *sim_service.options)
    assert code == 0 and "PASS" in out
    code, out, err = _cli(monkeypatch, capsys, "selftest", "--tune", "ready", "--pin", "9999",
                          *sim_service.options)
    assert code == 2 and "the running arbiter refused: wrong admin PIN" in err


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_selftest_beside_the_arbiter_during_a_game_says_so(
    sim_service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    device = sim_service.device
    device.sim.seat(Role.ATTACKER, "W:SPY")
    device.sim.seat(Role.DEFENDER, "B:5*G")
    wait_until(lambda: device.status()["challenge_count"] == 1)
    code, _, err = _cli(monkeypatch, capsys, "selftest", "--tune", "ready", "--pin", PIN,
                        *sim_service.options)
    assert code == 2 and "a game is in progress" in err


# -- enroll ----------------------------------------------------------------------


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_enroll_beside_the_arbiter_enrolls_through_it(
    rfid_service: tuple[Service, FakeRdm6300],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    service, field = rfid_service

    def hold_tag_once_enrolling() -> None:
        wait_until(lambda: service.device.enrollment_status()["active"])
        field.hold(TAG)

    helper = threading.Thread(target=hold_tag_once_enrolling, daemon=True)
    helper.start()
    code, out, err = _cli(monkeypatch, capsys, "enroll", "--piece", "W:SPY#1", "--pin", PIN,
                          *service.options)
    helper.join()
    assert code == 0, err
    assert "[0/1] Put W:SPY#1 in the ATTACKER slot" in out
    assert f"W:SPY#1 enrolled with tag {TAG}" in out
    # The running arbiter's registry has it: no second data directory, no second reader.
    registry = TagRegistry.in_directory(service.device.data_dir)
    assert registry.lookup_physical(TAG) == PhysicalPiece.parse("W:SPY#1")
    assert service.device.enrollment_status()["active"] is False


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_enroll_beside_the_arbiter_in_the_admins_own_order(
    rfid_service: tuple[Service, FakeRdm6300],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    service, _field = rfid_service
    code, out, err = _cli(monkeypatch, capsys, "enroll", "--pin", PIN, *service.options,
                          stdin="b:spy\nW:KING\nq\n")
    assert code == 0, err
    assert "[0/42] Put B:SPY#1 in the ATTACKER slot" in out
    assert "the running arbiter refused: unknown rank" in out
    assert "Enrollment ended; the arbiter judges again." in out


def test_enroll_beside_the_arbiter_skip_and_quit(
    rfid_service: tuple[Service, FakeRdm6300],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    service, _field = rfid_service
    code, out, err = _cli(monkeypatch, capsys, "enroll", "--pin", PIN, *service.options,
                          stdin="s\nq\n")
    assert code == 0, err
    assert "[0/42] Put W:5*G in the ATTACKER slot" in out
    assert "skipped W:5*G" in out
    assert "Enrollment ended; the arbiter judges again." in out
    assert service.device.enrollment_status()["active"] is False
    assert service.device.status()["enrolling"] is False


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_enroll_beside_a_keys_arbiter_is_refused_before_asking(
    sim_service: Service, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(monkeypatch, capsys, "enroll", "--pin", PIN, *sim_service.options)
    assert code == 2 and "enrollment is for RFID readers" in err


# -- the service's data directory -----------------------------------------------------


def test_commands_use_the_service_data_directory_not_a_second_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service_dir = tmp_path / "var-lib-gg-arbiter"
    service_dir.mkdir()
    home_data = tmp_path / "xdg"
    monkeypatch.setattr(common, "SERVICE_DATA_DIR", service_dir)
    monkeypatch.setenv("XDG_DATA_HOME", str(home_data))
    monkeypatch.delenv("GG_ARBITER_DATA", raising=False)
    config = tmp_path / "c.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("GG_ARBITER_CONFIG", str(config))
    code, _, err = _cli(monkeypatch, capsys, "set-pin", "135792")
    assert code == 0, err
    assert f"using the service's data directory {service_dir}" in err
    assert (service_dir / "admin.json").exists()
    assert not (home_data / "gg-arbiter").exists()
    # An explicit choice still wins.
    code, _, err = _cli(monkeypatch, capsys, "set-pin", "135792", "--data", str(tmp_path / "d"))
    assert code == 0 and "service's data directory" not in err
    assert (tmp_path / "d" / "admin.json").exists()
