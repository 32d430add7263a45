"""The serial-port side shared by the RFID readers: port, thread, reconnection.

:class:`SerialSlotReader` opens the port (or asks a factory, so tests hand in
``loop://`` or a pty), reads it on one daemon thread with short blocking
reads, and when the port fails (an unplugged USB adapter) reports FAULT and
reopens it every ``reconnect_interval`` until it is back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

import serial

from arbiter.drivers.readers.base import Clock, ReadingCallback, SlotReading, SlotState
from arbiter.drivers.readers.errors import ReaderError
from arbiter.rules.verdict import Role
from arbiter.threads import BackgroundThread, declare

SERIAL_READER = declare(
    "serial reader", __name__,
    "reads a tag reader's serial line, reconnecting when it drops (named 'LABEL reader')")

log = logging.getLogger(__name__)

#: Seconds a blocking read waits before the reader checks timeouts and stop requests.
READ_TIMEOUT = 0.05

SerialFactory = Callable[[], serial.SerialBase]


class SerialSlotReader:
    """Base of the serial slot readers: owns the port, its thread and reconnection.

    A daemon thread does blocking reads with a short timeout (no busy
    polling), passes bytes to :meth:`_on_data` and calls :meth:`_on_tick`
    after every read. When the port cannot be opened or fails
    (``SerialException`` or ``OSError``) every slot is reported FAULT and the
    port is reopened every ``reconnect_interval`` seconds. Subclasses report
    through :meth:`_set`, which drops repeats. The ``now`` they are given comes
    from ``clock``.
    """

    def __init__(
        self,
        slots: tuple[Role, ...],
        port: str | None,
        serial_factory: SerialFactory | None,
        baudrate: int,
        reconnect_interval: float,
        kind: str,
        clock: Clock = time.monotonic,
    ) -> None:
        if port is None and serial_factory is None:
            raise ReaderError(f"{kind}: give a serial port or a serial_factory")
        if reconnect_interval <= 0:
            raise ReaderError(f"{kind}: reconnect_interval must be positive")
        self._slots = slots
        self._port_name = port
        self._factory = serial_factory or self._open_default
        self._baudrate = baudrate
        self._reconnect_interval = reconnect_interval
        self._kind = kind
        self._clock = clock
        self._label = f"{kind} on {port}" if port else kind
        self._report: ReadingCallback | None = None
        self._last: dict[Role, SlotReading] = {}
        self._serial: serial.SerialBase | None = None
        self._thread = BackgroundThread(self._run, SERIAL_READER, label=f"{self._label} reader")

    @property
    def slots(self) -> tuple[Role, ...]:
        return self._slots

    @property
    def running(self) -> bool:
        """True while the reader thread is alive."""
        return self._thread.is_alive()

    def start(self, report: ReadingCallback) -> None:
        """Open the port, report each slot's state (EMPTY, or FAULT) and start reading.

        :raises ReaderError: if already started or closed.
        """
        if self._report is not None or self._thread.stopping.is_set():
            raise ReaderError(f"{self._label}: start() may be called once")
        self._report = report
        self._connect()
        self._thread.start()

    def close(self) -> None:
        """Stop the thread and close the port; safe to call twice."""
        self._thread.stop(5.0)
        self._drop_port()

    # -- for subclasses ------------------------------------------------------

    def _on_connect(self, port: serial.SerialBase, now: float) -> None:
        """The port has just opened: report the state known so far."""
        for slot in self._slots:
            self._set(slot, SlotState.EMPTY)

    def _on_data(self, data: bytes, now: float) -> None:
        raise NotImplementedError

    def _on_tick(self, now: float) -> None:
        """Called after every read, with or without data."""

    def _set(
        self, slot: Role, state: SlotState, token: str | None = None, detail: str = ""
    ) -> None:
        """Report a slot's state unless it is unchanged (state and token; detail ignored).

        A PRESENT with a different token is reported as EMPTY, then PRESENT.
        """
        last = self._last.get(slot)
        if last is not None and last.state is state and last.token == token:
            return
        if last is not None and last.state is SlotState.PRESENT and state is SlotState.PRESENT:
            self._emit(SlotReading(slot, SlotState.EMPTY))
        self._emit(SlotReading(slot, state, token, detail))

    def _fault(self, detail: str) -> None:
        for slot in self._slots:
            self._set(slot, SlotState.FAULT, detail=detail)

    # -- internals -----------------------------------------------------------

    def _open_default(self) -> serial.SerialBase:
        assert self._port_name is not None
        return serial.serial_for_url(self._port_name, self._baudrate, timeout=READ_TIMEOUT)

    def _emit(self, reading: SlotReading) -> None:
        self._last[reading.slot] = reading
        if self._report is None:
            return
        try:
            self._report(reading)
        except Exception:
            log.exception("%s: report callback failed", self._label)

    def _connect(self) -> bool:
        try:
            port = self._factory()
            port.timeout = READ_TIMEOUT
        except (serial.SerialException, OSError) as exc:
            self._fault(f"{self._label} cannot be opened ({exc})")
            return False
        self._serial = port
        if self._port_name is None and isinstance(getattr(port, "port", None), str):
            self._label = f"{self._kind} on {port.port}"  # name the device in FAULT details
        log.info("%s connected", self._label)
        try:
            self._on_connect(port, self._clock())
        except (serial.SerialException, OSError) as exc:
            self._drop_port()
            self._fault(f"{self._label} unplugged or failing ({exc})")
            return False
        return True

    def _drop_port(self) -> None:
        port, self._serial = self._serial, None
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            port = self._serial
            if port is None:
                if stopping.wait(self._reconnect_interval):
                    break
                self._connect()
                continue
            try:
                data = port.read(1)
                if data:
                    data += port.read(port.in_waiting)
            except (serial.SerialException, OSError) as exc:
                if stopping.is_set():
                    break
                log.warning("%s lost: %s", self._label, exc)
                self._drop_port()
                self._fault(f"{self._label} unplugged or failing ({exc})")
                continue
            now = self._clock()
            try:
                if data:
                    self._on_data(data, now)
                self._on_tick(now)
            except Exception:
                # A bug must not silence the slot for the rest of the game.
                log.exception("%s: error handling input", self._label)
