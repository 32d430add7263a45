"""The device's outputs: two winner LEDs, a status LED and a buzzer, over gpiozero.

gpiozero is imported only when :class:`Signals` is built, so this module
imports anywhere; the simulator and the tests pass
``MockFactory(pin_class=MockPWMPin)`` as ``pin_factory``.

Secrecy: :meth:`Signals.battle` takes no argument and always plays the same
phrase with the same lights for the same time, whatever the verdict will be;
:meth:`Signals.result` then shows only who survived.
"""

from __future__ import annotations

import enum
import itertools
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from arbiter.errors import ArbiterError
from arbiter.rules.verdict import Survivor
from arbiter.tunes.defaults import REQUIRED_TUNES
from arbiter.tunes.rtttl import Tune

__all__ = [
    "DOUBLE_BLINK",
    "ERROR_BLINK",
    "FAULT_BLINK",
    "HISTORY_LENGTH",
    "NOTE_GAP_SECONDS",
    "SLOW_BLINK",
    "SPLIT_BLINK",
    "Blink",
    "BuzzerKind",
    "LedMode",
    "LedState",
    "OutputsSnapshot",
    "PlayedTune",
    "Signals",
    "SignalsClosedError",
    "UnknownTuneError",
]

_log = logging.getLogger(__name__)

#: Tunes kept in :attr:`OutputsSnapshot.played`.
HISTORY_LENGTH: int = 20
#: Silence at the end of each note (at most a quarter of it) so repeated notes are heard.
NOTE_GAP_SECONDS: float = 0.012


class SignalsClosedError(ArbiterError, RuntimeError):
    """The outputs were used after :meth:`Signals.close`."""


class UnknownTuneError(ArbiterError, LookupError):
    """A tune was asked for by a name the tune set does not have."""


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


@dataclass(frozen=True)
class LedState:
    """What one LED shows; ``blink`` is set only in :attr:`LedMode.BLINK`."""

    mode: LedMode
    blink: Blink | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "blink": None if self.blink is None else self.blink.to_dict(),
        }


_OFF = LedState(LedMode.OFF)
_ON = LedState(LedMode.ON)


@dataclass(frozen=True)
class PlayedTune:
    """A tune that started playing at ``started`` (``time.monotonic()`` seconds)."""

    name: str
    started: float

    def to_dict(self) -> dict[str, Any]:
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

    def to_dict(self) -> dict[str, Any]:
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


