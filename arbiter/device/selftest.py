"""The self-test: blink each LED, play each tune, report each slot's reading.

The device runs it on its worker, so no challenge is decided while the
outputs are under test, and then puts its current state back on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from arbiter.device.errors import SelfTestInGameError, SelfTestTuneError
from arbiter.drivers.readers.base import SlotReading
from arbiter.rules.game import Game
from arbiter.rules.verdict import Role, Survivor
from arbiter.tunes.rtttl import Tune


class SignalsUnderTest(Protocol):
    """The outputs under test (:class:`arbiter.drivers.signals.Signals`)."""

    def result(self, survivor: Survivor) -> None: ...

    def waiting(self) -> None: ...

    def clear(self) -> None: ...

    def play(self, name: str) -> None: ...


class SelfTest:
    """Checks each output in turn and reports what it did.

    :param sleep: how long each LED stays lit is waited with this (tests pass a fake).
    """

    def __init__(
        self,
        signals: SignalsUnderTest,
        tunes: Mapping[str, Tune],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._signals = signals
        self._tunes = dict(tunes)
        self._sleep = sleep

    def check(self, game: Game, tunes: Sequence[str] | None, *, force: bool) -> None:
        """Refuse a test that cannot or should not run now.

        :raises SelfTestTuneError: an unknown tune.
        :raises SelfTestInGameError: during a game that has begun, unless ``force``
            (it would flash and play Taps at the table).
        """
        unknown = [name for name in tunes or () if name not in self._tunes]
        if unknown:
            raise SelfTestTuneError(f"no tune {unknown[0]!r}; tunes: {', '.join(self._tunes)}")
        if game.challenges and not game.over and not force:
            raise SelfTestInGameError(
                "a game is in progress: end it or start a new game before the self-test"
            )

    def run(self, tunes: Sequence[str] | None, readings: Mapping[Role, SlotReading]) -> list[str]:
        """Blink, play ``tunes`` (all when None), report the slots: one line each."""
        lines: list[str] = []
        for survivor in (Survivor.ATTACKER, Survivor.DEFENDER):
            self._signals.result(survivor)
            self._sleep(0.6)
            lines.append(f"LED {survivor.value}: lit")
        self._signals.waiting()
        self._sleep(1.2)
        lines.append("LED status: blinked")
        self._signals.clear()
        for name in tunes if tunes is not None else sorted(self._tunes):
            self._signals.play(name)
            lines.append(f"tune {name}: played ({self._tunes[name].duration:.1f} s)")
        for role in Role:
            reading = readings[role]
            text = reading.state.value
            if reading.detail:
                text += f" ({reading.detail})"
            lines.append(f"slot {role.value}: {text}")
        return lines
