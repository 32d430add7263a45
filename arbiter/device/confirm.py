"""NEW GAME on the button asks to be confirmed: one hold by mistake changes nothing.

The first hold of the button *asks*: all three LEDs blink together and the
``confirm`` tune plays (:meth:`arbiter.drivers.signals.Signals.confirm`), the
same whatever the game's state, so the prompt tells nothing. A second hold
within :data:`CONFIRM_SECONDS` starts the new game (a game still on is
abandoned). A piece seated or taken out, another command, or the window
running out withdraws the question, and the device shows again what it showed.
A stuck button asks once and never confirms: gpiozero reports a hold once per
press.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

#: Seconds after the first hold within which a second hold confirms NEW GAME.
CONFIRM_SECONDS = 10.0


class Hold(enum.Enum):
    """What a hold of the NEW GAME button did."""

    ASKED = "asked"  # the first: the device asks to confirm
    CONFIRMED = "confirmed"  # the second, in time: start the new game


class NewGameConfirmation:
    """The question a first hold asks, and its window. Not thread-safe: the device's
    worker drives it.

    :param clock: monotonic seconds (tests pass a fake clock).
    :param window: seconds a second hold has to confirm.
    """

    def __init__(self, clock: Callable[[], float], window: float = CONFIRM_SECONDS) -> None:
        if window <= 0:
            raise ValueError("the confirmation window must be positive")
        self._clock = clock
        self._window = window
        self._asked_at: float | None = None

    @property
    def asking(self) -> bool:
        """True while a first hold waits for its confirmation (and its window is open)."""
        return self._asked_at is not None and self._clock() - self._asked_at <= self._window

    def hold(self) -> Hold:
        """The button was held: confirm the question asked within the window, else ask."""
        if self.asking:
            self._asked_at = None
            return Hold.CONFIRMED
        self._asked_at = self._clock()
        return Hold.ASKED

    def withdraw(self) -> bool:
        """Forget the question; True if one was asked (the prompt must go)."""
        asked, self._asked_at = self._asked_at is not None, None
        return asked

    def run_out(self) -> bool:
        """Withdraw the question if its window has passed; True if it did."""
        if self._asked_at is None or self.asking:
            return False
        self._asked_at = None
        return True


class PromptSignals(Protocol):
    """The signals of the question (:class:`arbiter.drivers.signals.Signals`)."""

    def confirm(self) -> None: ...

    def unconfirm(self, *, show: bool = True) -> None: ...


class NewGameButton:
    """What a hold of NEW GAME does, on the device's worker (not thread-safe).

    :param signals: shows the question and takes it back.
    :param start_game: starts the new game (abandoning the current one); its id.
    :param clock: monotonic seconds for the window (tests pass a fake clock).
    """

    def __init__(self, signals: PromptSignals, start_game: Callable[[], int],
                 clock: Callable[[], float]) -> None:
        self._question = NewGameConfirmation(clock)
        self._signals = signals
        self._start_game = start_game

    def held(self) -> None:
        """The button was held: ask, or (asked within the window) start the game."""
        if self._question.hold() is Hold.ASKED:
            log.info("NEW GAME button: hold it again within %.0f s to start a new game",
                     CONFIRM_SECONDS)
            self._signals.confirm()
            return
        log.info("NEW GAME button: confirmed, game %d", self._start_game())

    def withdraw(self) -> None:
        """A piece moved: the players play on; the LEDs show what they showed."""
        if self._question.withdraw():
            self._signals.unconfirm()

    def run_out(self) -> None:
        """The worker's idle turn: a question past its window goes."""
        if self._question.run_out():
            log.info("NEW GAME button: not confirmed in time, nothing changed")
            self._signals.unconfirm()

    def starting(self, start: Callable[[], int]) -> int:
        """Any NEW GAME (the button's, the page's): the question is answered; the prompt
        gives way to the new game's signals, or, when none started, to what showed."""
        self._question.withdraw()
        try:
            game_id = start()
        except BaseException:
            self._signals.unconfirm()
            raise
        self._signals.unconfirm(show=False)
        return game_id