def _blink_frames(blink: Blink) -> tuple[float, list[bool]]:
    """The pattern as a step (seconds) and one cycle of on/off values, one per step."""
    spans = [round(t * 100) for t in (blink.on_time, blink.off_time, blink.pause)]
    # The largest step that fits every span keeps the blink thread's wake-ups rare.
    step = math.gcd(*spans) or 1
    on, off, pause = (span // step for span in spans)
    frames = ([True] * on + [False] * off) * blink.flashes + [False] * pause
    return step / 100, frames


_QUARTER_TONE = 2 ** (1 / 24)


class _Tone:
    """How a buzzer sounds a pitch (Hz) or falls silent (None)."""

    def sound(self, frequency: float | None) -> None:
        """Default: no buzzer wired."""

    def close(self) -> None:
        """Default: nothing to release."""


class _PassiveTone(_Tone):
    def __init__(self, pin: int, pin_factory: object) -> None:
        from gpiozero import TonalBuzzer
        from gpiozero.tones import Tone

        self._tone_class = Tone
        # C5 +- two octaves: C3..C7, about what a small piezo reproduces.
        self._device = TonalBuzzer(pin, mid_tone=Tone("C5"), octaves=2, pin_factory=pin_factory)
        self._low = float(self._device.min_tone.frequency)
        self._high = float(self._device.max_tone.frequency)

    def clamp(self, frequency: float) -> float:
        """Shift by whole octaves into the buzzer's range, so the tune keeps its shape."""
        # Within a quarter tone of an end counts as that end: a slightly flat C3 stays C3.
        while frequency < self._low / _QUARTER_TONE:
            frequency *= 2
        while frequency > self._high * _QUARTER_TONE:
            frequency /= 2
        return min(max(frequency, self._low), self._high)

    def sound(self, frequency: float | None) -> None:
        if frequency is None:
            self._device.stop()
        else:
            self._device.play(self._tone_class.from_frequency(self.clamp(frequency)))

    def close(self) -> None:
        self._device.close()


class _ActiveTone(_Tone):
    def __init__(self, pin: int, pin_factory: object) -> None:
        from gpiozero import Buzzer

        self._device = Buzzer(pin, pin_factory=pin_factory)

    def sound(self, frequency: float | None) -> None:
        if frequency is None:
            self._device.off()
        else:
            self._device.on()

    def close(self) -> None:
        self._device.close()


class Signals:
    """The LEDs and buzzer that show verdicts, over gpiozero devices.

    Wiring (BCM pin numbers): each LED from its GPIO through a 330 ohm resistor
    to the LED's anode (long leg), cathode to GND. A passive piezo
    (``buzzer_kind="passive"``) from its GPIO to GND, best on a PWM-capable
    pin such as GPIO 18; it plays C3..C7, other notes move by octaves into that
    range. An active buzzer (``"active"``) sounds one pitch: drive it through
    an NPN transistor if it draws more than about 15 mA. ``"none"``: no buzzer,
    tunes keep their timing.

    Every method is thread-safe. Methods that play a tune block in the
    caller's thread for the tune's whole length; the others return at once.
    :meth:`off` and :meth:`close` cut a playing tune short. ``sleep`` and
    ``clock`` replace real time in tests (pass both); ``on_change`` receives a
    snapshot after every change, outside the lock.

    :raises UnknownTuneError: if ``tunes`` lacks one of ``REQUIRED_TUNES``.
    :raises ValueError: for an unknown ``buzzer_kind``.
    """

    def __init__(
        self,
        attacker_led: int,
        defender_led: int,
        status_led: int,
        buzzer: int | None,
        tunes: Mapping[str, Tune],
        buzzer_kind: str | BuzzerKind = BuzzerKind.PASSIVE,
        pin_factory: object = None,
        sleep: Callable[[float], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        battle_phrase: bool = True,
        on_change: Callable[[OutputsSnapshot], None] | None = None,
    ) -> None:
        missing = [name for name in REQUIRED_TUNES if name not in tunes]
        if missing:
            raise UnknownTuneError(f"tunes missing: {', '.join(missing)}")
        kind = BuzzerKind(buzzer_kind)
        if kind is not BuzzerKind.NONE and buzzer is None:
            raise ValueError(f"a {kind.value} buzzer needs a pin")
        self._tunes = dict(tunes)
        self._kind = kind
        self._sleep = sleep
        self._clock = clock
        self._battle_phrase = battle_phrase
        self._on_change = on_change
        # _state guards the devices and what they show; _play makes tunes take turns.
        # Order: _play before _state, and never wait for _play while holding _state.
        self._state = threading.RLock()
        self._cancelled = threading.Condition(self._state)
        self._play = threading.Lock()
        self._generation = 0  # bumped by off(): a playing tune stops when it changes
        self._closed = False
        self._leds: dict[str, LedState] = {"attacker": _OFF, "defender": _OFF, "status": _OFF}
        # What result()/clear() asked the winner LEDs to show; the battle flashing defers it.
        self._winner_target: tuple[LedState, LedState] = (_OFF, _OFF)
        self._flashing = False
        self._playing: PlayedTune | None = None
        self._played: deque[PlayedTune] = deque(maxlen=HISTORY_LENGTH)
        self._version = 0

        from gpiozero import LED, LEDBoard

        opened: list[Any] = []
        try:
            # One board, so a split's two LEDs blink from one thread, in step.
            self._winners = LEDBoard(
                attacker=attacker_led,
                defender=defender_led,
                _order=("attacker", "defender"),
                pin_factory=pin_factory,
            )
            opened.append(self._winners)
            self._status = LED(status_led, pin_factory=pin_factory)
            opened.append(self._status)
            self._tone: _Tone
            if kind is BuzzerKind.PASSIVE:
                assert buzzer is not None
                self._tone = _PassiveTone(buzzer, pin_factory)
            elif kind is BuzzerKind.ACTIVE:
                assert buzzer is not None
                self._tone = _ActiveTone(buzzer, pin_factory)
            else:
                self._tone = _Tone()
        except BaseException:
            for device in reversed(opened):
                device.close()
            raise

    # -- public signals ---------------------------------------------------

    def ready(self) -> None:
        """Status LED steady, winner LEDs off, then the "ready" tune (blocking)."""
        self._show(attacker=_OFF, defender=_OFF, status=_ON)
        self._perform("ready")

    def waiting(self) -> None:
        """Status LED blinks slowly: one slot is seated."""
        self._show(status=LedState(LedMode.BLINK, SLOW_BLINK))

    def battle(self) -> None:
        """The battle phrase with the winner LEDs flashing alternately (blocking).

        Identical every time: it cannot know the verdict. Returns at once when
        the battle phrase is turned off.
        """
        if self._battle_phrase:
            self._perform("battle", flash=True)
        else:
            self._check_open()

    def result(self, survivor: Survivor) -> None:
        """Light the survivor's LED; both blink together for a split. Returns at once."""
        if survivor is Survivor.ATTACKER:
            self._show(attacker=_ON, defender=_OFF)
        elif survivor is Survivor.DEFENDER:
            self._show(attacker=_OFF, defender=_ON)
        else:
            split = LedState(LedMode.BLINK, SPLIT_BLINK)
            self._show(attacker=split, defender=split)

    def taps(self) -> None:
        """Taps: a Flag fell (blocking)."""
        self._perform("taps")

    def game_over(self) -> None:
        """Status LED double-blinks; the winner LEDs keep the last result."""
        self._show(status=LedState(LedMode.BLINK, DOUBLE_BLINK))

    def error(self) -> None:
        """Status LED blinks fast, then the "error" tune (blocking): challenge refused."""
        self._show(status=LedState(LedMode.BLINK, ERROR_BLINK))
        self._perform("error")

    def fault(self) -> None:
        """Status LED flashes in bursts of three, then the "fault" tune (blocking)."""
        self._show(status=LedState(LedMode.BLINK, FAULT_BLINK))
        self._perform("fault")

    def clear(self) -> None:
        """Slots emptied: winner LEDs off, status LED steady, no tune."""
        self._show(attacker=_OFF, defender=_OFF, status=_ON)

    def play(self, name: str) -> None:
        """Play the tune called ``name`` (blocking).

        :raises UnknownTuneError: if there is no such tune.
        """
        self._perform(name)

    def off(self) -> None:
        """All LEDs off and the buzzer silent; a tune playing in another thread stops."""
        with self._state:
            self._check_open()
            self._silence()
        self._notify()

    def close(self) -> None:
        """Turn everything off and release the pins. Calling it again does nothing."""
        with self._state:
            if self._closed:
                return
            self._silence()
            self._closed = True
            self._winners.close()
            self._status.close()
            self._tone.close()
        self._notify()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def tunes(self) -> Mapping[str, Tune]:
        return dict(self._tunes)

    def snapshot(self) -> OutputsSnapshot:
        """What the outputs show now. Never waits for a playing tune."""
        with self._state:
            return OutputsSnapshot(
                attacker=self._leds["attacker"],
                defender=self._leds["defender"],
                status=self._leds["status"],
                buzzer=self._kind,
                playing=self._playing,
                played=tuple(self._played),
                version=self._version,
            )

    # -- internals --------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise SignalsClosedError("the outputs are closed")

    def _notify(self) -> None:
        if self._on_change is None:
            return
        try:
            self._on_change(self.snapshot())
        except Exception:
            # A broken listener must not silence the device.
            _log.exception("on_change listener failed")

    def _show(
        self,
        *,
        attacker: LedState | None = None,
        defender: LedState | None = None,
        status: LedState | None = None,
    ) -> None:
        with self._state:
            self._check_open()
            if attacker is not None or defender is not None:
                target = (
                    self._winner_target[0] if attacker is None else attacker,
                    self._winner_target[1] if defender is None else defender,
                )
                self._winner_target = target
                # During the battle phrase the flashing owns the LEDs; it shows the target after.
                if not self._flashing:
                    self._set_winners(*target)
            if status is not None:
                self._set_status(status)
        self._notify()

    def _set_winners(self, attacker: LedState, defender: LedState) -> None:
        if (attacker, defender) == (self._leds["attacker"], self._leds["defender"]):
            return
        self._leds["attacker"] = attacker
        self._leds["defender"] = defender
        self._version += 1
        # Stops the board's blink thread before either LED is set on its own.
        self._winners.off()
        if attacker.mode is LedMode.BLINK and attacker == defender:
            assert attacker.blink is not None
            self._winners.blink(attacker.blink.on_time, attacker.blink.off_time)
            return
        for led, state in ((self._winners.attacker, attacker), (self._winners.defender, defender)):
            if state.mode is LedMode.BLINK:
                assert state.blink is not None
                led.blink(state.blink.on_time, state.blink.off_time)
            elif state.mode is LedMode.ON:
                led.on()

    def _set_status(self, state: LedState) -> None:
        if state == self._leds["status"]:
            return  # restarting a blink would jolt its rhythm
        self._leds["status"] = state
        self._version += 1
        self._status.source = None
        if state.mode is LedMode.BLINK:
            assert state.blink is not None
            step, frames = _blink_frames(state.blink)
            self._status.source_delay = step
            self._status.source = itertools.cycle(frames)
        elif state.mode is LedMode.ON:
            self._status.on()
        else:
            self._status.off()

    def _silence(self) -> None:
        self._generation += 1
        self._cancelled.notify_all()
        self._tone.sound(None)
        self._playing = None
        self._winner_target = (_OFF, _OFF)
        self._set_winners(_OFF, _OFF)
        self._set_status(_OFF)

    def _wait_until(self, deadline: float, generation: int) -> bool:
        """Wait until ``deadline`` on the clock; False if :meth:`off` came first."""
        remaining = deadline - self._clock()
        if self._sleep is not None:
            if remaining > 0:
                self._sleep(remaining)
        elif remaining > 0:
            with self._cancelled:
                self._cancelled.wait_for(lambda: self._generation != generation, remaining)
        with self._state:
            return self._generation == generation

    def _perform(self, name: str, *, flash: bool = False) -> None:
        tune = self._tunes.get(name)
        if tune is None:
            raise UnknownTuneError(f"no tune called {name!r}")
        with self._play:
            with self._state:
                self._check_open()
                generation = self._generation
                start = self._clock()
                self._playing = PlayedTune(name, start)
                self._played.append(self._playing)
                self._version += 1
                if flash:
                    # A new challenge: the last result goes dark while the phrase plays.
                    self._winner_target = (_OFF, _OFF)
                    self._set_winners(_OFF, _OFF)
                    self._flashing = True
            self._notify()
            try:
                self._sound(tune, start, generation, flash)
            finally:
                with self._state:
                    if flash:
                        self._flashing = False
                    if self._generation == generation and not self._closed:
                        self._tone.sound(None)
                        self._playing = None
                        if flash:
                            self._set_winners(*self._winner_target)
                        self._version += 1
                self._notify()

    def _sound(self, tune: Tune, start: float, generation: int, flash: bool) -> None:
        # Deadlines from one start time: the tune lasts exactly its length, however slow a step.
        offset = 0.0
        for index, note in enumerate(tune.notes):
            with self._state:
                if self._generation != generation:
                    return
                self._tone.sound(note.frequency)
                if flash:
                    lit, dark = (_ON, _OFF) if index % 2 == 0 else (_OFF, _ON)
                    self._set_winners(lit, dark)
            if flash:
                self._notify()
            if note.frequency is not None:
                gap = min(NOTE_GAP_SECONDS, note.seconds / 4)
                if not self._wait_until(start + offset + note.seconds - gap, generation):
                    return
                with self._state:
                    if self._generation != generation:
                        return
                    self._tone.sound(None)
            offset += note.seconds
            if not self._wait_until(start + offset, generation):
                return
