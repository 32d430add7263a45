"""Notched-key slot reader with the slot's microswitches on Pi GPIO pins.

Wiring, per slot: one normally-open microswitch per code position (7 for the
default 3-of-7 code), in a row across the slot floor, switch 1 at the left
seen from the LED side (see hardware/keycodes.md). Wire each switch between
its GPIO pin and GND; nothing else is needed, the Pi's internal pull-up holds
the pin at 3.3 V while the switch is open and the switch pulls it to 0 V when
a key's tooth presses it. Never connect a switch to 5 V. Pins are BCM numbers
given in the config, switch 1 first.

Each pin is a gpiozero input with the pull-up on and gpiozero's own debounce
off: edge callbacks (interrupts, no polling loop) hand the whole pattern to a
:class:`~arbiter.readers.debounce.Debouncer`, and one small thread sleeps until
the next settle deadline. The pin factory is passed in (``pin_factory=``), so
tests use gpiozero's MockFactory.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from arbiter.keycode import DEFAULT_KEYCODE, KeyCode, to_bits
from arbiter.readers.base import ReaderError, ReadingCallback, SlotReading
from arbiter.readers.debounce import Debouncer
from arbiter.verdict import Role

_log = logging.getLogger(__name__)


def _open_inputs(pins: Sequence[int], pin_factory: Any) -> list[Any]:
    """One pulled-up gpiozero input per pin (active = closed to GND), or ReaderError."""
    from gpiozero import DigitalInputDevice
    from gpiozero.exc import GPIOZeroError

    devices: list[Any] = []
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


class GpioKeyReader:
    """One slot's key switches on GPIO pins (``pins[0]`` is switch 1).

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
        pin_factory: Any = None,
    ) -> None:
        pins = list(pins)
        if len(pins) != keycode.switches:
            raise ReaderError(
                f"{slot.value} slot needs {keycode.switches} switch pins, got {len(pins)}"
            )
        if len(set(pins)) != len(pins):
            raise ReaderError(f"{slot.value} slot pins repeat: {pins}")
        self._slot = slot
        self._debouncer = Debouncer(
            slot, keycode=keycode, window=window, invalid_after=invalid_after
        )
        from gpiozero.exc import GPIOZeroError

        self._pin_error: type[Exception] = GPIOZeroError
        self._devices = _open_inputs(pins, pin_factory)
        # (pattern, time) from the edge callbacks; None asks the thread to stop.
        self._events: queue.Queue[tuple[str, float] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._report: ReadingCallback | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def slots(self) -> tuple[Role, ...]:
        return (self._slot,)

    def start(self, report: ReadingCallback) -> None:
        """Begin watching; the current state is reported once settled.

        :raises ReaderError: if already started or closed.
        """
        with self._lock:
            if self._closed or self._thread is not None:
                raise ReaderError("reader already started or closed")
            self._report = report
            self._thread = threading.Thread(
                target=self._run, name=f"gpio-keys-{self._slot.value}", daemon=True
            )
            self._thread.start()
        for device in self._devices:
            device.when_activated = self._changed
            device.when_deactivated = self._changed
        self._changed()  # the state at start, e.g. a key already seated

    def close(self) -> None:
        """Stop watching and free the pins; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        for device in self._devices:
            device.close()
        self._events.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    def _changed(self) -> None:
        """Edge callback (any thread): queue the whole pattern with its time."""
        try:
            bits = to_bits(device.is_active for device in self._devices)
        except self._pin_error:  # pins closed under us during close()
            return
        self._events.put((bits, time.monotonic()))

    def _run(self) -> None:
        debouncer = self._debouncer
        while True:
            due = debouncer.deadline()
            timeout = None if due is None else max(0.0, due - time.monotonic())
            items: list[tuple[str, float] | None] = []
            try:
                items.append(self._events.get(timeout=timeout))
                while True:
                    items.append(self._events.get_nowait())
            except queue.Empty:
                pass
            readings: list[SlotReading] = []
            for item in items:
                if item is None:
                    return
                readings += debouncer.feed(*item)
            readings += debouncer.poll(time.monotonic())
            self._deliver(readings)

    def _deliver(self, readings: list[SlotReading]) -> None:
        report = self._report
        for reading in readings:
            if self._closed or report is None:
                return
            try:
                report(reading)
            except Exception:
                _log.exception("slot reading callback failed")


def gpio_key_readers(
    attacker_pins: Sequence[int],
    defender_pins: Sequence[int],
    *,
    keycode: KeyCode = DEFAULT_KEYCODE,
    window: float = 0.03,
    invalid_after: float = 1.0,
    pin_factory: Any = None,
) -> list[GpioKeyReader]:
    """Both slots' readers, attacker first.

    :raises ReaderError: as :class:`GpioKeyReader` (nothing is left open).
    """
    kw: dict[str, Any] = {
        "keycode": keycode,
        "window": window,
        "invalid_after": invalid_after,
        "pin_factory": pin_factory,
    }
    overlap = set(attacker_pins) & set(defender_pins)
    if overlap:
        raise ReaderError(f"pins used by both slots: {sorted(overlap)}")
    attacker = GpioKeyReader(Role.ATTACKER, attacker_pins, **kw)
    try:
        defender = GpioKeyReader(Role.DEFENDER, defender_pins, **kw)
    except ReaderError:
        attacker.close()
        raise
    return [attacker, defender]
