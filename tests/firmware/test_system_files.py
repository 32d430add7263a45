"""The Pi's system files: the systemd unit and the udev rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arbiter.app.config import load_config

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"
UNIT = FIRMWARE / "systemd" / "gg-arbiter.service"
RULES = FIRMWARE / "udev" / "99-gg-arbiter.rules"

Unit = dict[str, dict[str, list[str]]]


def parse_unit(text: str) -> Unit:
    """A systemd unit as section -> key -> values (a key may repeat, e.g. Environment)."""
    sections: Unit = {}
    current: dict[str, list[str]] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"line {number}: {raw!r}"
        assert not line.endswith("\\"), f"line {number}: continuation lines not expected"
        assert re.fullmatch(r"[A-Za-z]+", key.strip()), f"line {number}: bad key {key!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def one(section: dict[str, list[str]], key: str) -> str:
    """The value of a key that must be set exactly once."""
    values = section[key]
    assert len(values) == 1, f"{key} is set {len(values)} times"
    return values[0]


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


def test_unit_sets_the_data_dir_and_device_groups(unit: Unit) -> None:
    service = unit["Service"]
    assert "GG_ARBITER_DATA=/var/lib/gg-arbiter" in service["Environment"]
    assert one(service, "StateDirectory") == "gg-arbiter"
    assert one(service, "WorkingDirectory") == "/var/lib/gg-arbiter"
    assert set(one(service, "SupplementaryGroups").split()) == {"gpio", "i2c", "dialout"}


def test_unit_hardening_leaves_devices_and_home_venvs_usable(unit: Unit) -> None:
    service = unit["Service"]
    assert one(service, "NoNewPrivileges") == "yes"
    assert one(service, "ProtectSystem") == "full"
    assert one(service, "ProtectHome") == "read-only"
    for breaks_gpio in ("PrivateDevices", "DevicePolicy", "ProtectKernelTunables"):
        assert breaks_gpio not in service


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
