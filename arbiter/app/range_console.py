"""``gg-arbiter selftest --range``: the RC522 flagship's read-range check, in a terminal.

The builder stands a ruler in a slot and holds one piece's sticker (enrolled or not)
flat over it at each height the check names, pressing Enter once it is there; the
check reads both slots each time (:mod:`arbiter.device.rangecheck`) and ends with
where each slot reads, any cross-read, a gain to use, and PASS or FAIL. With
``--sim`` the simulated Pico (:class:`arbiter.drivers.fakes.FakePico`, its read
range as :class:`arbiter.drivers.readrange.ReadRangeModel` states) holds the
sticker, through the same reader code as the real board.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from arbiter.app.config import Config
from arbiter.app.errors import CliError
from arbiter.device.rangecheck import judge, run_steps
from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.mcu import McuReader
from arbiter.drivers.readrange import ReadRangeModel
from arbiter.errors import ArbiterError
from arbiter.rules.verdict import Role

#: Seconds a held sticker is read for: the firmware polls every 50 ms and reports a
#: tag gone after 300 ms; the Pi's reader sees it within a line.
HOLD_SECONDS = 0.8
#: Seconds to wait for the board's first answer and its GAIN confirmation.
ANSWER_SECONDS = 5.0
#: The simulated sticker: an NTAG213-like UID.
SIM_STICKER = "04A1B2C3D48E80"


class SlotWatch:
    """Both slots' current readings, and the slots that read a tag since :meth:`reset`."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.now: dict[Role, SlotReading] = {}
        self._seen: set[Role] = set()

    def __call__(self, reading: SlotReading) -> None:
        with self._changed:
            self.now[reading.slot] = reading
            if reading.state is SlotState.PRESENT:
                self._seen.add(reading.slot)
            self._changed.notify_all()

    def reset(self) -> None:
        with self._changed:
            self._seen = {r for r, got in self.now.items() if got.state is SlotState.PRESENT}

    def read_by(self) -> frozenset[Role]:
        with self._changed:
            return frozenset(self._seen)

    def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()``: woken by each reading, and every 50 ms for what is no
        reading (the board's GAIN confirmation)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.05))
            return True

    def faults(self) -> list[str]:
        with self._changed:
            return [f"{r.value}: {got.detail}" for r, got in self.now.items()
                    if got.state is SlotState.FAULT]


def run_range_check(
    config: Config,
    *,
    sim: bool = False,
    gain_db: int | None = None,
    model: ReadRangeModel | None = None,
    input_fn: Callable[[str], str] = input,
    print_fn: Callable[[str], object] = print,
    hold_seconds: float = HOLD_SECONDS,
    answer_seconds: float = ANSWER_SECONDS,
) -> int:
    """The check on the configured Pico (or the simulated one); returns the exit status.

    :param hold_seconds: how long a hand-held sticker is read at each height.
    :param answer_seconds: how long to wait for the board's GAIN confirmation.
    :param gain_db: try this gain instead of ``reader.rx_gain_db`` (not saved).
    :param model: the simulator's read range (tests pass slots close together).
    :raises CliError: not the mcu reader kind, a gain the RC522 has not, or a board
        that never answers (so the command exits non-zero).
    """
    if config.reader.kind != "mcu":
        raise CliError("the range check is for the RC522 flagship: reader.kind = \"mcu\", "
                       f"not {config.reader.kind!r}")
    gain = gain_db if gain_db is not None else config.reader.rx_gain_db
    pico: FakePico | None = None
    try:
        if sim:
            import serial

            pico = FakePico(model=model)
            path = pico.path
            reader = McuReader(serial_factory=lambda: serial.Serial(path, 115200, timeout=0.05),
                               rx_gain_db=gain)
        else:
            reader = McuReader(config.reader.mcu_port, rx_gain_db=gain)
    except ArbiterError as exc:
        if pico is not None:
            pico.unplug()
        raise CliError(str(exc)) from None
    watch = SlotWatch()
    reader.start(watch)
    try:
        return _check(reader, watch, gain, pico, input_fn, print_fn, hold_seconds,
                      answer_seconds)
    finally:
        reader.close()
        if pico is not None:
            pico.unplug()


def _check(reader: McuReader, watch: SlotWatch, gain: int, pico: FakePico | None,
           input_fn: Callable[[str], str], print_fn: Callable[[str], object],
           hold: float, answer: float) -> int:
    simulated = pico is not None
    watch.wait_for(lambda: reader.rx_gain_confirmed == gain or bool(watch.faults()), answer)
    confirmed = reader.rx_gain_confirmed == gain
    if watch.faults():
        raise CliError(f"the slot microcontroller fails: {'; '.join(watch.faults())}")
    print_fn(f"range check: RC522 receiver gain {gain} dB"
             + (" (simulated board)" if simulated else ""))
    if not confirmed:
        print_fn("the Pico did not confirm the gain: its main.py predates the GAIN setting "
                 "(copy firmware/pico/main.py to it again)")
        print_fn("FAIL")
        return 1
    print_fn("Heights are the sticker's height above the slot's floor (stand a ruler in it).")

    def ask(text: str) -> None:
        if simulated:
            print_fn(f"{text}: (simulated)")
        else:
            input_fn(f"{text}, then Enter: ")

    ask("Empty both slots")
    if pico is not None:
        pico.stickers.clear()
        pico.place("A", None)
    else:
        time.sleep(hold)  # the board reports a tag gone 300 ms after it left
    busy = [r.name for r, got in watch.now.items() if got.state is SlotState.PRESENT]
    if busy:
        print_fn(f"the {' and '.join(busy)} slot reads a tag with both slots empty: take "
                 "every piece and sticker away from the board and run the check again")
        print_fn("FAIL")
        return 1

    def sample(over: Role, height: int) -> frozenset[Role]:
        where = f"hold the sticker {height} mm above the {over.name} slot's floor"
        if pico is not None:
            letter = "A" if over is Role.ATTACKER else "D"
            pico.stickers.clear()
            pico.place(letter, SIM_STICKER, float(height))
            expected = {Role.ATTACKER: pico.state["A"], Role.DEFENDER: pico.state["D"]}
            if not watch.wait_for(lambda: all(watch.now[r].token == t
                                              for r, t in expected.items()), answer):
                raise CliError("the simulated board's lines never reached the reader")
            watch.reset()
        else:
            input_fn(f"  {where}, then Enter: ")
            # A hand-held sticker, in real time: what still shows from where it was a
            # moment ago is gone after the firmware's 300 ms; then a flicker counts.
            time.sleep(hold / 2)
            watch.reset()
            time.sleep(hold / 2)
        read = watch.read_by()
        seen = ", ".join(f"{r.name} {'reads' if r in read else '-'}" for r in Role)
        print_fn(f"  {where} (simulated): {seen}" if simulated else f"    {seen}")
        return read

    report = judge(run_steps(sample), gain)
    if watch.faults():
        raise CliError(f"the slot microcontroller failed during the check: "
                       f"{'; '.join(watch.faults())}")
    for line in report.lines():
        print_fn(line)
    return 0 if report.passed else 1
