"""The Pi's system files: the systemd unit and the udev rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arbiter.app.config import load_config
from tests.support.systemd_unit import Unit, one, parse_unit

APPLIANCE = Path(__file__).resolve().parents[3] / "scripts" / "appliance"
UNIT = APPLIANCE / "gg-arbiter.service"
RULES = APPLIANCE / "99-gg-arbiter.rules"

@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT.read_text(encoding="utf-8"))


def rules() -> list[str]:
    lines = RULES.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_unit_parse_keeps_repeated_keys() -> None:
    parsed = parse_unit("[Service]\nEnvironment=A=1\n# note\nEnvironment=B=2\n")
    assert parsed == {"Service": {"Environment": ["A=1", "B=2"]}}


def test_unit_has_the_three_sections(unit: Unit) -> None:
    assert set(unit) == {"Unit", "Service", "Install"}
    assert one(unit["Install"], "WantedBy") == "multi-user.target"


def test_unit_is_a_notify_service_with_a_watchdog(unit: Unit) -> None:
    service = unit["Service"]
    assert one(service, "Type") == "notify"
    assert one(service, "NotifyAccess") == "main"
    assert int(one(service, "WatchdogSec")) == 30
    assert one(service, "Restart") == "on-failure"
    assert one(service, "KillSignal") == "SIGTERM"
    assert one(service, "TimeoutStopSec") == "10"


def test_unit_has_the_setup_placeholders(unit: Unit) -> None:
    service = unit["Service"]
    assert one(service, "ExecStart") == "@VENV@/bin/gg-arbiter run"
    assert one(service, "User") == "@USER@"
    assert one(service, "SupplementaryGroups") == "@GROUPS@"


def test_unit_sets_the_data_dir_and_device_groups(unit: Unit) -> None:
    service = unit["Service"]
    assert "GG_ARBITER_DATA=/var/lib/gg-arbiter" in service["Environment"]
    assert "GG_ARBITER_CONFIG=/etc/gg-arbiter/config.toml" in service["Environment"]
    assert one(service, "StateDirectory") == "gg-arbiter"
    # systemd sets this mode at every start: looser would expose the ranks.
    assert one(service, "StateDirectoryMode") == "0700"
    assert one(service, "WorkingDirectory") == "/var/lib/gg-arbiter"


def test_unit_hardening_leaves_devices_usable(unit: Unit) -> None:
    service = unit["Service"]
    assert one(service, "NoNewPrivileges") == "yes"
    assert one(service, "ProtectSystem") == "strict"
    assert one(service, "ProtectHome") == "yes"
    for breaks_gpio in (
        "PrivateDevices",
        "DevicePolicy",
        "DeviceAllow",
        "ProtectClock",
        "ProtectKernelTunables",
    ):
        assert breaks_gpio not in service
    families = set(one(service, "RestrictAddressFamilies").split())
    assert families == {"AF_UNIX", "AF_INET", "AF_INET6"}


def test_udev_rules_name_the_configured_ports() -> None:
    reader = load_config().reader
    names = {name for line in rules() for name in re.findall(r'SYMLINK\+="([^"]+)"', line)}
    for port in (reader.attacker_port, reader.defender_port, reader.mcu_port):
        assert port.startswith("/dev/")
        assert port.removeprefix("/dev/") in names
    assert names == {"gg-attacker", "gg-defender", "gg-slots"}


def test_udev_rules_are_tty_rules_for_dialout() -> None:
    assert len(rules()) == 3
    for line in rules():
        assert 'SUBSYSTEM=="tty"' in line
        assert 'GROUP="dialout"' in line and 'MODE="0660"' in line
        assert 'ATTRS{idVendor}=="' in line and 'ATTRS{idProduct}=="' in line


def test_udev_rules_match_adapters_by_serial_and_the_pico_by_vendor() -> None:
    by_name: dict[str, str] = {}
    for line in rules():
        found = re.search(r'SYMLINK\+="([^"]+)"', line)
        assert found is not None, line
        by_name[found.group(1)] = line
    assert 'ATTRS{serial}=="' in by_name["gg-attacker"]
    assert 'ATTRS{serial}=="' in by_name["gg-defender"]
    assert 'ATTRS{idVendor}=="2e8a"' in by_name["gg-slots"]
    assert "udevadm info -a -n /dev/ttyUSB0" in RULES.read_text(encoding="utf-8")
