"""The device's outputs: two winner LEDs, a status LED and a buzzer, over gpiozero.

:class:`Signals` turns what the device says (ready, waiting, battle,
result, ...) into lights and tunes. Its parts: the values of what is shown
(:mod:`arbiter.drivers.outputs`), the LEDs (:mod:`arbiter.drivers.leds`),
the buzzer (:mod:`arbiter.drivers.buzzer`) and the tune player
(:mod:`arbiter.drivers.player`).

gpiozero is imported only when :class:`Signals` is built, so this module
imports anywhere; the simulator and the tests pass
``MockFactory(pin_class=MockPWMPin)`` as ``pin_factory``.

Secrecy: :meth:`Signals.battle` takes no argument and always plays the same
phrase with the same lights for the same time, whatever the verdict will be;
:meth:`Signals.result` then shows only who survived.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from arbiter.drivers.buzzer import open_buzzer
from arbiter.drivers.errors import SignalsClosedError, UnknownTuneError
from arbiter.drivers.leds import LedPanel
from arbiter.drivers.outputs import (
    CONFIRM_BLINK,
    DOUBLE_BLINK,
    ERROR_BLINK,
    FAULT_BLINK,
    HISTORY_LENGTH,
    LED_OFF,
    LED_ON,
    SLOW_BLINK,
    SPLIT_BLINK,
    Blink,
    BuzzerKind,
    LedMode,
    LedState,
    OutputsSnapshot,
    PlayedTune,
)
from arbiter.drivers.player import NOTE_GAP_SECONDS, Cue, TunePlayer
from arbiter.rules.verdict import Survivor
from arbiter.threads import BackgroundThread, declare
from arbiter.tunes.defaults import REQUIRED_TUNES
from arbiter.tunes.rtttl import Tune

TAPS = declare("taps", __name__,
               "plays Taps at a game's end while the device goes on answering")

# The values are re-exported: the device, the web and the tests know them from here.
__all__ = [
    "CONFIRM_BLINK",
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
        if kind is not BuzzerKind.NONE and buzzer is None:  # before any pin is claimed
            raise ValueError(f"a {kind.value} buzzer needs a pin")
        self._tunes = dict(tunes)
        self._kind = kind
        self._battle_phrase = battle_phrase
        self._on_change = on_change
        # _state guards the devices and what they show; the player's turn makes tunes
        # take turns. Order: turn before _state, and never wait for a turn holding _state.
        self._state = threading.RLock()
        self._closed = False
        # What result()/clear() asked the winner LEDs to show; the battle flashing defers it.
        self._winner_target: tuple[LedState, LedState] = (LED_OFF, LED_OFF)
        # What the LEDs showed before NEW GAME's question (confirm()), to show again.
        self._before_confirm: tuple[LedState, LedState, LedState] | None = None
        self._flashing = False
        self._version = 0
        # A tune playing on its own thread (Taps), cut short by the next tune.
        self._background: Cue | None = None
        self._background_thread: BackgroundThread | None = None
        self._leds = LedPanel(attacker_led, defender_led, status_led, pin_factory)
        try:
            self._buzzer = open_buzzer(kind, buzzer, pin_factory)
        except BaseException:
            self._leds.close()
            raise
        self._player = TunePlayer(self._buzzer, self._state, clock, sleep, self._notify)

    # -- public signals ---------------------------------------------------

    def ready(self) -> None:
        """Status LED steady, winner LEDs off, then the "ready" tune (blocking)."""
        self._show(attacker=LED_OFF, defender=LED_OFF, status=LED_ON)
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
            self._show(attacker=LED_ON, defender=LED_OFF)
        elif survivor is Survivor.DEFENDER:
            self._show(attacker=LED_OFF, defender=LED_ON)
        else:
            split = LedState(LedMode.BLINK, SPLIT_BLINK)
            self._show(attacker=split, defender=split)

    def taps(self) -> None:
        """Taps: a Flag fell (blocking)."""
        self._perform("taps")

    def begin_taps(self) -> None:
        """Taps in a thread of its own: returns once it has begun.

        The device answers while it plays (a game over needs no waiting); the
        next tune cuts it short, :meth:`off` and :meth:`close` silence it, and
        :meth:`wait_tunes` waits for its end.
        """
        self._check_open()
        begun = threading.Event()

        def play() -> None:
            try:
                self._perform("taps", on_begin=begun.set, background=True)
            except SignalsClosedError:
                pass  # closed before it began: nothing to play
            finally:
                begun.set()

        thread = BackgroundThread(lambda _stopping: play(), TAPS)
        with self._state:
            self._background_thread = thread
        thread.start()
        begun.wait()

    def wait_tunes(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a tune playing in the background; True if none is left."""
        with self._state:
            thread = self._background_thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

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

    def confirm(self) -> None:
        """NEW GAME asks to be confirmed: all three LEDs blink together, then the
        "confirm" tune (blocking). The same whatever the game's state: it tells nothing.
        :meth:`unconfirm` shows again what the LEDs showed before."""
        blink = LedState(LedMode.BLINK, CONFIRM_BLINK)
        with self._state:
            self._check_open()
            if self._before_confirm is None:
                self._before_confirm = (*self._winner_target, self._leds.status)
        self._show(attacker=blink, defender=blink, status=blink)
        self._perform("confirm")

    def unconfirm(self, *, show: bool = True) -> None:
        """The question of :meth:`confirm` is withdrawn: the LEDs show what they showed
        (``show=False``: answered; the caller shows what follows)."""
        with self._state:
            before, self._before_confirm = self._before_confirm, None
        if before is not None and show:
            self._show(attacker=before[0], defender=before[1], status=before[2])

    def clear(self) -> None:
        """Slots emptied: winner LEDs off, status LED steady, no tune."""
        self._show(attacker=LED_OFF, defender=LED_OFF, status=LED_ON)

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
            self._leds.close()
            self._buzzer.close()
            thread = self._background_thread
        self._notify()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)  # silenced above: it ends at once

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
                attacker=self._leds.attacker,
                defender=self._leds.defender,
                status=self._leds.status,
                buzzer=self._kind,
                playing=self._player.playing,
                played=self._player.played,
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
        if self._leds.set_winners(attacker, defender):
            self._version += 1

    def _set_status(self, state: LedState) -> None:
        if self._leds.set_status(state):
            self._version += 1

    def _silence(self) -> None:
        self._player.stop()
        self._winner_target = (LED_OFF, LED_OFF)
        self._set_winners(LED_OFF, LED_OFF)
        self._set_status(LED_OFF)

    def _perform(
        self,
        name: str,
        *,
        flash: bool = False,
        background: bool = False,
        on_begin: Callable[[], None] | None = None,
    ) -> None:
        tune = self._tunes.get(name)
        if tune is None:
            raise UnknownTuneError(f"no tune called {name!r}")
        if not background:
            # A tune in the background (Taps) yields to the one the device plays now.
            with self._state:
                if self._background is not None and self._player.is_current(self._background):
                    self._player.stop()
        with self._player.turn:
            with self._state:
                self._check_open()
                cue = self._player.begin(name)
                if background:
                    self._background = cue
                self._version += 1
                if flash:
                    # A new challenge: the last result goes dark while the phrase plays.
                    self._winner_target = (LED_OFF, LED_OFF)
                    self._set_winners(LED_OFF, LED_OFF)
                    self._flashing = True
            self._notify()
            if on_begin is not None:
                on_begin()
            try:
                self._player.sound(tune, cue, self._flash if flash else None)
            finally:
                with self._state:
                    if background:
                        self._background = None
                    if flash:
                        self._flashing = False
                    if self._player.is_current(cue) and not self._closed:
                        self._player.finish()
                        if flash:
                            self._set_winners(*self._winner_target)
                        self._version += 1
                self._notify()

    def _flash(self, index: int) -> None:
        """The battle phrase's lights: the winner LEDs take turns, note by note."""
        lit, dark = (LED_ON, LED_OFF) if index % 2 == 0 else (LED_OFF, LED_ON)
        self._set_winners(lit, dark)
