"""``setup.sh --service`` and ``--uninstall`` (scripts/appliance/appliance.sh), in a
disposable root."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from arbiter.app.config import load_config
from tests.support.fake_system import ROOT, FakeSystem
from tests.support.systemd_unit import one, parse_unit
from tests.support.tools import require_tool

KINDS = ("keys-gpio", "keys-mcp23017", "rdm6300", "mcu")
UNIT = "/etc/systemd/system/gg-arbiter.service"
CONFIG = "/etc/gg-arbiter/config.toml"
DATA = "/var/lib/gg-arbiter"
VENV = "/opt/gg-arbiter/venv"
WANTS = "/etc/systemd/system/multi-user.target.wants/gg-arbiter.service"
RULES = Path(__file__).resolve().parents[3] / "scripts" / "appliance" / "99-gg-arbiter.rules"
LGPIO_HINT = "python3-lgpio is not in this system's archives"


def expected_groups(kind: str, existing: set[str]) -> set[str]:
    """GPIO for the LEDs, buzzer and button; I2C for the expander; serial for RFID and MCU."""
    needs = {"gpio"} | {"keys-mcp23017": {"i2c"}, "rdm6300": {"dialout"}, "mcu": {"dialout"}}.get(
        kind, set()
    )
    return needs & existing


@pytest.mark.parametrize("kind", KINDS)
def test_install_per_reader_kind(tmp_path: Path, kind: str) -> None:
    system = FakeSystem(tmp_path)
    result = system.run("--service", "--reader", kind)
    assert result.returncode == 0, result.output

    # What pip needs to build RPi.GPIO, and Raspberry Pi OS's lgpio.
    for package in ("python3-venv", "python3-dev", "gcc", "libc6-dev", "python3-lgpio"):
        assert result.called("apt-get", "install", package), package
    assert not result.lines_with(LGPIO_HINT)

    # The project copied and installed into a root-owned venv of its own, with the Pi extras.
    assert (
        system.path("/opt/gg-arbiter/src/pyproject.toml").read_bytes()
        == (Path(__file__).resolve().parents[3] / "pyproject.toml").read_bytes()
    )
    assert result.called("python3", "-m", "venv", "--system-site-packages")
    # Its dependencies from the Pi lock, hash-checked, then the project adding nothing.
    src = system.path("/opt/gg-arbiter/src")
    assert result.called("pip", "install", "--require-hashes", "-r", f"{src}/requirements-pi.lock")
    lock = "requirements-pi.lock"
    assert (src / lock).read_bytes() == (ROOT / lock).read_bytes()
    assert result.called("pip", "install", "--no-deps", str(src))
    assert not any(call[0] == "pip" and "--no-deps" not in call and "--require-hashes" not in call
                   for call in result.calls)
    assert not any(".venv" in arg for call in result.calls for arg in call)
    link = system.path("/usr/local/bin/gg-arbiter")
    assert link.is_symlink() and str(link.readlink()) == f"{VENV}/bin/gg-arbiter"

    # Its own system user, in exactly the groups this reader needs.
    assert result.called("useradd", "--system", "gg-arbiter")
    groups = expected_groups(kind, {"gpio", "i2c", "dialout"})
    for group in ("gpio", "i2c", "dialout"):
        assert ("gg-arbiter" in system.group_members(group)) == (group in groups), group

    # Data private to the service, config naming the data dir, reader and port.
    data = system.path(DATA)
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert result.called("chown", "gg-arbiter:gg-arbiter", str(data))
    config_file = system.path(CONFIG)
    # Readable by the builder's shell (bench commands read the pins), writable by root only.
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o644
    assert result.called("chown", "root:root", str(config_file))
    config = load_config(config_file)
    assert config.reader.kind == kind
    assert config.data_dir == Path(DATA)
    assert config.web.port == 8080

    # The unit with its placeholders filled.
    unit = parse_unit(system.path(UNIT).read_text())
    service = unit["Service"]
    assert one(service, "ExecStart") == f"{VENV}/bin/gg-arbiter run"
    assert one(service, "User") == "gg-arbiter"
    assert set(one(service, "SupplementaryGroups").split()) == groups
    assert "@" not in system.path(UNIT).read_text()

    # udev rules installed, reloaded and applied to devices already there.
    assert system.path("/etc/udev/rules.d/99-gg-arbiter.rules").read_bytes() == RULES.read_bytes()
    assert result.called("udevadm", "control", "--reload")
    assert result.called("udevadm", "trigger")

    # The interface the reader needs, and only that.
    assert result.called("raspi-config", "do_i2c", "0") == (kind == "keys-mcp23017")
    assert result.called("raspi-config", "do_serial_hw", "0") == (kind == "rdm6300")
    if kind in ("keys-gpio", "mcu"):
        assert not result.called("raspi-config")

    # Started now and at boot.
    assert result.called("systemctl", "enable", "gg-arbiter.service")
    assert result.called("systemctl", "restart", "gg-arbiter.service")
    assert system.path(WANTS).is_symlink()


def test_rerun_changes_nothing(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    assert system.run("--service", "--reader", "rdm6300").returncode == 0
    before = system.snapshot()
    again = system.run("--service")  # no --reader: keeps the installed config's
    assert again.returncode == 0, again.output
    assert system.snapshot() == before
    assert again.lines_with("nothing changed")
    assert not again.called("pip") and not again.called("useradd")
    assert not again.called("apt-get", "install")
    # Running already: started (a no-op), not restarted.
    assert again.called("systemctl", "start", "gg-arbiter.service")
    assert not again.called("systemctl", "restart")


def test_rerun_with_another_reader_moves_kind_and_groups(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    assert system.run("--service", "--reader", "keys-mcp23017").returncode == 0
    config = system.path(CONFIG)
    config.write_text(config.read_text() + '\n[signals]\nbuzzer_kind = "active"\n')
    result = system.run("--service", "--reader", "mcu")
    assert result.returncode == 0, result.output
    loaded = load_config(config)
    assert loaded.reader.kind == "mcu"
    assert loaded.signals.buzzer_kind == "active"  # the builder's own edit survives
    assert system.group_members("i2c") == []
    assert system.group_members("dialout") == ["gg-arbiter"]
    unit = parse_unit(system.path(UNIT).read_text())
    assert set(one(unit["Service"], "SupplementaryGroups").split()) == {"gpio", "dialout"}
    assert result.called("systemctl", "restart", "gg-arbiter.service")


def test_unknown_reader_kind_is_refused(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    result = system.run("--service", "--reader", "nfc")
    assert result.returncode != 0
    assert "unknown reader kind nfc" in result.output
    assert not system.path("/opt/gg-arbiter").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--reader", "mcu"), "--reader goes with --service"),
        (("--uninstall", "--service"), "separate runs"),
        (("--service", "--reader"), "--reader needs a KIND"),
        (("--uninstall", "--keep"), "unknown option --keep"),
    ],
)
def test_bad_options_are_refused_before_anything_changes(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    system = FakeSystem(tmp_path)
    result = system.run(*args)
    assert result.returncode == 2
    assert says in result.output
    assert result.calls == []


def test_service_is_refused_off_a_pi(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model="QEMU Virtual Machine")
    result = system.run("--service")
    assert result.returncode != 0
    assert "--service is for a Raspberry Pi" in result.output
    assert not result.called("apt-get") and not system.path(UNIT).exists()


def test_uninstall_keeps_data_and_config(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    assert system.run("--service").returncode == 0
    (system.path(DATA) / "games.journal").write_text("kept")
    result = system.run("--uninstall")
    assert result.returncode == 0, result.output
    for gone in (
        "/opt/gg-arbiter",
        UNIT,
        "/etc/udev/rules.d/99-gg-arbiter.rules",
        "/usr/local/bin/gg-arbiter",
        WANTS,
    ):
        assert not system.path(gone).exists() and not system.path(gone).is_symlink(), gone
    assert result.called("systemctl", "disable", "--now", "gg-arbiter.service")
    assert (system.path(DATA) / "games.journal").read_text() == "kept"
    assert system.path(CONFIG).exists()
    assert not result.called("userdel")
    # Installing again picks the kept config up.
    assert system.run("--service").returncode == 0
    assert load_config(system.path(CONFIG)).reader.kind == "keys-gpio"


def test_purge_removes_data_config_and_user(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    assert system.run("--service", "--reader", "mcu").returncode == 0
    result = system.run("--uninstall", "--purge")
    assert result.returncode == 0, result.output
    for gone in ("/opt/gg-arbiter", DATA, "/etc/gg-arbiter", UNIT):
        assert not system.path(gone).exists(), gone
    assert result.called("userdel", "gg-arbiter")
    assert "gg-arbiter:" not in system.path("/etc/passwd").read_text()
    assert system.group_members("dialout") == []


def test_missing_groups_are_skipped_and_said(tmp_path: Path) -> None:
    # Plain Debian: dialout exists, gpio and i2c do not.
    system = FakeSystem(tmp_path, groups=("dialout",))
    result = system.run("--service", "--reader", "keys-mcp23017")
    assert result.returncode == 0, result.output
    assert result.lines_with("group gpio does not exist")
    assert result.lines_with("group i2c does not exist")
    assert result.called("usermod", "-G", "", "gg-arbiter")
    unit = parse_unit(system.path(UNIT).read_text())
    assert "SupplementaryGroups" not in unit["Service"]

    serial = FakeSystem(tmp_path / "serial", groups=("dialout",))
    assert serial.run("--service", "--reader", "rdm6300").returncode == 0
    unit = parse_unit(serial.path(UNIT).read_text())
    assert one(unit["Service"], "SupplementaryGroups") == "dialout"


def test_lgpio_missing_gives_one_line_and_goes_on(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, available=("python3-venv", "python3-dev", "gcc", "libc6-dev"))
    result = system.run("--service")
    assert result.returncode == 0, result.output
    assert len(result.lines_with("python3-lgpio")) == 1
    assert len(result.lines_with(LGPIO_HINT)) == 1
    assert not result.called("apt-get", "install", "python3-lgpio")
    assert result.called("apt-get", "install", "gcc")


def test_without_raspi_config_the_config_txt_lines_are_printed(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, raspi_config=False)
    i2c = system.run("--service", "--reader", "keys-mcp23017")
    assert i2c.returncode == 0, i2c.output
    assert i2c.lines_with("dtparam=i2c_arm=on")
    uart = system.run("--service", "--reader", "rdm6300")
    assert uart.returncode == 0, uart.output
    assert uart.lines_with("enable_uart=1")


def test_in_a_chroot_the_unit_is_enabled_for_next_boot(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, systemd_running=False, udev_running=False)
    result = system.run("--service")
    assert result.returncode == 0, result.output
    assert result.called("systemctl", f"--root={system.root}", "enable", "gg-arbiter.service")
    assert not result.called("systemctl", "daemon-reload")
    assert not result.called("systemctl", "restart") and not result.called("systemctl", "start")
    assert result.lines_with("starts at the next boot")
    assert result.lines_with("the rules apply at the next boot")
    assert not result.called("udevadm", "trigger")
    assert system.path(WANTS).is_symlink()


@pytest.mark.parametrize("kind", ["keys-gpio", "rdm6300"])
def test_rendered_unit_verifies(tmp_path: Path, kind: str) -> None:
    analyze = require_tool("systemd-analyze")
    system = FakeSystem(tmp_path)
    assert system.run("--service", "--reader", kind).returncode == 0
    # verify checks that ExecStart is an executable file (the fake venv has one)
    # and loads the units it depends on: this machine's, seen from the root.
    units = "/usr/lib/systemd/system"
    shutil.copytree(units, system.path(units), symlinks=True)
    done = subprocess.run(
        [analyze, "verify", f"--root={system.root}", UNIT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    problems = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if "gg-arbiter.service" in line or "Unknown" in line
    ]
    assert done.returncode == 0 and not problems, done.stdout + done.stderr


def test_service_venue_installs_a_tournament_table_in_one_command(tmp_path: Path) -> None:
    # Issue 19: broker-config's one file per table, installed with the appliance.
    from arbiter.app.cli import main

    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "7", "--event", "open", "--out", str(out),
                 "--host", "hall.local"]) == 0
    system = FakeSystem(tmp_path / "pi")
    result = system.run("--service", "--venue", str(out / "tables" / "table-7.toml"))
    assert result.returncode == 0, result.output
    tournament = load_config(system.path(CONFIG)).tournament
    assert tournament.broker is not None and tournament.broker.url.startswith(
        "mqtt://table-7@hall.local:1883")
    assert (tournament.event, tournament.table) == ("open", "7")
    secret = system.path(DATA) / "broker.password"
    assert tournament.password_file == secret
    assert tournament.password() == (out / "secrets" / "table-7.password").read_text().strip()
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(system.path(CONFIG).stat().st_mode) == 0o644  # no password in it
    assert result.called("systemctl", "restart", "gg-arbiter.service")  # it connects now


def test_service_venue_refuses_a_missing_file(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    result = system.run("--service", "--venue", str(tmp_path / "nope.toml"))
    assert result.returncode == 2 and "no such file" in result.output
    assert not system.path(CONFIG).exists()
