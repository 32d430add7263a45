"""The wiring pictures, wiring.md and the key chart match the code's pin tables and key code."""

from __future__ import annotations

import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

from arbiter.app.config import READER_KINDS, load_config
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.ranks import Side

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
DOCS = HARDWARE.parent / "docs" / "build"
SCHEMATICS = DOCS / "schematics"
FIRMWARE = HARDWARE.parent / "firmware" / "pico" / "main.py"
SVG = "{http://www.w3.org/2000/svg}"
KINDS = ("keys-gpio", "keys-mcp23017", "rdm6300", "mcu")


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hardware_generate", HARDWARE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def wiring(generate: ModuleType) -> ModuleType:
    return sys.modules["wiring"]  # imported by generate.py from hardware/


@pytest.fixture(scope="module")
def keychart(generate: ModuleType) -> ModuleType:
    return sys.modules["keychart"]


def _texts(path: Path) -> list[str]:
    """Every text run of an SVG (schemdraw puts label text in <tspan>s)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _md_section(kind: str) -> str:
    text = (DOCS / "wiring.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.M)
    return next(s for s in sections if s.startswith(f"`{kind}`"))


# ------------------------------------------------------------------ staleness


def test_every_wiring_and_chart_file_is_generated_and_committed_fresh(
    generate: ModuleType,
) -> None:
    files = generate.outputs()
    names = {path.name for path in files}
    expected = {f"wiring-{kind}.svg" for kind in KINDS} | {
        "wiring.md", "keychart-W.svg", "keychart-B.svg", "keychart.pdf",
    }
    assert expected <= names
    assert "wiring.svg" not in names and not (SCHEMATICS / "wiring.svg").exists()
    mine = {path: content for path, content in files.items() if path.name in expected}
    assert generate.stale(mine) == []


def test_generated_pictures_and_pdf_are_byte_stable(generate: ModuleType) -> None:
    first, second = generate.outputs(), generate.outputs()
    assert first == second
    assert isinstance(first[HARDWARE / "keychart.pdf"], bytes)


def test_stale_compares_bytes_for_the_pdf(generate: ModuleType, tmp_path: Path) -> None:
    pdf = tmp_path / "chart.pdf"
    pdf.write_bytes(b"%PDF old")
    assert generate.stale({pdf: b"%PDF new"}) == [pdf]
    pdf.write_bytes(b"%PDF new")
    assert generate.stale({pdf: b"%PDF new"}) == []


# ------------------------------------------------------------ one per reader


def test_every_wired_reader_kind_is_drawn(generate: ModuleType, wiring: ModuleType) -> None:
    assert set(wiring.KINDS) == set(READER_KINDS) - {"sim"} == set(KINDS)
    assert tuple(generate.WIRED_KINDS) == wiring.KINDS
    for kind in KINDS:
        assert (SCHEMATICS / f"wiring-{kind}.svg").is_file()


@pytest.mark.parametrize("kind", KINDS)
def test_each_reader_kind_has_its_picture_naming_every_pi_pin(
    generate: ModuleType, kind: str
) -> None:
    texts = _texts(SCHEMATICS / f"wiring-{kind}.svg")
    joined = "\n".join(texts)
    assert f'reader.kind = "{kind}"' in joined
    section = _md_section(kind)
    assert f"wiring-{kind}.svg" in section
    for role, bcm in generate.kind_pins(load_config(), kind).items():
        pin = generate.header_pin(bcm)
        # the header block lists the pin's number and its GPIO name
        assert str(pin) in texts, role
        assert any(t.startswith(f"GPIO{bcm}") for t in texts), role
        if kind == "keys-mcp23017" and role in ("I2C SDA", "I2C SCL", "MCP23017 INTA"):
            assert f"Pi pin {pin}" in section, role
        else:
            assert f"| {pin} (GPIO{bcm}) |" in section, role


@pytest.mark.parametrize("kind", KINDS)
def test_every_ground_return_goes_to_a_real_gnd_header_pin(
    generate: ModuleType, wiring: ModuleType, kind: str
) -> None:
    gnd = set(generate.GND_PINS)
    texts = "\n".join(_texts(SCHEMATICS / f"wiring-{kind}.svg"))
    used = {int(n) for n in re.findall(r"Pi GND pin (\d+)", texts)}
    section = _md_section(kind)
    used_md = {int(n) for n in re.findall(r"Pi GND pin (\d+)", section)}
    assert used and used <= gnd and used_md <= gnd
    plan = wiring.pi_ground_plan(load_config(), kind, generate.HEADER)
    assert set(plan.values()) == used == used_md
    # no two groups share a GND pin while the header has enough of them
    assert len(set(plan.values())) == len(plan) <= len(gnd)
    # every GPIO run has a return, named in the table
    runs = wiring.pi_runs(load_config(), kind, generate.HEADER)
    for run in runs:
        row = f"| {run.pin} ({run.signal}) | {run.via} | Pi GND pin {plan[run.ground]} |"
        assert row in section


def test_keys_gpio_returns_are_grouped_onto_the_nearest_gnd_pins(
    generate: ModuleType, wiring: ModuleType
) -> None:
    config = load_config()
    runs = wiring.pi_runs(config, "keys-gpio", generate.HEADER)
    assert len(runs) == len(config.gpio_pins()) == 19
    plan = wiring.pi_ground_plan(config, "keys-gpio", generate.HEADER)

    def row(pin: int) -> int:
        return (pin - 1) // 2

    # each group's pin is the free GND pin nearest its signals when its turn comes
    free = list(generate.GND_PINS)
    for group, chosen in plan.items():
        pins = [run.pin for run in runs if run.ground == group]
        cost = {g: sum(abs(row(p) - row(g)) for p in pins) for g in free}
        assert cost[chosen] == min(cost.values()), group
        free.remove(chosen)


def test_ground_plan_reuses_pins_only_when_all_are_taken(
    generate: ModuleType, wiring: ModuleType
) -> None:
    groups = {f"g{i}": [1] for i in range(10)}
    plan = wiring.ground_plan(groups, generate.HEADER)
    first_eight = [plan[f"g{i}"] for i in range(8)]
    assert sorted(first_eight) == sorted(generate.GND_PINS)
    assert plan["g0"] == 6  # the GND pin nearest pin 1
    assert {plan["g8"], plan["g9"]} <= set(generate.GND_PINS)


@pytest.mark.parametrize("kind", KINDS)
def test_each_led_has_its_resistor_in_the_picture(generate: ModuleType, kind: str) -> None:
    texts = _texts(SCHEMATICS / f"wiring-{kind}.svg")
    leds = [r for r in generate.kind_pins(load_config(), kind) if r.endswith(" LED")]
    assert len(leds) == 3
    assert texts.count("330 Ω") == len(leds)
    for role in leds:
        assert f"{role} cathode" in texts


@pytest.mark.parametrize("kind", ["rdm6300", "mcu"])
def test_rfid_pictures_divide_each_rdm6300_tx(kind: str) -> None:
    texts = _texts(SCHEMATICS / f"wiring-{kind}.svg")
    assert texts.count("1 kΩ") == 2 and texts.count("2 kΩ") == 2
    for name in ("TX", "RX", "GND", "+5V", "ANT1", "ANT2"):
        assert texts.count(name) >= 2, name
    assert "ATTACKER RDM6300" in texts and "DEFENDER RDM6300" in texts


def test_rdm6300_picture_names_both_ports() -> None:
    texts = "\n".join(_texts(SCHEMATICS / "wiring-rdm6300.svg"))
    reader = load_config().reader
    assert reader.attacker_port in texts and reader.defender_port in texts


def test_mcp23017_picture_has_every_chip_pin_the_reader_uses(wiring: ModuleType) -> None:
    texts = _texts(SCHEMATICS / "wiring-keys-mcp23017.svg")
    attacker, defender = wiring.mcp23017_bits()
    # the reader's bits: 0-7 are GPA0-7, 8-15 GPB0-7 (its docstring)
    names = [f"GPA{b}" if b < 8 else f"GPB{b - 8}" for b in (*attacker, *defender)]
    chip_pin = {**{f"GPB{i}": 1 + i for i in range(8)}, **{f"GPA{i}": 21 + i for i in range(8)}}
    for slot, bits in (("ATTACKER", attacker), ("DEFENDER", defender)):
        for i, _ in enumerate(bits, 1):
            assert f"{slot} switch {i}" in texts
    for name in [*names, "VDD", "VSS", "SDA", "SCL", "INTA", "RESET", "A0", "A1", "A2"]:
        assert name in texts, name
    for name in names:
        assert str(chip_pin[name]) in texts
    for number in ("9", "10", "12", "13", "18", "20"):
        assert number in texts
    assert "100 nF" in texts


def test_mcu_picture_uses_the_firmware_uart_pins(wiring: ModuleType) -> None:
    source = FIRMWARE.read_text(encoding="utf-8")
    found = re.findall(r'"([AD])": \((\d+), \d+, (\d+)\)', source)
    assert len(found) == 2
    assert [(u.slot[0], u.uart, u.rx_gp) for u in wiring.pico_uarts()] == [
        (letter, int(uart), int(rx)) for letter, uart, rx in found
    ]
    texts = "\n".join(_texts(SCHEMATICS / "wiring-mcu.svg"))
    pico_pin = {0: 1, 1: 2, 4: 6, 5: 7}  # the Pico's edge pins of GP0, GP1, GP4, GP5
    for _, uart, rx in found:
        assert f"GP{rx} (UART{uart} RX)" in texts
        assert f"Pico pin {pico_pin[int(rx)]} (GP{rx})" in texts
    assert "Pico VBUS pin 40" in texts and "Pico GND pin 38" in texts
    assert load_config().reader.mcu_port in texts
    assert "RC522" in texts


def test_pico_uarts_reads_the_constant_and_refuses_a_missing_slot(wiring: ModuleType) -> None:
    source = 'RDM6300_UART = {"A": (1, 8, 9), "D": (0, 12, 13)}\n'
    uarts = wiring.pico_uarts(source)
    assert [(u.slot, u.uart, u.rx_gp, u.rx_pin) for u in uarts] == [
        ("ATTACKER", 1, 9, 12), ("DEFENDER", 0, 13, 17),
    ]
    for bad in (
        'RDM6300_UART = {"A": (0, 0, 1)}\n',
        'RDM6300_UART = {"A": (0, 1), "D": (1, 4, 5)}\n',
        "X = 1\n",
    ):
        with pytest.raises(wiring.WiringError):
            wiring.pico_uarts(bad)


# ------------------------------------------------------------------ key chart


@pytest.mark.parametrize("side", list(Side))
def test_key_chart_svg_draws_each_pieces_code_to_scale(
    generate: ModuleType, keychart: ModuleType, side: Side
) -> None:
    root = ET.parse(HARDWARE / f"keychart-{side.letter}.svg").getroot()
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "210mm", "297mm", "0 0 210 297",
    )
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    rows = [(p, w) for p, w in DEFAULT_KEYCODE.table() if p.side is side]
    assert len(rows) == 15
    for piece, word in rows:
        assert f"{piece}  {piece.rank.full_name}" in texts
        count = piece.rank.count
        assert f"{word}  ({count} key{'s' if count > 1 else ''})" in texts
    # the dots, in drawing order, spell every key's codeword (black = tooth)
    dots = "".join("1" if c.get("fill") == "#000" else "0" for c in root.iter(f"{SVG}circle"))
    assert dots == "".join(word for _, word in rows)
    # each key outline is as long as the key (2 feet + 7 pitches), in mm
    g = generate.geometry()
    length = 2 * g["foot_w"] + DEFAULT_KEYCODE.switches * g["pitch"]
    for polygon in root.iter(f"{SVG}polygon"):
        xs = [float(pt.split(",")[0]) for pt in (polygon.get("points") or "").split()]
        assert max(xs) - min(xs) == pytest.approx(length)
    bars = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-width") == "0.5"]
    assert len(bars) == 1
    assert float(bars[0].get("x2") or 0) - float(bars[0].get("x1") or 0) == 50


def test_key_outline_has_a_tooth_under_each_pressed_switch(
    generate: ModuleType, keychart: ModuleType
) -> None:
    g = dict(generate.geometry(), tooth_dip=0.5)
    for word in DEFAULT_KEYCODE.codewords():
        outline = keychart.key_outline(g, word)
        tips = sorted({x for x, y in outline if y == -0.5})
        centres = [(a + b) / 2 for a, b in zip(tips[::2], tips[1::2], strict=True)]
        expected = [g["foot_w"] + (i + 0.5) * g["pitch"] for i, c in enumerate(word) if c == "1"]
        assert centres == pytest.approx(expected)


def test_key_chart_pdf_has_both_armies_on_a4_pages() -> None:
    data = (HARDWARE / "keychart.pdf").read_bytes()
    assert data.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type /Page\b", data)) == 2
    assert len(re.findall(rb"/MediaBox \[ 0 0 595\.2756 841\.8898 \]", data)) == 2
    for piece, word in DEFAULT_KEYCODE.table():
        count = piece.rank.count
        assert f"({word}  \\({count} key{'s' if count > 1 else ''}\\))".encode() in data
    assert b"CreationDate" not in data or b"D:20000101000000" in data


def test_key_chart_pdf_draws_the_keys_full_size(generate: ModuleType) -> None:
    data = (HARDWARE / "keychart.pdf").read_bytes()
    g = generate.geometry()
    length_pt = (2 * g["foot_w"] + DEFAULT_KEYCODE.switches * g["pitch"]) * 72 / 25.4
    outlines = re.findall(rb"^n ([-\d. ml]+) h$", data, re.M)
    assert len(outlines) == 30  # one closed outline per key, 15 per army
    for outline in outlines:
        numbers = [float(n) for n in re.findall(rb"-?\d+(?:\.\d+)?", outline)]
        xs = numbers[0::2]
        assert max(xs) - min(xs) == pytest.approx(length_pt, abs=0.01)
