"""What the outputs show, as values: LED modes and blink patterns, tunes played, snapshots.

Plain data with no hardware behind it, so the web page and the simulator
panel can draw the outputs from a :class:`OutputsSnapshot`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arbiter.rules.jsondata import JsonDict

#: Tunes kept in :attr:`OutputsSnapshot.played`.
HISTORY_LENGTH: int = 20


class BuzzerKind(enum.Enum):
    """What is wired to the buzzer pin."""

    PASSIVE = "passive"  # a bare piezo: gpiozero TonalBuzzer plays each pitch by PWM
    ACTIVE = "active"  # a buzzer with its own oscillator: one pitch, on or off
    NONE = "none"  # no buzzer: tunes keep their timing, silently


class LedMode(enum.Enum):
    OFF = "off"
    ON = "on"
    BLINK = "blink"


@dataclass(frozen=True)
class Blink:
    """A repeating blink: ``flashes`` times on for ``on_time`` and off for ``off_time``,
    then dark for ``pause`` more seconds. Times are multiples of 10 ms."""

    on_time: float
    off_time: float
    flashes: int = 1
    pause: float = 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "on_time": self.on_time,
            "off_time": self.off_time,
            "flashes": self.flashes,
            "pause": self.pause,
        }


#: Status LED while one slot is seated.
SLOW_BLINK = Blink(1.0, 1.0)
#: Both winner LEDs together: both pieces fell.
SPLIT_BLINK = Blink(0.25, 0.25)
#: Status LED once the game is over.
DOUBLE_BLINK = Blink(0.15, 0.15, flashes=2, pause=0.9)
#: Status LED for a refused challenge.
ERROR_BLINK = Blink(0.1, 0.1)
#: Status LED when the device is not working: bursts of three, unlike any other.
FAULT_BLINK = Blink(0.05, 0.05, flashes=3, pause=0.6)
#: All three LEDs together: NEW GAME asks to be confirmed (hold the button again).
CONFIRM_BLINK = Blink(0.4, 0.4)


@dataclass(frozen=True)
class LedState:
    """What one LED shows; ``blink`` is set only in :attr:`LedMode.BLINK`."""

    mode: LedMode
    blink: Blink | None = None

    def to_dict(self) -> JsonDict:
        return {
            "mode": self.mode.value,
            "blink": None if self.blink is None else self.blink.to_dict(),
        }


#: An LED that is dark, and one that is steadily lit.
LED_OFF = LedState(LedMode.OFF)
LED_ON = LedState(LedMode.ON)


@dataclass(frozen=True)
class PlayedTune:
    """A tune that started playing at ``started`` (``time.monotonic()`` seconds)."""

    name: str
    started: float

    def to_dict(self) -> dict[str, str | float]:
        return {"name": self.name, "started": self.started}


@dataclass(frozen=True)
class OutputsSnapshot:
    """Everything the outputs show, for the simulator panel and live updates.

    ``version`` grows with every change, so a listener can drop a stale one.
    """

    attacker: LedState
    defender: LedState
    status: LedState
    buzzer: BuzzerKind
    playing: PlayedTune | None
    played: tuple[PlayedTune, ...]
    version: int

    def to_dict(self) -> JsonDict:
        """Plain JSON-ready values."""
        return {
            "leds": {
                "attacker": self.attacker.to_dict(),
                "defender": self.defender.to_dict(),
                "status": self.status.to_dict(),
            },
            "buzzer": self.buzzer.value,
            "playing": None if self.playing is None else self.playing.to_dict(),
            "played": [tune.to_dict() for tune in self.played],
            "version": self.version,
        }
