"""The MicroPython slot firmware, imported under CPython with stub ``machine`` and
``micropython`` modules (tests/firmware/test_micropython.py runs it under MicroPython)."""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.drivers.readers.mcu import (
    RX_GAINS_DB,
    ErrorMessage,
    GainMessage,
    HelloMessage,
    SlotMessage,
    crc8,
    decode_line,
)
from arbiter.drivers.readers.rdm6300 import FrameParser, encode_frame
from arbiter.rules.verdict import Role

MAIN = Path(__file__).resolve().parents[2] / "firmware" / "pico" / "main.py"
PUBLISHED = [
    ("62E3086CED", "08"),
    ("100086F444", "26"),
    ("01000734E0", "D2"),
    ("1F00644BB6", "86"),
]


class FakeUart:
    """machine.UART as the firmware uses it: any() and read(n)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.pending = bytearray()

    def any(self) -> int:
        return len(self.pending)

    def read(self, count: int) -> bytes:
        data = bytes(self.pending[:count])
        del self.pending[:count]
        return data


class FakePin:
    OUT = 1

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def value(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def firmware() -> Iterator[types.ModuleType]:
    machine = types.ModuleType("machine")
    machine.UART = FakeUart  # type: ignore[attr-defined]
    machine.Pin = FakePin  # type: ignore[attr-defined]
    machine.SPI = FakeUart  # type: ignore[attr-defined]  # the tests build their slots
    micropython = types.ModuleType("micropython")
    micropython.const = lambda expr: expr  # type: ignore[attr-defined]
    saved = sys.modules.get("machine")
    sys.modules["machine"] = machine
    sys.modules["micropython"] = micropython
    sys.path.insert(0, str(MAIN.parent))  # main.py imports mfrc522 from beside it
    try:
        spec = importlib.util.spec_from_file_location("gg_slots_firmware", MAIN)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(MAIN.parent))
        sys.modules.pop("mfrc522", None)
        sys.modules.pop("micropython", None)
        if saved is None:
            sys.modules.pop("machine", None)
        else:
            sys.modules["machine"] = saved


@pytest.mark.parametrize(("tag", "check"), PUBLISHED)
def test_firmware_parser_reads_published_frames(
    firmware: types.ModuleType, tag: str, check: str
) -> None:
    frame = b"\x02" + f"{tag}{check}".encode() + b"\x03"
    assert firmware.FrameParser().feed(frame) == [tag]


@pytest.mark.parametrize(("tag", "check"), PUBLISHED)
def test_firmware_parser_reads_lowercase_frames(
    firmware: types.ModuleType, tag: str, check: str
) -> None:
    frame = b"\x02" + f"{tag}{check}".lower().encode() + b"\x03"
    assert firmware.FrameParser().feed(frame) == [tag]


def test_firmware_parser_drops_bad_checksum(firmware: types.ModuleType) -> None:
    parser = firmware.FrameParser()
    assert parser.feed(b"\x0262E3086CED09\x03") == []
    assert parser.bad_checksums == 1


def test_firmware_parser_resyncs_after_garbage(firmware: types.ModuleType) -> None:
    parser = firmware.FrameParser()
    data = b"\x02\x0262E3\xff\x03junk" + encode_frame("01000734E0")
    found = parser.feed(data[:7]) + parser.feed(data[7:])
    assert found == ["01000734E0"]


@settings(max_examples=300)
@given(st.binary(max_size=300), st.sampled_from([tag for tag, _ in PUBLISHED]))
def test_firmware_parser_agrees_with_arbiter_parser(
    firmware: types.ModuleType, garbage: bytes, tag: str
) -> None:
    data = garbage + encode_frame(tag) + garbage
    assert firmware.FrameParser().feed(data) == FrameParser().feed(data)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_firmware_parser_random_bytes_agree_with_arbiter_parser(
    firmware: types.ModuleType, data: bytes
) -> None:
    assert firmware.FrameParser().feed(data) == FrameParser().feed(data)


def test_firmware_crc8_matches_arbiter(firmware: types.ModuleType) -> None:
    assert firmware.crc8(b"123456789") == 0xF4
    for body in (b"A EMPTY", b"D TAG 62E3086CED", b"HELLO gg-slots 1"):
        assert firmware.crc8(body) == crc8(body)


def test_firmware_state_lines_decode_on_the_pi(firmware: types.ModuleType) -> None:
    a = firmware.UartSlot("A", FakeUart())
    d = firmware.UartSlot("D", FakeUart())
    d.tag = "100086F444"
    lines = firmware.state_lines([a, d])
    assert [line[-1] for line in lines] == ["\n"] * 3
    messages = [decode_line(line.rstrip("\n").encode()) for line in lines]
    assert messages == [
        HelloMessage("gg-slots", 1),
        SlotMessage(Role.ATTACKER, None),
        SlotMessage(Role.DEFENDER, "100086F444"),
    ]


def test_firmware_err_line_decodes(firmware: types.ModuleType) -> None:
    line = firmware.encode("ERR " + firmware.printable(repr(OSError("bad\x07*thing"))))
    message = decode_line(line.rstrip("\n").encode())
    assert isinstance(message, ErrorMessage)
    assert message.text.startswith("OSError")


def test_firmware_slot_reports_tag_once_then_empty_after_timeout(
    firmware: types.ModuleType,
) -> None:
    uart = FakeUart()
    slot = firmware.UartSlot("A", uart)
    assert slot.update(0) is False
    uart.pending += encode_frame("62E3086CED")
    assert slot.update(10) is True
    assert slot.body() == "A TAG 62E3086CED"
    last = 10
    for now in range(60, 1000, 50):  # repeats every 50 ms: no change
        uart.pending += encode_frame("62E3086CED")
        assert slot.update(now) is False
        last = now
    assert slot.update(last + firmware.REMOVAL_MS - 1) is False
    assert slot.update(last + firmware.REMOVAL_MS) is True
    assert slot.body() == "A EMPTY"
    assert slot.update(last + 5000) is False


def test_firmware_slot_reports_a_replacing_tag(firmware: types.ModuleType) -> None:
    uart = FakeUart()
    slot = firmware.UartSlot("D", uart)
    uart.pending += encode_frame("62E3086CED")
    assert slot.update(0) is True
    uart.pending += encode_frame("100086F444")
    assert slot.update(50) is True
    assert slot.body() == "D TAG 100086F444"


def test_firmware_slot_ignores_bad_frames(firmware: types.ModuleType) -> None:
    uart = FakeUart()
    slot = firmware.UartSlot("A", uart)
    uart.pending += b"\x0262E3086CED09\x03" + b"\xff" * 20
    assert slot.update(0) is False
    assert slot.tag is None


class Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)


def test_firmware_answers_each_state_request(firmware: types.ModuleType) -> None:
    for incoming, answers in (("?", 1), ("?\n?", 2), ("\r\nx", 0)):
        out = Out()
        firmware.Firmware([firmware.UartSlot("A", FakeUart())], out).step(0, incoming)
        bodies = [line.split("*")[0] for line in out.lines]
        assert bodies == ["HELLO gg-slots 1", "A EMPTY"] * answers


def test_firmware_gain_line_split_across_reads_is_one_command(
        firmware: types.ModuleType) -> None:
    codes: list[int] = []

    class Board:
        def set_rx_gain(self, code: int) -> None:
            codes.append(code)

        def read_uid(self) -> None:
            return None

    slot = firmware.Rc522Slot("A", Board())
    out = Out()
    fw = firmware.Firmware([slot], out)
    for chunk in ("GAI", "N 3", "8\n", "GAIN 34\n", "x" * 40 + "\n"):
        fw.step(0, chunk)
    # RFCfgReg RxGain: 38 dB is code 101 (MFRC522 datasheet, table "RFCfgReg")
    assert codes == [0b101]
    assert [decode_line(line.rstrip("\n").encode()) for line in out.lines] == [
        GainMessage(38), ErrorMessage("GAIN 34: not one of 18 23 33 38 43 48")]


def test_firmware_and_pi_know_the_same_rc522_gains(firmware: types.ModuleType) -> None:
    # MFRC522 datasheet, RFCfgReg RxGain: 000 18 dB, 001 23, 100 33, 101 38, 110 43, 111 48
    # (010 and 011 repeat 18 and 23 dB); the Pi's list must be exactly these.
    codes = sys.modules["mfrc522"].RX_GAIN_CODE
    assert codes == {18: 0b000, 23: 0b001, 33: 0b100, 38: 0b101, 43: 0b110, 48: 0b111}
    assert tuple(sorted(codes)) == RX_GAINS_DB
    assert firmware.RX_GAIN_DB == 33  # the chip's reset value until the Pi sets one


def test_firmware_main_does_not_run_on_import(firmware: types.ModuleType) -> None:
    assert callable(firmware.main)
    assert firmware.__name__ != "__main__"


# -- the wiring tables in firmware/pico/README.md match main.py's pins --------

README = MAIN.parent / "README.md"
#: Raspberry Pi Pico: GP number -> physical pin (Pico datasheet pinout).
PICO_PIN = {0: 1, 1: 2, 4: 6, 5: 7, 10: 14, 11: 15, 12: 16, 13: 17, 14: 19, 15: 20,
            16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27}


def _table(first_header: str) -> dict[str, list[str]]:
    """Rows of the Markdown table whose first header cell is `first_header`."""
    lines = README.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _gp(cell: str) -> int:
    """The GP number of a cell like 'GP17 (pin 22)', its physical pin checked too."""
    found = re.search(r"GP(\d+) \(pin (\d+)", cell)
    assert found is not None, cell
    gp, pin = int(found.group(1)), int(found.group(2))
    assert PICO_PIN[gp] == pin, f"GP{gp} is pin {PICO_PIN[gp]}, the table says {pin}"
    return gp


def test_readme_rc522_table_matches_the_pins(firmware: types.ModuleType) -> None:
    rows = _table("RC522 pin")
    buses = [firmware.RC522_BUS["A"], firmware.RC522_BUS["D"]]
    for name, index in [("SCK", 1), ("MOSI", 2), ("MISO", 3), ("SDA (SS)", 4), ("RST", 5)]:
        assert [_gp(cell) for cell in rows[name]] == [bus[index] for bus in buses], name
    assert all("3V3" in cell and "pin 36" in cell for cell in rows["3.3V"])
    assert "3.3 V only" in README.read_text()


def test_readme_rdm6300_table_matches_the_pins(firmware: types.ModuleType) -> None:
    rows = _table("RDM6300 pin")
    for cell, letter in zip(rows["TX"], "AD", strict=True):
        uart, _, rx = firmware.RDM6300_UART[letter]
        assert _gp(cell) == rx
        assert f"UART{uart} RX" in cell


def test_each_rc522_has_its_own_spi_bus_and_pins(firmware: types.ModuleType) -> None:
    # RP2040 datasheet, GPIO functions: SPI0 SCK GP2/6/18/22, TX (MOSI) GP3/7/19/23,
    # RX (MISO) GP0/4/16/20; SPI1 SCK GP10/14, TX GP11/15, RX GP8/12.
    sck = {0: (2, 6, 18, 22), 1: (10, 14)}
    mosi = {0: (3, 7, 19, 23), 1: (11, 15)}
    miso = {0: (0, 4, 16, 20), 1: (8, 12)}
    buses = firmware.RC522_BUS
    assert sorted(bus[0] for bus in buses.values()) == [0, 1]  # no shared wire: no splice
    used = []
    for spi, clock, out, in_, cs, rst in buses.values():
        assert clock in sck[spi] and out in mosi[spi] and in_ in miso[spi]
        used += [clock, out, in_, cs, rst]
    assert len(set(used)) == len(used)


def test_firmware_reader_default_is_the_flagships_rc522(firmware: types.ModuleType) -> None:
    # The flagship (two RC522 boards) copies main.py as it is; RDM6300s change one line.
    assert firmware.READER == "rc522"
    assert 'READER = "rc522"  # or "rdm6300"' in MAIN.read_text()
