"""Which pins the device drives: the Pi's own, or gpiozero's mock pins.

gpiozero picks the real pin library itself (lgpio on a Pi 5 and bookworm,
RPi.GPIO on older systems); nothing here imports one. Errors from setting up
pins become :class:`PinSetupError`, so callers catch one arbiter error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from arbiter.drivers.errors import PinSetupError
from arbiter.errors import ArbiterError

if TYPE_CHECKING:
    from gpiozero.pins.mock import MockFactory


def hardware_available() -> bool:
    """True on a Raspberry Pi (its device tree says so) or when a pin factory is chosen.

    ``GPIOZERO_PIN_FACTORY=mock`` counts: the device then runs on gpiozero's mock
    pins with its configured readers, which is how tests exercise the hardware path.
    """
    if os.environ.get("GPIOZERO_PIN_FACTORY"):
        return True
    try:
        model = Path("/proc/device-tree/model").read_bytes()
    except OSError:
        return False
    return b"Raspberry Pi" in model


class InputLine(Protocol):
    """The part of a gpiozero ``DigitalInputDevice`` the key readers use."""

    when_activated: Callable[[], None] | None
    when_deactivated: Callable[[], None] | None

    @property
    def is_active(self) -> bool: ...

    def close(self) -> None: ...


def mock_pin_factory() -> MockFactory:
    """A private gpiozero MockFactory with PWM pins: the simulator's virtual board."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    return MockFactory(pin_class=MockPWMPin)


@contextmanager
def pin_errors() -> Iterator[None]:
    """Turn gpiozero's errors (and its pin libraries') raised inside into :class:`PinSetupError`."""
    try:
        yield
    except ArbiterError:
        raise
    except Exception as exc:
        from gpiozero.exc import GPIOZeroError

        if isinstance(exc, GPIOZeroError) or type(exc).__module__.startswith(
            ("gpiozero", "lgpio", "RPi")
        ):
            raise PinSetupError(f"cannot set up the pins: {type(exc).__name__}: {exc}") from exc
        raise
