"""The builder's documents in docs/build/ match the default config and the key code."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from arbiter.app.config import load_config
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import all_pieces

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
DOCS = HARDWARE.parent / "docs" / "build"
ROW = re.compile(r"^\| ([^|]+?) \| GPIO(\d+) \| (\d+) \|")


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hardware_generate", HARDWARE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sections(text: str) -> dict[str, list[tuple[str, int, int]]]:
    """pinout.md's GPIO rows (role, BCM, header pin) under each ``## `kind` `` heading."""
    sections: dict[str, list[tuple[str, int, int]]] = {}
    current: list[tuple[str, int, int]] | None = None
    for line in text.splitlines():
        heading = re.match(r"^## `([a-z0-9-]+)`:", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
            continue
        if line.startswith("## "):
            current = None
        row = ROW.match(line)
        if row and current is not None:
            current.append((row.group(1), int(row.group(2)), int(row.group(3))))
    return sections


def test_generate_check_passes_on_the_committed_files() -> None:
    result = subprocess.run(
        [sys.executable, str(HARDWARE / "generate.py"), "--check"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_generate_check_reports_a_stale_file(generate: ModuleType, tmp_path: Path) -> None:
    files = {tmp_path / "pinout.md": "fresh\n", tmp_path / "missing.md": "x\n"}
    (tmp_path / "pinout.md").write_text("old\n")
    assert generate.stale(files) == [tmp_path / "pinout.md", tmp_path / "missing.md"]
    (tmp_path / "pinout.md").write_text("fresh\n")
    (tmp_path / "missing.md").write_text("x\n")
    assert generate.stale(files) == []


def test_generate_header_map_is_the_40_pin_header(generate: ModuleType) -> None:
    assert sorted(generate.HEADER) == list(range(1, 41))
    assert sorted(generate.BCM_TO_PIN) == list(range(28))
    assert generate.header_pin(2) == 3 and generate.header_pin(18) == 12
    assert generate.header_pin(21) == 40 and generate.GND_PINS == (6, 9, 14, 20, 25, 30, 34, 39)


def test_pinout_default_kind_lists_exactly_the_configured_pins(generate: ModuleType) -> None:
    config = load_config()
    rows = _sections((DOCS / "pinout.md").read_text(encoding="utf-8"))[config.reader.kind]
    assert {role: bcm for role, bcm, _ in rows} == config.gpio_pins()
    assert len(rows) == len(config.gpio_pins())
    for _, bcm, pin in rows:
        assert pin == generate.header_pin(bcm)


@pytest.mark.parametrize("kind", ["keys-gpio", "keys-mcp23017", "rdm6300", "mcu"])
def test_pinout_each_kind_lists_its_pins(generate: ModuleType, kind: str) -> None:
    config = generate.config_for(load_config(), kind)
    rows = _sections((DOCS / "pinout.md").read_text(encoding="utf-8"))[kind]
    expected = dict(config.gpio_pins())
    if kind == "keys-mcp23017":
        expected |= {"I2C SDA": 2, "I2C SCL": 3}
    assert {role: bcm for role, bcm, _ in rows} == expected
    assert all(pin == generate.header_pin(bcm) for _, bcm, pin in rows)


def test_pinout_names_the_serial_ports() -> None:
    text = (DOCS / "pinout.md").read_text(encoding="utf-8")
    reader = load_config().reader
    for port in (reader.attacker_port, reader.defender_port, reader.mcu_port):
        assert f"`{port}`" in text


def test_keycodes_chart_lists_all_30_pieces_with_their_codewords() -> None:
    text = (DOCS / "keycodes.md").read_text(encoding="utf-8")
    found = dict(re.findall(r"^\| `([WB]:[^`]+)` \| [^|]+ \| `([01]+)` \|", text, re.M))
    expected = {str(piece): word for piece, word in DEFAULT_KEYCODE.table()}
    assert len(expected) == len(all_pieces()) == 30
    assert found == expected
    for word in DEFAULT_KEYCODE.unused():
        assert f"`{word}`" in text


def test_keys_all_scad_holds_every_code_and_every_physical_piece() -> None:
    text = (HARDWARE / "keys_all.scad").read_text(encoding="utf-8")
    entries = re.findall(r'\["([WB]:[^"]+)", "([01]+)"\]', text)
    assert {word for _, word in entries} == {w for _, w in DEFAULT_KEYCODE.table()}
    for piece, word in DEFAULT_KEYCODE.table():
        assert entries.count((str(piece), word)) == piece.rank.count
    assert len(entries) == 42


def test_scad_params_match_the_key_code() -> None:
    text = (HARDWARE / "gg_params.scad").read_text(encoding="utf-8")
    assert f"n_switches = {DEFAULT_KEYCODE.switches};" in text
    assert f"n_pressed = {DEFAULT_KEYCODE.weight};" in text
    for name in ("key_base.scad", "slot_block.scad"):
        source = (HARDWARE / name).read_text(encoding="utf-8")
        assert source.count("{") == source.count("}")
        assert source.count("(") == source.count(")")
        assert source.count("[") == source.count("]")
    assert "module key_base(code = " in (HARDWARE / "key_base.scad").read_text()
