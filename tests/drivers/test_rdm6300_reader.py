"""Rdm6300Reader on real pyserial ports: loop:// and pty pairs."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import ReaderError
from arbiter.drivers.readers.rdm6300 import Rdm6300Reader, encode_frame
from arbiter.rules.verdict import Role
from tests.support.clock import FakeClock
from tests.support.readings import ReadingRecorder
from tests.support.waiting import WAIT, wait_until

TAG = "62E3086CED"
OTHER = "100086F444"


class Recorder(ReadingRecorder):
    """A report callback that keeps every reading (with its arrival time on ``clock``)."""

    def states(self) -> list[tuple[SlotState, str | None]]:
        return [(r.state, r.token) for r in self.snapshot()]

    def wait_for(
        self, state: SlotState, token: str | None = None, *, after: int = 0, timeout: float = WAIT
    ) -> int:
        """Index of the first reading at or after ``after`` with this state (and token)."""
        return self.first_index(
            lambda r: r.state is state and (token is None or r.token == token),
            after=after, timeout=timeout, what=f"{state} {token or ''}",
        )


class Pty:
    """A pty pair standing in for a USB serial reader, under a stable name ``link``
    (as udev names a real adapter in /dev/serial/by-id): ``unplug`` closes the
    pair and removes the name, a new Pty on the same ``link`` is the replug.

    The reader never opens the freed /dev/pts/N itself, which another process
    may have taken by then.
    """

    def __init__(self, link: Path) -> None:
        self.master, self.slave = os.openpty()
        self.link = link
        link.unlink(missing_ok=True)
        link.symlink_to(os.ttyname(self.slave))
        self.open = True

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def unplug(self) -> None:
        if self.open:
            self.open = False
            self.link.unlink(missing_ok=True)
            os.close(self.master)
            os.close(self.slave)


@pytest.fixture
def loop() -> Iterator[serial.SerialBase]:
    port = serial.serial_for_url("loop://", timeout=0.05)
    yield port
    port.close()


@pytest.fixture
def make_reader() -> Iterator[Callable[..., Rdm6300Reader]]:
    readers: list[Rdm6300Reader] = []

    def make(**kwargs: object) -> Rdm6300Reader:
        reader = Rdm6300Reader(Role.ATTACKER, **kwargs)  # type: ignore[arg-type]
        readers.append(reader)
        return reader

    yield make
    for reader in readers:
        reader.close()


def started(
    make_reader: Callable[..., Rdm6300Reader],
    port: serial.SerialBase,
    clock: Callable[[], float] = time.monotonic,
    **kwargs: object,
) -> tuple[Rdm6300Reader, Recorder]:
    reader = make_reader(serial_factory=lambda: port, clock=clock, **kwargs)
    recorder = Recorder(clock)
    reader.start(recorder)
    return reader, recorder


def test_rdm6300_reader_start_reports_empty(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    reader, rec = started(make_reader, loop)
    assert rec.readings[0] == SlotReading(Role.ATTACKER, SlotState.EMPTY)
    assert reader.slots == (Role.ATTACKER,)


def test_rdm6300_reader_reports_present_on_one_frame(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    _, rec = started(make_reader, loop)
    loop.write(encode_frame(TAG))
    i = rec.wait_for(SlotState.PRESENT)
    assert rec.readings[i] == SlotReading(Role.ATTACKER, SlotState.PRESENT, TAG)


def test_rdm6300_reader_reports_lowercase_frame_upper_case(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    _, rec = started(make_reader, loop)
    loop.write(encode_frame(TAG).lower())
    rec.wait_for(SlotState.PRESENT, TAG)


def test_rdm6300_reader_repeats_do_not_report_again(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    clock = FakeClock()
    reader, rec = started(make_reader, loop, clock, removal_timeout=1.0)
    loop.write(encode_frame(TAG) * 5)
    rec.wait_for(SlotState.PRESENT, TAG)
    loop.write(encode_frame(TAG) * 5)
    wait_until(lambda: reader.frames == 10)
    clock.advance(1.0)
    rec.wait_for(SlotState.EMPTY, after=2)
    assert rec.states() == [
        (SlotState.EMPTY, None),
        (SlotState.PRESENT, TAG),
        (SlotState.EMPTY, None),
    ]


def test_rdm6300_reader_stays_present_while_frames_repeat(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    clock = FakeClock()
    reader, rec = started(make_reader, loop, clock, removal_timeout=0.2)
    for n in range(1, 17):  # 0.8 s of a tag in the field, a frame every 50 ms
        loop.write(encode_frame(TAG))
        wait_until(lambda: reader.frames == n)  # noqa: B023 (called at once)
        clock.advance(0.05)
    assert rec.states() == [(SlotState.EMPTY, None), (SlotState.PRESENT, TAG)]


def test_rdm6300_reader_removal_timeout_reports_empty(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    timeout = 0.25
    clock = FakeClock()
    _, rec = started(make_reader, loop, clock, removal_timeout=timeout)
    written = clock()
    loop.write(encode_frame(TAG))
    rec.wait_for(SlotState.PRESENT, TAG)
    clock.advance(timeout)
    i = rec.wait_for(SlotState.EMPTY, after=2)
    assert rec.times[i] - written >= timeout
    assert rec.readings[i] == SlotReading(Role.ATTACKER, SlotState.EMPTY)


def test_rdm6300_reader_new_tag_reports_empty_then_present(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    # The clock stands still: no removal timeout can come between the two tags.
    _, rec = started(make_reader, loop, FakeClock(), removal_timeout=2.0)
    loop.write(encode_frame(TAG))
    rec.wait_for(SlotState.PRESENT, TAG)
    loop.write(encode_frame(OTHER))
    rec.wait_for(SlotState.PRESENT, OTHER)
    assert rec.states() == [
        (SlotState.EMPTY, None),
        (SlotState.PRESENT, TAG),
        (SlotState.EMPTY, None),
        (SlotState.PRESENT, OTHER),
    ]


def test_rdm6300_reader_ignores_and_counts_bad_checksums(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    reader, rec = started(make_reader, loop)
    loop.write(b"\x0262E3086CED09\x03" * 3 + encode_frame(OTHER))
    rec.wait_for(SlotState.PRESENT)
    assert rec.states() == [(SlotState.EMPTY, None), (SlotState.PRESENT, OTHER)]
    assert reader.bad_checksums == 3


def test_rdm6300_reader_thread_survives_random_bytes(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    reader, rec = started(make_reader, loop)
    rng = random.Random(6300)
    for _ in range(100):
        loop.write(rng.randbytes(rng.randrange(1, 200)))
    loop.write(encode_frame(TAG))
    rec.wait_for(SlotState.PRESENT, TAG)
    assert reader.running
    assert all(r.state is not SlotState.FAULT for r in rec.readings)
    assert {r.token for r in rec.readings} == {None, TAG}


def test_rdm6300_reader_survives_a_failing_callback(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    rec = Recorder()
    calls = 0

    def flaky(reading: SlotReading) -> None:
        nonlocal calls
        calls += 1
        rec(reading)
        if calls == 2:
            raise RuntimeError("consumer bug")

    reader = make_reader(serial_factory=lambda: loop, removal_timeout=0.1)
    reader.start(flaky)
    loop.write(encode_frame(TAG))
    rec.wait_for(SlotState.PRESENT, TAG)  # this report raised
    rec.wait_for(SlotState.EMPTY, after=2)
    assert reader.running


def test_rdm6300_reader_pty_unplug_reports_fault_and_replug_recovers(
    make_reader: Callable[..., Rdm6300Reader], tmp_path: Path
) -> None:
    link = tmp_path / "usb-rdm6300-attacker"
    ports = [Pty(link)]
    attempts = 0

    def open_port() -> serial.SerialBase:
        nonlocal attempts
        attempts += 1
        return serial.Serial(str(link), 9600, timeout=0.05)

    try:
        reader = make_reader(
            serial_factory=open_port,
            removal_timeout=0.2,
            reconnect_interval=0.1,
        )
        rec = Recorder()
        reader.start(rec)
        assert rec.readings[0].state is SlotState.EMPTY
        ports[-1].write(encode_frame(TAG))
        rec.wait_for(SlotState.PRESENT, TAG)

        ports[-1].unplug()
        i = rec.wait_for(SlotState.FAULT)
        assert f"RDM6300 attacker on {link} unplugged" in rec.readings[i].detail
        assert rec.readings[i].token is None
        tried = attempts
        wait_until(lambda: attempts >= tried + 3)  # several failed reopen attempts
        assert [r.state for r in rec.readings[i:]] == [SlotState.FAULT]  # still one FAULT
        assert reader.running  # no crash

        ports.append(Pty(link))  # replugged
        j = rec.wait_for(SlotState.EMPTY, after=i + 1)
        ports[-1].write(encode_frame(OTHER))
        rec.wait_for(SlotState.PRESENT, OTHER, after=j + 1)
    finally:
        for pty in ports:
            pty.unplug()


def test_rdm6300_reader_start_reports_fault_when_port_cannot_open(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    attempts = 0

    def factory() -> serial.SerialBase:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise serial.SerialException("could not open port /dev/ttyUSB9")
        return loop

    reader = make_reader(serial_factory=factory, reconnect_interval=0.05)
    rec = Recorder()
    reader.start(rec)
    assert rec.readings[0].state is SlotState.FAULT
    assert "/dev/ttyUSB9" in rec.readings[0].detail
    rec.wait_for(SlotState.EMPTY)
    loop.write(encode_frame(TAG))
    rec.wait_for(SlotState.PRESENT, TAG)


def test_rdm6300_reader_missing_device_path_is_fault_naming_port(
    make_reader: Callable[..., Rdm6300Reader], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    open_url = serial.serial_for_url

    def counting(url: str, *args: Any, **kwargs: Any) -> serial.SerialBase:
        opened.append(url)
        return open_url(url, *args, **kwargs)

    monkeypatch.setattr(serial, "serial_for_url", counting)
    missing = str(tmp_path / "ttyUSB0")
    reader = make_reader(port=missing, reconnect_interval=0.05)
    rec = Recorder()
    reader.start(rec)
    assert rec.readings[0].state is SlotState.FAULT
    assert missing in rec.readings[0].detail
    wait_until(lambda: len(opened) >= 4)  # several reopen attempts
    assert opened == [missing] * len(opened)
    assert reader.running
    assert len(rec.readings) == 1


def test_rdm6300_reader_opens_url_port_by_default(
    make_reader: Callable[..., Rdm6300Reader],
) -> None:
    reader = make_reader(port="loop://")
    rec = Recorder()
    reader.start(rec)
    assert rec.states() == [(SlotState.EMPTY, None)]


def test_rdm6300_reader_close_stops_thread_and_closes_port(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    reader, _ = started(make_reader, loop)
    assert reader.running
    reader.close()
    assert not reader.running
    assert not loop.is_open
    reader.close()  # idempotent


def test_rdm6300_reader_start_twice_raises(
    make_reader: Callable[..., Rdm6300Reader], loop: serial.SerialBase
) -> None:
    reader, _ = started(make_reader, loop)
    with pytest.raises(ReaderError):
        reader.start(Recorder())


def test_rdm6300_reader_needs_port_or_factory() -> None:
    with pytest.raises(ReaderError):
        Rdm6300Reader(Role.DEFENDER)
