"""Playing a tune on the buzzer: note by note to deadlines on a clock, one tune at a time."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from arbiter.drivers.buzzer import Buzzer
from arbiter.drivers.outputs import HISTORY_LENGTH, PlayedTune
from arbiter.tunes.rtttl import Tune

#: Silence at the end of each note (at most a quarter of it) so repeated notes are heard.
NOTE_GAP_SECONDS: float = 0.012


@dataclass(frozen=True)
class Cue:
    """One tune begun: what plays, and the stop count it began under."""

    tune: PlayedTune
    generation: int


class TunePlayer:
    """Plays tunes on a :class:`Buzzer`; :meth:`stop` cuts the one playing short.

    It shares its owner's ``lock``, so a note and the lights the owner shows
    with it change together. Hold :attr:`turn` around a whole tune (tunes take
    turns) and take it before the lock; :meth:`begin`, :meth:`stop` and
    :meth:`finish` are called with the lock held, :meth:`sound` without it.
    ``sleep`` replaces waiting on the lock in tests that drive ``clock`` by hand.
    """

    def __init__(
        self,
        buzzer: Buzzer,
        lock: threading.RLock,
        clock: Callable[[], float],
        sleep: Callable[[float], None] | None,
        on_change: Callable[[], None],
    ) -> None:
        self._buzzer = buzzer
        self._lock = lock
        self._stopped = threading.Condition(lock)
        self.turn = threading.Lock()
        self._clock = clock
        self._sleep = sleep
        self._on_change = on_change
        self._generation = 0  # bumped by stop(): a playing tune ends when it changes
        self.playing: PlayedTune | None = None
        self._played: deque[PlayedTune] = deque(maxlen=HISTORY_LENGTH)

    @property
    def played(self) -> tuple[PlayedTune, ...]:
        """The last :data:`HISTORY_LENGTH` tunes begun, oldest first."""
        return tuple(self._played)

    def begin(self, name: str) -> Cue:
        """Mark ``name`` as playing from now (lock held)."""
        cue = Cue(PlayedTune(name, self._clock()), self._generation)
        self.playing = cue.tune
        self._played.append(cue.tune)
        return cue

    def is_current(self, cue: Cue) -> bool:
        """True unless :meth:`stop` came since ``cue`` began (lock held)."""
        return self._generation == cue.generation

    def stop(self) -> None:
        """Silence the buzzer and end the tune playing in any thread (lock held)."""
        self._generation += 1
        self._stopped.notify_all()
        self._buzzer.sound(None)
        self.playing = None

    def finish(self) -> None:
        """A tune played to its end: silence, nothing playing (lock held)."""
        self._buzzer.sound(None)
        self.playing = None

    def sound(self, tune: Tune, cue: Cue, on_note: Callable[[int], None] | None = None) -> None:
        """Sound ``tune``'s notes to their deadlines from ``cue``'s start; return on stop.

        ``on_note(index)`` runs with the lock held as each note starts (the
        battle flashing); the change hook then runs, outside the lock.
        """
        # Deadlines from one start time: the tune lasts exactly its length, however slow a step.
        start = cue.tune.started
        offset = 0.0
        for index, note in enumerate(tune.notes):
            with self._lock:
                if not self.is_current(cue):
                    return
                self._buzzer.sound(note.frequency)
                if on_note is not None:
                    on_note(index)
            if on_note is not None:
                self._on_change()
            if note.frequency is not None:
                gap = min(NOTE_GAP_SECONDS, note.seconds / 4)
                if not self._wait_until(start + offset + note.seconds - gap, cue):
                    return
                with self._lock:
                    if not self.is_current(cue):
                        return
                    self._buzzer.sound(None)
            offset += note.seconds
            if not self._wait_until(start + offset, cue):
                return

    def _wait_until(self, deadline: float, cue: Cue) -> bool:
        """Wait until ``deadline`` on the clock; False if :meth:`stop` came first."""
        remaining = deadline - self._clock()
        if self._sleep is not None:
            if remaining > 0:
                self._sleep(remaining)
        elif remaining > 0:
            with self._stopped:
                self._stopped.wait_for(lambda: self._generation != cue.generation, remaining)
        with self._lock:
            return self.is_current(cue)
