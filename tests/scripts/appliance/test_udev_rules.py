"""scripts/appliance/99-gg-arbiter.rules, applied with udev's matching rules to fake device chains.

udev (man 7 udev): KERNEL, SUBSYSTEM match the device itself; KERNELS, SUBSYSTEMS
and ATTRS{...} match the device or one of its parents, and all of them the same
one; values are shell globs. The chains below are what ``udevadm info -a`` shows
for a USB-serial adapter: the tty, the USB interface (``1-1.2:1.0``), the USB
device (``1-1.2``, with idVendor/idProduct/serial), its hub.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[3] / "scripts" / "appliance" / "99-gg-arbiter.rules"
KEY = re.compile(r'([A-Z_]+(?:\{[^}]+\})?)(==|!=|\+=|:=|=)"([^"]*)"')
PARENT_KEYS = ("KERNELS", "SUBSYSTEMS", "DRIVERS")

Device = dict[str, str]  # KERNEL, SUBSYSTEM and ATTR{name} entries


def parse(line: str) -> list[tuple[str, str, str]]:
    """A rule line as (key, operator, value) triples; the whole line must parse."""
    triples = KEY.findall(line)
    rebuilt = ", ".join(f'{k}{op}"{v}"' for k, op, v in triples)
    assert rebuilt == line.strip(), f"cannot parse: {line}"
    return triples


def rule_lines(text: str, prefix: str = "") -> list[str]:
    """The rule lines, or with ``prefix`` the commented-out ones that start with it."""
    if prefix:
        return [ln[len(prefix):] for ln in text.splitlines() if ln.startswith(prefix)]
    return [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def matches(rule: list[tuple[str, str, str]], chain: list[Device]) -> bool:
    own = [(k, v) for k, op, v in rule if op == "==" and (k in ("KERNEL", "SUBSYSTEM"))]
    parent = [(k, v) for k, op, v in rule
              if op == "==" and (k in PARENT_KEYS or k.startswith("ATTRS{"))]
    if not all(fnmatch.fnmatchcase(chain[0].get(k, ""), v) for k, v in own):
        return False

    def device_key(key: str) -> str:
        if key.startswith("ATTRS{"):
            return "ATTR{" + key[6:]
        return key[:-1]  # KERNELS -> KERNEL

    return any(
        all(device_key(k) in dev and fnmatch.fnmatchcase(dev[device_key(k)], v)
            for k, v in parent)
        for dev in chain
    )


def names(rules: list[str], chain: list[Device]) -> set[str]:
    """The SYMLINKs the rules give the device at the head of ``chain``."""
    out = set()
    for line in rules:
        triples = parse(line)
        if matches(triples, chain):
            out |= {v for k, op, v in triples if k == "SYMLINK" and op == "+="}
    return out


def adapter(tty: str, port: str, vendor: str = "0403", product: str = "6001",
            serial: str | None = None) -> list[Device]:
    usb = {"KERNEL": port, "SUBSYSTEM": "usb", "ATTR{idVendor}": vendor,
           "ATTR{idProduct}": product}
    if serial is not None:
        usb["ATTR{serial}"] = serial
    return [
        {"KERNEL": tty, "SUBSYSTEM": "tty"},
        {"KERNEL": tty, "SUBSYSTEM": "usb-serial"},
        {"KERNEL": f"{port}:1.0", "SUBSYSTEM": "usb", "ATTR{bInterfaceNumber}": "00"},
        usb,
        {"KERNEL": port.rsplit(".", 1)[0], "SUBSYSTEM": "usb", "ATTR{idVendor}": "2109",
         "ATTR{idProduct}": "3431"},  # the Pi 4's VL805 hub
    ]


def filled(text: str, **values: str) -> str:
    for placeholder, value in values.items():
        text = text.replace(placeholder.replace("_", "-"), value)
    return text


@pytest.fixture(scope="module")
def text() -> str:
    return RULES.read_text(encoding="utf-8")


def test_every_rule_line_parses(text: str) -> None:
    for line in rule_lines(text) + rule_lines(text, "#PORT "):
        triples = parse(line)
        assert ("SUBSYSTEM", "==", "tty") in triples
        assert ("GROUP", "=", "dialout") in triples and ("MODE", "=", "0660") in triples


def test_adapters_with_their_own_serials_get_one_name_each(text: str) -> None:
    rules = rule_lines(filled(text, REPLACE_ATTACKER_SERIAL="A10KX1",
                              REPLACE_DEFENDER_SERIAL="A10KX2"))
    assert names(rules, adapter("ttyUSB0", "1-1.2", serial="A10KX1")) == {"gg-attacker"}
    assert names(rules, adapter("ttyUSB1", "1-1.3", serial="A10KX2")) == {"gg-defender"}
    # the serial belongs to the adapter: swapping ports keeps the names
    assert names(rules, adapter("ttyUSB0", "1-1.3", serial="A10KX1")) == {"gg-attacker"}
    pico = adapter("ttyACM0", "1-1.4", vendor="2e8a", product="0005", serial="E6614C311B")
    assert names(rules, pico) == {"gg-slots"}


def test_clones_sharing_a_serial_defeat_the_serial_rules(text: str) -> None:
    # the problem the port rules solve: both clones answer to the same name
    rules = rule_lines(filled(text, REPLACE_ATTACKER_SERIAL="A50285BI",
                              REPLACE_DEFENDER_SERIAL="A50285BI"))
    one = names(rules, adapter("ttyUSB0", "1-1.2", serial="A50285BI"))
    two = names(rules, adapter("ttyUSB1", "1-1.3", serial="A50285BI"))
    assert one == two == {"gg-attacker", "gg-defender"}


def test_port_rules_tell_clones_apart_by_port(text: str) -> None:
    port_rules = rule_lines(filled(text, REPLACE_ATTACKER_PORT="1-1.2",
                                   REPLACE_DEFENDER_PORT="1-1.3"), "#PORT ")
    assert len(port_rules) == 2
    for line in port_rules:
        assert "ATTRS{serial}" not in line
    pico_rule = [ln for ln in rule_lines(text) if "gg-slots" in ln]
    rules = port_rules + pico_rule
    for serial in ("A50285BI", None):  # a shared serial, or none (CH340)
        assert names(rules, adapter("ttyUSB0", "1-1.2", serial=serial)) == {"gg-attacker"}
        assert names(rules, adapter("ttyUSB1", "1-1.3", serial=serial)) == {"gg-defender"}
        # an adapter in another port gets no name, rather than a wrong one
        assert names(rules, adapter("ttyUSB2", "1-1.1", serial=serial)) == set()
    # the port rule matches the USB device, not its interface ("1-1.2:1.0")
    assert names(rules, adapter("ttyUSB0", "1-1.20", serial=None)) == set()
    pico = adapter("ttyACM0", "1-1.2", vendor="2e8a", product="0005", serial="E6614C311B")
    assert "gg-slots" in names(rules, pico)


def test_the_documented_command_prints_the_port_not_the_interface(text: str) -> None:
    command = next(ln for ln in text.splitlines() if "grep -m1 -E" in ln)
    pattern = re.search(r"grep -m1 -E '([^']+)'", command)
    assert pattern is not None
    # what `udevadm info -a -n /dev/ttyUSB0` prints, walking up from the tty
    walk = [
        '  looking at device \'/devices/.../1-1.2/1-1.2:1.0/ttyUSB0/tty/ttyUSB0\':',
        '    KERNEL=="ttyUSB0"',
        '  looking at parent device \'/devices/.../1-1.2/1-1.2:1.0/ttyUSB0\':',
        '    KERNELS=="ttyUSB0"',
        '  looking at parent device \'/devices/.../1-1.2/1-1.2:1.0\':',
        '    KERNELS=="1-1.2:1.0"',
        '  looking at parent device \'/devices/.../1-1.2\':',
        '    KERNELS=="1-1.2"',
        '  looking at parent device \'/devices/.../1-1\':',
        '    KERNELS=="1-1"',
    ]
    first = next(ln for ln in walk if re.search(pattern.group(1), ln))
    assert first.strip() == 'KERNELS=="1-1.2"'
