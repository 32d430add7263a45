"""Notched-key slot reader with the slot's microswitches on Pi GPIO pins.

Wiring, per slot: one normally-open microswitch per code position (7 for the
default 3-of-7 code), in a row across the slot floor, switch 1 at the left
seen from the LED side (see docs/build/keycodes.md). Wire each switch between
its GPIO pin and GND; nothing else is needed, the Pi's internal pull-up holds
the pin at 3.3 V while the switch is open and the switch pulls it to 0 V when
a key's tooth presses it. Never connect a switch to 5 V. Pins are BCM numbers
given in the config, switch 1 first.

Each pin is a gpiozero input with the pull-up on and gpiozero's own debounce
off: edge callbacks (interrupts, no polling loop) hand the whole pattern to a
:class:`~arbiter.drivers.readers.debounce.Debouncer`, and one small thread sleeps until
the next settle deadline. The pin factory is passed in (``pin_factory=``), so
tests use gpiozero's MockFactory.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from arbiter.drivers.pins import InputLine
from arbiter.drivers.readers.base import Clock, ReadingCallback, SlotReading
from arbiter.drivers.readers.debounce import Debouncer
from arbiter.drivers.readers.errors import ReaderError
from arbiter.drivers.readers.key_thread import QueueWorker
from arbiter.drivers.readers.raw import RawCallback, RawKind, RawSample, emit
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode, to_bits
from arbiter.rules.verdict import Role

_log = logging.getLogger(__name__)


def _open_inputs(pins: Sequence[int], pin_factory: object) -> list[InputLine]:
    """One pulled-up gpiozero input per pin (active = closed to GND), or ReaderError."""
    from gpiozero import DigitalInputDevice
    from gpiozero.exc import GPIOZeroError

    devices: list[InputLine] = []
    try:
        for pin in pins:
            devices.append(
                DigitalInputDevice(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
            )
    except (GPIOZeroError, OSError) as exc:
        for device in devices:
            device.close()
        raise ReaderError(f"cannot open GPIO input {pin}: {exc}") from exc
    return devices


class GpioKeyReader(QueueWorker[tuple[str, float]]):
    """One slot's key switches on GPIO pins (``pins[0]`` is switch 1).

    Edges are timed on ``clock`` (a monotonic clock in seconds; tests pass a fake one).

    :raises ReaderError: if the pin count does not match the code, a pin is
        repeated, or a pin cannot be opened.
    """

    def __init__(
        self,
        slot: Role,
        pins: Sequence[int],
        *,
        keycode: KeyCode = DEFAULT_KEYCODE,
        window: float = 0.03,
        invalid_after: float = 1.0,
        pin_factory: object = None,
        clock: Clock = time.monotonic,
    ) -> None:
        pins = list(pins)
        if len(pins) != keycode.switches:
            raise ReaderError(
                f"{slot.value} slot needs {keycode.switches} switch pins, got {len(pins)}"
            )
        if len(set(pins)) != len(pins):
            raise ReaderError(f"{slot.value} slot pins repeat: {pins}")
        super().__init__(f"gpio-keys-{slot.value}")
        self._slot = slot
        self._clock = clock
        self._debouncer = Debouncer(
            slot, keycode=keycode, window=window, invalid_after=invalid_after
        )
        from gpiozero.exc import GPIOZeroError

        self._pin_error: type[Exception] = GPIOZeroError
        self._devices = _open_inputs(pins, pin_factory)
        self._raw: RawCallback | None = None

    @property
    def slots(self) -> tuple[Role, ...]:
        return (self._slot,)

    def start(self, report: ReadingCallback) -> None:
        """Begin watching; the current state is reported once settled.

        :raises ReaderError: if already started or closed.
        """
        self._start_worker(report)
        for device in self._devices:
            device.when_activated = self._changed
            device.when_deactivated = self._changed
        self._changed()  # the state at start, e.g. a key already seated

    def watch_raw(self, callback: RawCallback | None) -> None:
        """Show every switch pattern as it changes (before debounce), the current one at once."""
        self._raw = callback
        if callback is not None:
            self._changed()

    def close(self) -> None:
        """Stop watching and free the pins; safe to call twice."""

        def release() -> None:
            for device in self._devices:
                device.close()

        self._stop_worker(release)

    def _changed(self) -> None:
        """Edge callback (any thread): queue the whole pattern with its time."""
        try:
            bits = to_bits(device.is_active for device in self._devices)
        except self._pin_error:  # pins closed under us during close()
            return
        when = self._clock()
        self._events.put((bits, when))
        emit(self._raw, RawSample(RawKind.SWITCHES, self._slot, bits, at=when))

    def _run(self) -> None:
        debouncer = self._debouncer
        while True:
            due = debouncer.deadline()
            timeout = None if due is None else max(0.0, due - self._clock())
            batch = self._next_batch(timeout)
            if batch is None:
                return
            readings: list[SlotReading] = []
            for bits, when in batch:
                readings += debouncer.feed(bits, when)
            readings += debouncer.poll(self._clock())
            self._deliver(readings)


def gpio_key_readers(
    attacker_pins: Sequence[int],
    defender_pins: Sequence[int],
    *,
    keycode: KeyCode = DEFAULT_KEYCODE,
    window: float = 0.03,
    invalid_after: float = 1.0,
    pin_factory: object = None,
    clock: Clock = time.monotonic,
) -> list[GpioKeyReader]:
    """Both slots' readers, attacker first.

    :raises ReaderError: as :class:`GpioKeyReader` (nothing is left open).
    """

    def reader(slot: Role, pins: Sequence[int]) -> GpioKeyReader:
        return GpioKeyReader(
            slot,
            pins,
            keycode=keycode,
            window=window,
            invalid_after=invalid_after,
            pin_factory=pin_factory,
            clock=clock,
        )

    overlap = set(attacker_pins) & set(defender_pins)
    if overlap:
        raise ReaderError(f"pins used by both slots: {sorted(overlap)}")
    attacker = reader(Role.ATTACKER, attacker_pins)
    try:
        defender = reader(Role.DEFENDER, defender_pins)
    except ReaderError:
        attacker.close()
        raise
    return [attacker, defender]
