"""The gg-slots line protocol and McuReader, against a fake microcontroller on a pty."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import McuLineError, ReaderError
from arbiter.drivers.readers.mcu import (
    TAG_LENGTHS,
    ErrorMessage,
    GainMessage,
    HelloMessage,
    McuReader,
    SlotMessage,
    crc8,
    decode_line,
    encode_line,
)
from arbiter.rules.verdict import Role
from tests.support.readings import ReadingRecorder
from tests.support.waiting import WAIT, wait_until

TAG = "62E3086CED"
OTHER = "100086F444"
PROTOCOL_MD = Path(__file__).resolve().parents[2] / "firmware" / "PROTOCOL.md"

A, D = Role.ATTACKER, Role.DEFENDER


# -- the line format -----------------------------------------------------------


def test_crc8_check_value() -> None:
    assert crc8(b"123456789") == 0xF4


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("A TAG 62E3086CED", SlotMessage(A, TAG)),
        ("D TAG 100086F444", SlotMessage(D, OTHER)),
        ("A EMPTY", SlotMessage(A, None)),
        ("D EMPTY", SlotMessage(D, None)),
        ("HELLO gg-slots 1", HelloMessage("gg-slots", 1)),
        ("ERR uart overrun", ErrorMessage("uart overrun")),
        ("GAIN 38", GainMessage(38)),
    ],
)
def test_decode_line_reads_each_form(body: str, message: object) -> None:
    assert decode_line(encode_line(body).rstrip(b"\n")) == message
    assert decode_line(encode_line(body).rstrip(b"\n") + b"\r") == message


@pytest.mark.parametrize(
    "line",
    [
        b"A TAG 62E3086CED",  # no checksum
        b"A TAG 62E3086CED*00",  # wrong checksum
        b"A TAG 62E3086CED*9",  # short checksum
        b"A TAG 62E3086CED*ZZ",
        b"A TAG 62E3086CED*99 ",
        b"A EMPTY*+5",
        b"A EMPTY*15*",
        b"",
        b"*00",
    ],
)
def test_decode_line_rejects_bad_checksum(line: bytes) -> None:
    with pytest.raises(McuLineError):
        decode_line(line)


@pytest.mark.parametrize(
    "body",
    [
        "A TAG 62e3086ced",  # tags are sent upper case
        "A TAG 62E3086CE",  # odd length
        "A TAG 62E3086CEDFF",
        "A TAG 62E3086CEG",
        "X TAG 62E3086CED",
        "A FULL",
        "A EMPTY now",
        "A  EMPTY",
        "HELLO gg-slots",
        "HELLO gg-slots one",
        "ERR",
        "ERR bell\x07",
        "?",
    ],
)
def test_decode_line_rejects_unknown_body_even_with_good_checksum(body: str) -> None:
    with pytest.raises(McuLineError):
        decode_line(encode_line(body).rstrip(b"\n"))


@pytest.mark.parametrize(
    "tag",
    [
        "04A1B2C3",  # 4-byte UID (MIFARE Classic 1K)
        "62E3086CED",  # RDM6300: version byte + 4 id bytes
        "04A1B2C3D48E80",  # 7-byte UID (NTAG213/215/216 stickers)
        "04A1B2C3D48E80112233",  # 10-byte UID
    ],
)
def test_decode_line_accepts_every_tag_length(tag: str) -> None:
    assert len(tag) in TAG_LENGTHS
    assert decode_line(encode_line(f"D TAG {tag}").rstrip(b"\n")) == SlotMessage(D, tag)


@pytest.mark.parametrize("digits", [n for n in range(2, 24, 2) if n not in TAG_LENGTHS])
def test_decode_line_rejects_other_tag_lengths(digits: int) -> None:
    with pytest.raises(McuLineError):
        decode_line(encode_line("A TAG " + "04" * (digits // 2)).rstrip(b"\n"))


def test_decode_line_detects_any_single_changed_character() -> None:
    line = encode_line("A TAG 62E3086CED").rstrip(b"\n")
    for i in range(len(line) - 3):
        for replacement in b"0123456789ABCDEF":
            if replacement != line[i]:
                changed = line[:i] + bytes([replacement]) + line[i + 1 :]
                with pytest.raises(McuLineError):
                    decode_line(changed)


@settings(max_examples=300)
@given(st.binary(max_size=100))
def test_decode_line_random_bytes_raise_only_line_error(data: bytes) -> None:
    try:
        message = decode_line(data)
    except McuLineError:
        return
    # Only a line that carries its own valid checksum may decode.
    body, _, check = data.rstrip(b"\r").rpartition(b"*")
    assert check == f"{crc8(body):02X}".encode()
    assert isinstance(message, SlotMessage | HelloMessage | ErrorMessage)


def test_protocol_md_examples_decode() -> None:
    text = PROTOCOL_MD.read_text(encoding="utf-8")
    examples = re.findall(r"^([A-Z][^\n`|]*\*[0-9A-F]{2})$", text, flags=re.MULTILINE)
    assert len(examples) >= 4
    for line in examples:
        decode_line(line.encode())


# -- the reader ----------------------------------------------------------------


class Recorder(ReadingRecorder):
    """A report callback that keeps every reading."""

    def of(self, slot: Role) -> list[tuple[SlotState, str | None]]:
        return [(r.state, r.token) for r in self.snapshot() if r.slot is slot]

    def wait_for(
        self,
        slot: Role,
        state: SlotState,
        token: str | None = None,
        *,
        after: int = 0,
        timeout: float = WAIT,
    ) -> int:
        return self.first_index(
            lambda r: r.slot is slot and r.state is state and (token is None or r.token == token),
            after=after, timeout=timeout, what=f"{slot} {state} {token or ''}",
        )


@pytest.fixture
def mcus() -> Iterator[list[FakePico]]:
    boards: list[FakePico] = [FakePico()]
    yield boards
    for board in boards:
        board.unplug()


MakeReader = Callable[..., tuple[McuReader, Recorder]]


@pytest.fixture
def make_reader(mcus: list[FakePico]) -> Iterator[MakeReader]:
    readers: list[McuReader] = []

    def make(**kwargs: object) -> tuple[McuReader, Recorder]:
        options: dict[str, object] = {"answer_timeout": WAIT, "reconnect_interval": 0.1}
        options.update(kwargs)
        reader = McuReader(
            serial_factory=lambda: serial.Serial(mcus[-1].path, 115200, timeout=0.05),
            **options,  # type: ignore[arg-type]
        )
        readers.append(reader)
        recorder = Recorder()
        reader.start(recorder)
        return reader, recorder

    yield make
    for reader in readers:
        reader.close()


def test_mcu_reader_start_reports_both_slots_empty(make_reader: MakeReader) -> None:
    reader, rec = make_reader()
    assert reader.slots == (A, D)
    assert rec.readings[:2] == [SlotReading(A, SlotState.EMPTY), SlotReading(D, SlotState.EMPTY)]


def test_mcu_reader_asks_for_state_and_reports_it(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    mcus[0].state["D"] = OTHER
    _, rec = make_reader()
    rec.wait_for(D, SlotState.PRESENT, OTHER)
    assert mcus[0].requests >= 1
    assert rec.of(A) == [(SlotState.EMPTY, None)]


def test_mcu_reader_reports_an_ntag_uid(mcus: list[FakePico], make_reader: MakeReader) -> None:
    mcus[0].state["A"] = "04A1B2C3D48E80"
    _, rec = make_reader()
    rec.wait_for(A, SlotState.PRESENT, "04A1B2C3D48E80")


def test_mcu_reader_reports_changes_per_slot(mcus: list[FakePico], make_reader: MakeReader) -> None:
    _, rec = make_reader()
    rec.wait_for(A, SlotState.EMPTY)
    mcus[0].set("A", TAG)
    rec.wait_for(A, SlotState.PRESENT, TAG)
    mcus[0].set("D", OTHER)
    rec.wait_for(D, SlotState.PRESENT, OTHER)
    i = len(rec.readings)
    mcus[0].set("A", None)
    rec.wait_for(A, SlotState.EMPTY, after=i)
    assert rec.of(A) == [(SlotState.EMPTY, None), (SlotState.PRESENT, TAG), (SlotState.EMPTY, None)]
    assert rec.of(D) == [(SlotState.EMPTY, None), (SlotState.PRESENT, OTHER)]


def test_mcu_reader_repeated_lines_do_not_report_again(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    _, rec = make_reader()
    for _ in range(3):
        mcus[0].set("A", TAG)
        mcus[0].send_state()
    mcus[0].set("D", OTHER)  # a marker: everything before it has been handled
    rec.wait_for(D, SlotState.PRESENT, OTHER)
    assert rec.of(A) == [(SlotState.EMPTY, None), (SlotState.PRESENT, TAG)]


def test_mcu_reader_replaced_tag_reports_empty_then_present(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    _, rec = make_reader()
    mcus[0].set("A", TAG)
    rec.wait_for(A, SlotState.PRESENT, TAG)
    mcus[0].set("A", OTHER)
    rec.wait_for(A, SlotState.PRESENT, OTHER)
    assert rec.of(A) == [
        (SlotState.EMPTY, None),
        (SlotState.PRESENT, TAG),
        (SlotState.EMPTY, None),
        (SlotState.PRESENT, OTHER),
    ]


def test_mcu_reader_counts_and_ignores_garbled_lines(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, rec = make_reader()
    board = mcus[0]
    board.raw(b"A TAG 62E3086CED\n")  # no checksum
    board.raw(b"A TAG 62E3086CEC*99\n")  # checksum of another tag
    board.raw(b"MicroPython v1.23.0 on 2024-06-02; Raspberry Pi Pico with RP2040\r\n>>> \n")
    board.raw(b"x" * 500 + b"\n")  # overlong
    board.raw(bytes(range(256)) + b"\n")
    board.set("D", OTHER)
    rec.wait_for(D, SlotState.PRESENT, OTHER)
    assert rec.of(A) == [(SlotState.EMPTY, None)]
    assert reader.garbled_lines >= 6
    assert reader.running


def test_mcu_reader_thread_survives_random_bytes(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, rec = make_reader()
    rng = random.Random(1980)
    for _ in range(50):
        mcus[0].raw(rng.randbytes(rng.randrange(1, 300)).replace(b"*", b"+"))
    mcus[0].raw(b"\n")
    mcus[0].set("A", TAG)
    rec.wait_for(A, SlotState.PRESENT, TAG)
    assert reader.running
    assert reader.garbled_lines > 0
    assert {r.token for r in rec.readings} == {None, TAG}


def test_mcu_reader_err_line_is_counted_not_a_reading(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, rec = make_reader()
    mcus[0].line("ERR uart 1 overrun")
    mcus[0].set("D", OTHER)
    rec.wait_for(D, SlotState.PRESENT, OTHER)
    assert reader.error_lines == 1
    assert reader.last_error == "uart 1 overrun"
    assert all(r.state is not SlotState.FAULT for r in rec.readings)


def test_mcu_reader_silent_board_is_fault_until_it_answers(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    mcus[0].answering = False
    mcus[0].state["A"] = TAG
    _, rec = make_reader(answer_timeout=0.3, reconnect_interval=0.1)
    i = rec.wait_for(A, SlotState.FAULT)
    rec.wait_for(D, SlotState.FAULT)
    assert "not answering" in rec.readings[i].detail
    asked = mcus[0].requests
    mcus[0].answering = True
    rec.wait_for(A, SlotState.PRESENT, TAG, after=i)
    rec.wait_for(D, SlotState.EMPTY, after=i)
    assert mcus[0].requests > asked


def test_mcu_reader_sets_the_configured_gain_and_the_board_confirms(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, _ = make_reader(rx_gain_db=43)
    wait_until(lambda: reader.rx_gain_confirmed == 43)
    assert mcus[0].gain_db == 43
    reader.set_rx_gain(18)  # a new gain goes out at once, not at the next poll
    wait_until(lambda: reader.rx_gain_confirmed == 18)
    assert mcus[0].gain_db == 18


def test_mcu_reader_resends_the_gain_to_a_restarted_board(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    make_reader(rx_gain_db=23, poll_interval=0.1)
    wait_until(lambda: mcus[0].gain_db == 23)
    mcus[0].gain_db = 33  # the Pico reset: back to RX_GAIN_DB
    wait_until(lambda: mcus[0].gain_db == 23)


def test_mcu_reader_without_a_gain_sends_none(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, _ = make_reader(poll_interval=0.1)
    wait_until(lambda: mcus[0].requests >= 2)
    assert reader.rx_gain_confirmed is None and mcus[0].gain_db == 33


@pytest.mark.parametrize("db", [0, 17, 30, 34, 49])
def test_mcu_reader_refuses_a_gain_the_rc522_has_not(db: int) -> None:
    with pytest.raises(ReaderError, match="18, 23, 33, 38, 43, 48"):
        McuReader("/dev/null", rx_gain_db=db)


def test_mcu_reader_polls_the_board(mcus: list[FakePico], make_reader: MakeReader) -> None:
    make_reader(poll_interval=0.1)
    wait_until(lambda: mcus[0].requests >= 4)


def test_mcu_reader_wrong_protocol_version_is_fault(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    _, rec = make_reader()
    rec.wait_for(A, SlotState.EMPTY)
    mcus[0].line("HELLO gg-slots 2")
    i = rec.wait_for(A, SlotState.FAULT)
    assert "gg-slots 2" in rec.readings[i].detail
    mcus[0].line("A TAG 62E3086CED")
    mcus[0].send_state()  # a matching HELLO again: back to normal
    rec.wait_for(A, SlotState.EMPTY, after=i)
    mcus[0].set("A", TAG)
    rec.wait_for(A, SlotState.PRESENT, TAG, after=i)


def test_mcu_reader_unplug_reports_fault_and_replug_recovers(
    mcus: list[FakePico], make_reader: MakeReader
) -> None:
    reader, rec = make_reader()
    mcus[0].set("A", TAG)
    rec.wait_for(A, SlotState.PRESENT, TAG)
    mcus[0].unplug()
    i = rec.wait_for(A, SlotState.FAULT)
    rec.wait_for(D, SlotState.FAULT)
    assert "slot microcontroller" in rec.readings[i].detail
    assert reader.running

    replug = FakePico()
    replug.state["D"] = OTHER
    mcus.append(replug)
    rec.wait_for(A, SlotState.EMPTY, after=i)
    rec.wait_for(D, SlotState.PRESENT, OTHER, after=i)


def test_mcu_reader_close_is_idempotent(make_reader: MakeReader) -> None:
    reader, _ = make_reader()
    reader.close()
    assert not reader.running
    reader.close()


def test_mcu_reader_needs_port_or_factory() -> None:
    with pytest.raises(ReaderError):
        McuReader()


def _write_fails() -> serial.SerialBase:
    """A loop:// port that opens but cannot be written to (a half-dead USB device)."""
    port = serial.serial_for_url("loop://", timeout=0.05)

    def write(data: bytes) -> int:
        raise serial.SerialException("write failed: [Errno 5] Input/output error")

    port.write = write
    return port


def test_mcu_reader_failing_write_at_start_is_fault_not_exception() -> None:
    opened = 0

    def factory() -> serial.SerialBase:
        nonlocal opened
        opened += 1
        return _write_fails()

    reader = McuReader(serial_factory=factory, reconnect_interval=0.05)
    rec = Recorder()
    try:
        reader.start(rec)
        assert [r.state for r in rec.readings[-2:]] == [SlotState.FAULT, SlotState.FAULT]
        assert "Errno 5" in rec.readings[-1].detail
        wait_until(lambda: opened >= 3)  # reopened, failed again: the thread lives on
        assert reader.running
    finally:
        reader.close()
