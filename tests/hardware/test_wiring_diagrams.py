"""docs/build/wiring/: the WireViz diagrams and pin maps match the pin tables and are fresh.

Expected pins come from the parts' own pinouts (the RC522 board's header order,
the Pico's and the Pi's datasheet pin maps written out below) and the firmware's
pin constants, not from the generator.
"""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from arbiter.app.config import load_config
from tests.support.tools import require_tool

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
OUT = ROOT / "docs" / "build" / "wiring"
FIRMWARE = ROOT / "firmware" / "pico" / "main.py"

#: RC522 board header, left to right (HARDWARE-NOTES: the common board).
RC522 = ["SDA", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V"]
#: Raspberry Pi Pico datasheet pinout: GP number -> pin; and its GND pins.
PICO_GP_PIN = {0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 10: 14, 11: 15, 12: 16, 13: 17, 14: 19,
               15: 20, 16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27}
PICO_GND = {3, 8, 13, 18, 23, 28, 38}
PICO_3V3_OUT, PICO_VSYS, PICO_VBUS = 36, 39, 40
#: Raspberry Pi 40-pin header GND pins.
PI_GND = {6, 9, 14, 20, 25, 30, 34, 39}
VARIANTS = ("rc522", "keys-gpio", "keys-mcp23017", "rdm6300", "mcu")


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hardware_generate_wv", HARDWARE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness(generate: ModuleType) -> ModuleType:
    return sys.modules["harness"]


def _doc(stem: str) -> dict[str, Any]:
    data = yaml.safe_load((OUT / f"{stem}.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _wires(doc: dict[str, Any]) -> list[tuple[str, int, str, str, int]]:
    """Every wire as (from connector, pin, colour, to connector, pin)."""
    out = []
    for a, cable, b in doc["connections"]:
        (cname, cpins), = cable.items()
        colours = doc["cables"][cname]["colors"]
        a_name, a_pins = next(iter(a.items())) if isinstance(a, dict) else (a, None)
        b_name, b_pins = next(iter(b.items())) if isinstance(b, dict) else (b, None)
        for i, wire in enumerate(cpins):
            out.append((a_name, a_pins[i] if a_pins else 0, colours[wire - 1],
                        b_name, b_pins[i] if b_pins else 0))
    return out


def _firmware_pins() -> dict[str, dict[str, int]]:
    """Slot letter -> signal -> GP, read from main.py's RC522_BUS line by a regex."""
    text = FIRMWARE.read_text(encoding="utf-8")
    line = re.search(r"^RC522_BUS = (.+?)(?:\s+#.*)?$", text, re.M)
    assert line is not None
    out = {}
    for slot, numbers in re.findall(r'"([AD])": \(([\d, ]+)\)', line.group(1)):
        _, sck, mosi, miso, sda, rst = (int(n) for n in numbers.split(","))
        out[slot] = {"SCK": sck, "MOSI": mosi, "MISO": miso, "SDA": sda, "RST": rst}
    return out


# ------------------------------------------------------------------ staleness


def test_diagrams_and_renders_are_committed_fresh(generate: ModuleType,
                                                  harness: ModuleType) -> None:
    require_tool("dot")  # graphviz renders the pictures: fails under CI=true, else skips
    files = harness.outputs(load_config(), generate.HEADER)
    assert {p.parent for p in files} == {OUT}
    for variant in VARIANTS:
        assert OUT / f"{variant}-header.png" in files
    assert generate.stale(files) == [], "run .venv/bin/python hardware/generate.py"
    # and a stale one is reported
    some = OUT / "rc522-readers.yml"
    assert generate.stale({some: str(files[some]).replace("RC522", "RC523")}) == [some]


def test_rendering_is_byte_stable(harness: ModuleType) -> None:
    require_tool("dot")
    text = (OUT / "rc522-readers.yml").read_text(encoding="utf-8")
    harness.render.cache_clear()
    first = harness.render("rc522-readers.yml", text)
    harness.render.cache_clear()
    assert harness.render("rc522-readers.yml", text) == first
    assert first == ((OUT / "rc522-readers.svg").read_bytes(),
                     (OUT / "rc522-readers.png").read_bytes())


# ------------------------------------------------------------------- flagship


def test_flagship_boards_are_wired_as_the_firmware_drives_them() -> None:
    doc = _doc("rc522-readers")
    pins = _firmware_pins()
    boards = [n for n in doc["connectors"] if n.startswith("RC522")]
    assert sorted(boards) == ["RC522 ATTACKER", "RC522 DEFENDER"]
    for board in boards:
        assert doc["connectors"][board]["pinlabels"] == RC522  # physical order
        assert doc["connectors"][board]["pins"] == list(range(1, 9))
    got: dict[tuple[str, str], int] = {}
    for a, a_pin, _, b, b_pin in _wires(doc):
        assert a == "Pico" and b in boards
        got[(b, RC522[b_pin - 1])] = a_pin
    for board, slot in (("RC522 ATTACKER", "A"), ("RC522 DEFENDER", "D")):
        for signal in ("SDA", "SCK", "MOSI", "MISO", "RST"):
            assert got[(board, signal)] == PICO_GP_PIN[pins[slot][signal]], (board, signal)
        assert got[(board, "3.3V")] == PICO_3V3_OUT  # never VBUS or VSYS (5 V)
        assert got[(board, "GND")] in PICO_GND
        assert (board, "IRQ") not in got
    # no splice: the boards share only 3.3V (a bought Dupont Y), never a signal or GND
    shared = {pin for (board, signal), pin in got.items() if board == "RC522 ATTACKER"} & {
        pin for (board, signal), pin in got.items() if board == "RC522 DEFENDER"}
    assert shared == {PICO_3V3_OUT}
    # the Pico's rows list its pin numbers in physical order, named as on the board
    pico = doc["connectors"]["Pico"]
    assert pico["pins"] == sorted(pico["pins"])
    for pin, label in zip(pico["pins"], pico["pinlabels"], strict=True):
        gp = [g for g, p in PICO_GP_PIN.items() if p == pin]
        assert label.startswith(f"GP{gp[0]}" if gp else ("GND" if pin in PICO_GND else "3V3"))


@pytest.mark.parametrize("stem", ["rc522-readers", "rc522-pi", "keys-gpio",
                                  "keys-mcp23017", "rdm6300-readers", "mcu-readers"])
def test_every_wire_has_a_colour_and_a_bundle_never_repeats_one(stem: str) -> None:
    doc = _doc(stem)
    for name, cable in doc["cables"].items():
        colours = cable["colors"]
        assert colours and all(re.fullmatch(r"[A-Z]{2}", c) for c in colours), name
        signal = [c for c in colours if c != "BK"]
        assert len(signal) == len(set(signal)), (stem, name, colours)


def test_the_flagships_prewired_parts_each_return_on_their_own_gnd_pin(
        generate: ModuleType) -> None:
    """Bought pre-wired (the resistor inside the + lead), each LED's, the button's and
    the piezo's - lead ends in its own plug: one GND pin each, no joined cathodes, no
    330 ohm resistor to put in."""
    doc = _doc("rc522-pi")
    parts = [n for n in doc["connectors"] if n.endswith(" LED")] + ["Piezo", "NEW GAME"]
    wires = _wires(doc)
    grounds = []
    for part in parts:
        into = {b_pin: (a, a_pin) for a, a_pin, _, b, b_pin in wires if b == part}
        assert into[1][0] == "Pi" and generate.HEADER[into[1][1]].startswith("GPIO"), part
        assert into[2][0] == "Pi GND" and into[2][1] in PI_GND, part
        grounds.append(into[2][1])
        if part.endswith(" LED"):
            plus, minus = doc["connectors"][part]["pinlabels"]
            assert "+" in plus and "resistor inside" in plus and "-" in minus
    assert len(set(grounds)) == len(parts) == 5, grounds
    text = (OUT / "rc522-pi.yml").read_text(encoding="utf-8")
    assert "330" not in text and "joined" not in text


@pytest.mark.parametrize("stem", ["keys-gpio", "rdm6300-pi", "mcu-pi"])
def test_leds_show_polarity_and_their_resistor_on_the_anode(generate: ModuleType,
                                                           stem: str) -> None:
    doc = _doc(stem)
    leds = [n for n in doc["connectors"] if n.endswith(" LED")]
    assert sorted(leds) == ["ATTACKER LED", "DEFENDER LED", "STATUS LED"]
    wires = _wires(doc)
    for led in leds:
        anode, cathode = doc["connectors"][led]["pinlabels"]
        assert "330 Ω" in anode and "anode (long leg)" in anode
        assert "cathode (short leg)" in cathode
        into = {b_pin: (a, a_pin) for a, a_pin, _, b, b_pin in wires if b == led}
        src, pin = into[1]
        assert src == "Pi" and generate.HEADER[pin].startswith("GPIO")
        src, pin = into[2]
        assert src == "Pi GND" and pin in PI_GND


@pytest.mark.parametrize("stem", ["rc522-pi", "keys-gpio", "keys-mcp23017", "rdm6300-pi"])
def test_pi_pins_follow_the_config(generate: ModuleType, stem: str) -> None:
    kind = {"rc522-pi": "mcu", "rdm6300-pi": "rdm6300"}.get(stem, stem)
    config = generate.config_for(load_config(), kind)
    doc = _doc(stem)
    pi = doc["connectors"]["Pi"]
    assert pi["pins"] == sorted(pi["pins"])
    listed = dict(zip(pi["pins"], pi["pinlabels"], strict=True))
    for role, bcm in config.gpio_pins().items():
        if kind == "keys-mcp23017" and role.startswith(("attacker switch", "defender switch")):
            continue
        pin = generate.header_pin(bcm)
        assert listed[pin].startswith(f"GPIO{bcm}"), (role, listed.get(pin))
    for pin in doc["connectors"]["Pi GND"]["pins"]:
        assert pin in PI_GND


@pytest.mark.parametrize("stem", ["rdm6300-readers", "mcu-readers"])
def test_every_rdm6300_tx_goes_through_its_divider(stem: str) -> None:
    doc = _doc(stem)
    wires = _wires(doc)
    for slot in ("ATTACKER", "DEFENDER"):
        module, divider = f"{slot} RDM6300", f"{slot} divider"
        assert doc["connectors"][module]["pinlabels"][0] == "TX"
        tx = [(b, b_pin) for a, a_pin, _, b, b_pin in wires if a == module and a_pin == 1]
        assert tx == [(divider, 1)]  # TX only into the 1 kΩ end
        labels = doc["connectors"][divider]["pinlabels"]
        assert "1 kΩ" in labels[0] and "2 kΩ" in labels[2]
        out = [(b, b_pin) for a, a_pin, _, b, b_pin in wires if a == divider and a_pin == 2]
        assert len(out) == 1
        target, pin = out[0]
        if stem == "mcu-readers":
            assert target == "Pico" and pin in (PICO_GP_PIN[1], PICO_GP_PIN[5])
        else:
            assert doc["connectors"][target]["pinlabels"][pin - 1] == "RXD"


# ------------------------------------------------------------------- pin maps


@pytest.mark.parametrize("variant", VARIANTS)
def test_header_map_is_the_2_by_20_header_from_above(generate: ModuleType,
                                                      variant: str) -> None:
    text = (OUT / f"{variant}-header.gv").read_text(encoding="utf-8")
    rows = re.findall(r"<TR>(.*?)</TR>", text)
    pairs = []
    for row in rows:
        numbers = re.findall(r">(?:<B>)?(\d+)(?:</B>)?</FONT></TD>", row)
        if len(numbers) == 2:
            pairs.append((int(numbers[0]), int(numbers[1])))
    assert pairs == [(n, n + 1) for n in range(1, 41, 2)]  # odd row left, pin 1 on top
    assert "SD card end" in text
    stem = "rc522-pi" if variant == "rc522" else (
        f"{variant}-pi" if variant in ("rdm6300", "mcu") else variant)
    doc = _doc(stem)
    used = set(doc["connectors"]["Pi"]["pins"]) | set(doc["connectors"]["Pi GND"]["pins"])
    for row in rows:
        for pin in used:
            if re.search(rf">(?:<B>)?{pin}(?:</B>)?</FONT></TD>", row):
                assert "BGCOLOR" in row, (variant, pin)


def test_flagship_pictures_fit_a_page(harness: ModuleType) -> None:
    # 14 pt text at the PNG's dpi, scaled to A4 landscape's 277 mm: at least 6 pt
    for stem in ("rc522-readers", "rc522-pi"):
        data = (OUT / f"{stem}.png").read_bytes()
        width, _ = struct.unpack(">II", data[16:24])
        page_px = 277 / 25.4 * harness.PNG_DPI
        assert 14 * min(1.0, page_px / width) >= 6, (stem, width)
