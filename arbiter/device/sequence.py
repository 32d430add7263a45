"""The challenge sequence: what the readings of the two slots mean.

Driven by one thread (the device's worker) with one reading at a time::

    idle -> waiting (one slot seated) -> both valid -> pair checked
         -> deciding (lights flash, battle phrase: the same for every verdict)
         -> verdict made durable -> result (survivor's LED; a split blinks both)
         -> [a Flag fell: game_over at once, Taps plays on] -> both slots emptied -> idle

Pieces left seated never count twice: after a verdict the slots must both
be emptied before the next challenge (the sequence is *armed* again). A
piece pulled or swapped while deciding aborts the challenge with the error
signal and records nothing. Logs at INFO never name a rank or a tag.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Protocol

from arbiter.device.errors import DeviceError
from arbiter.device.judge import Judge
from arbiter.drivers.errors import UnknownPieceError
from arbiter.drivers.identify import PieceIdentifier
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.errors import ChallengeRefusedError, WrongGameError
from arbiter.rules.game import EndingKind
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role, Survivor
from arbiter.storage.journal import GameStore, StoreError

log = logging.getLogger(__name__)

#: The hint while seated pieces are ignored until both slots have been emptied.
EMPTY_BOTH_SLOTS = "take both pieces out to start again"
_MOVED = "a piece was moved while deciding: nothing recorded"


class DeviceState(enum.Enum):
    """Where the device is in the sequence; its value is the status's ``state``."""

    IDLE = "idle"
    WAITING = "waiting"
    DECIDING = "deciding"
    RESULT = "result"
    GAME_OVER = "game_over"
    FAULT = "fault"


class DeviceSignals(Protocol):
    """The signals the sequence gives (:class:`arbiter.drivers.signals.Signals`).

    The tunes block the caller until they end, except :meth:`begin_taps`:
    Taps plays on while the device answers, and the next tune cuts it short.
    """

    def ready(self) -> None: ...

    def waiting(self) -> None: ...

    def battle(self) -> None: ...

    def result(self, survivor: Survivor) -> None: ...

    def taps(self) -> None: ...

    def begin_taps(self) -> None: ...

    def game_over(self) -> None: ...

    def error(self) -> None: ...

    def fault(self) -> None: ...

    def clear(self) -> None: ...


def _no_readings() -> Iterable[SlotReading]:
    return ()


def _nothing() -> None:
    return None


class ChallengeSequence:
    """The state machine over both slots' readings. Not thread-safe: one thread drives it.

    :param store: the game record; the current game is checked and extended.
    :param identifier: maps the readers' tokens to pieces.
    :param signals: LEDs and buzzer.
    :param clock: seconds, to time a pair from valid to verdict (:attr:`on_decided`).
    :param on_change: called before a blocking signal, so watchers see the new
        state while the tune plays (the driver publishes after each call too).
    :param pending_readings: takes the readings that came while the battle
        phrase played; any of them means a piece moved.
    """

    def __init__(
        self,
        store: GameStore,
        identifier: PieceIdentifier,
        signals: DeviceSignals,
        *,
        clock: Callable[[], float] = time.perf_counter,
        on_change: Callable[[], None] = _nothing,
        pending_readings: Callable[[], Iterable[SlotReading]] = _no_readings,
    ) -> None:
        self._store = store
        self._judge = Judge(store, identifier)
        self._signals = signals
        self._clock = clock
        self._on_change = on_change
        self._pending_readings = pending_readings
        self._readings: dict[Role, SlotReading] = {
            role: SlotReading(role, SlotState.EMPTY) for role in Role
        }
        self._state = DeviceState.GAME_OVER if store.current.over else DeviceState.IDLE
        self._message = ""
        self._armed = True  # False after a verdict until both slots are empty
        played = store.current.challenges
        self._last_survivor: Survivor | None = played[-1].verdict.survivor if played else None
        self._stopped = False
        #: Benchmark hook: seconds from a valid pair to its verdict on the LEDs.
        self.on_decided: Callable[[float], None] | None = None

    # -- what it shows -------------------------------------------------------

    @property
    def state(self) -> DeviceState:
        return self._state

    @property
    def message(self) -> str:
        """Why the last pair was refused or what went wrong; empty when all is well."""
        return self._message

    @property
    def last_verdict(self) -> str | None:
        """The last verdict's public word (``attacker``, ``defender``, ``split``)."""
        return self._last_survivor.public_word if self._last_survivor else None

    @property
    def readings(self) -> Mapping[Role, SlotReading]:
        """The latest reading of each slot."""
        return MappingProxyType(self._readings)

    def all_empty(self) -> bool:
        return all(r.state is SlotState.EMPTY for r in self._readings.values())

    def reader_faults(self) -> list[str]:
        """One line per slot whose reader reports a fault."""
        return [
            f"{r.slot.value}: {r.detail or 'fault'}"
            for r in self._readings.values()
            if r.state is SlotState.FAULT
        ]

    # -- driving it ----------------------------------------------------------

    def take(self, reading: SlotReading) -> None:
        """A slot's new reading: decide what both readings mean now."""
        self._readings[reading.slot] = reading
        self._step()

    def note(self, reading: SlotReading) -> None:
        """Keep a slot's reading without judging it (the slots serve enrollment)."""
        self._readings[reading.slot] = reading

    def rearm(self) -> None:
        """Judge again once both slots are empty (never a pair seated meanwhile)."""
        self._armed = self.all_empty()

    def stop(self) -> None:
        """Shutting down: a challenge whose battle phrase is cut short records nothing."""
        self._stopped = True

    def report(self, message: str) -> None:
        """Show ``message`` (an internal error) in the status."""
        self._set(message=message)
        self._on_change()

    def show(self, *, greet: bool = False) -> None:
        """Put the current state on the outputs.

        :param greet: at start: an idle device plays the ready tune, and a fault
            (signalled as it came) is not signalled again.
        """
        state = self._state
        if state is DeviceState.FAULT:
            if not greet:
                self._signals.fault()
        elif state is DeviceState.RESULT and self._last_survivor is not None:
            self._signals.result(self._last_survivor)
        elif greet and state is not DeviceState.GAME_OVER:
            self._signals.ready()
        else:
            self._signals.clear()
            if state is DeviceState.GAME_OVER:
                self._signals.game_over()

    def new_game(self, assignment: JsonDict | None = None) -> int:
        """Start a new game (one still on is recorded as abandoned); returns its id.

        :raises DeviceError: the record cannot be written.
        """
        try:
            game = self._store.new_game(assignment)
        except StoreError as exc:
            log.error("could not start a new game: %s", exc)
            raise DeviceError(f"the game record cannot be written: {exc}") from None
        log.info("new game %d", game.id)
        self._last_survivor = None
        self._set(message="")
        self.rearm()
        if self._state is not DeviceState.FAULT:
            if self._armed:
                self._set(DeviceState.IDLE)
            else:
                self._set(DeviceState.WAITING, "take both pieces out to begin")
            self._signals.ready()
        return game.id

    def reveal_abandoned(self) -> list[int]:
        """Reveal the sealed abandoned games (the next game has begun); their ids.

        :raises DeviceError: the record cannot be written (that game stays sealed).
        """
        try:
            return self._store.reveal_abandoned()
        except StoreError as exc:
            log.error("could not record the reveal: %s", exc)
            raise DeviceError(f"the game record cannot be written: {exc}") from None

    def declare_end(self, kind: EndingKind, winner: Side | None, game_id: int | None) -> None:
        """Record an ending the device cannot see.

        :raises WrongGameError: ``game_id`` is not the current game.
        :raises EndingError: not declarable, bad winner, or the game is already over.
        :raises DeviceError: the record cannot be written.
        """
        current = self._store.current.id
        if game_id is not None and game_id != current:
            raise WrongGameError(f"game {game_id} is not the current game ({current})")
        try:
            ending = self._store.declare_end(kind, winner)
        except StoreError as exc:
            log.error("could not record the ending: %s", exc)
            raise DeviceError(f"the game record cannot be written: {exc}") from None
        log.info("game %d ended: %s", self._store.current.id, ending.kind.value)
        if self._state is not DeviceState.FAULT:
            # An old refusal ("a piece was moved...") must not show under "Game over".
            self._set(DeviceState.GAME_OVER, "")
            self._signals.game_over()

    # -- the steps -------------------------------------------------------------

    def _set(self, state: DeviceState | None = None, message: str | None = None) -> None:
        """The one place the state and its message change."""
        if state is not None:
            self._state = state
        if message is not None:
            self._message = message

    def _step(self) -> None:
        readings = self._readings.values()
        faults = [r for r in readings if r.state is SlotState.FAULT]
        if faults:
            if self._state is not DeviceState.FAULT:
                self._set(DeviceState.FAULT, "a slot reader is not working")
                log.warning("reader fault: %s", "; ".join(r.detail for r in faults))
                self._on_change()
                self._signals.fault()
            return
        if self._state is DeviceState.FAULT:
            log.info("fault cleared")
            over = self._store.current.over
            self._set(DeviceState.GAME_OVER if over else DeviceState.IDLE, "")
            self.rearm()
            self.show()

        if self.all_empty():
            self._armed = True
            if self._state is DeviceState.GAME_OVER or self._store.current.over:
                self._set(DeviceState.GAME_OVER, "")
            else:
                if self._state is not DeviceState.IDLE:
                    self._signals.clear()
                self._set(DeviceState.IDLE, "")
            return
        if any(r.state is SlotState.INVALID for r in readings):
            self._refuse("a key is not fully seated or cannot be read")
            return
        if not self._armed:
            # A verdict is showing, or a challenge was aborted: wait for both slots to empty.
            if self._state in (DeviceState.IDLE, DeviceState.WAITING) and not self._message:
                self._set(DeviceState.WAITING, EMPTY_BOTH_SLOTS)
            return
        if sum(r.state is SlotState.PRESENT for r in readings) < 2:
            if self._state is not DeviceState.GAME_OVER:
                # A piece seated into empty slots begins a new pair: an old refusal is stale.
                fresh = self._state is DeviceState.IDLE
                self._set(DeviceState.WAITING, "" if fresh else None)
                self._signals.waiting()
            return
        self._challenge()

    def _refuse(self, public_reason: str) -> None:
        log.info("challenge refused: %s", public_reason)
        over = self._state is DeviceState.GAME_OVER
        self._set(None if over else DeviceState.WAITING, public_reason)
        self._on_change()
        self._signals.error()
        if over:
            self._signals.game_over()

    def _challenge(self) -> None:
        attacker_token = self._readings[Role.ATTACKER].token
        defender_token = self._readings[Role.DEFENDER].token
        assert attacker_token is not None and defender_token is not None
        t_valid = self._clock()
        try:
            contenders = self._judge.identify(attacker_token, defender_token)
            self._judge.check(contenders)
        except (UnknownPieceError, ChallengeRefusedError) as exc:
            log.debug("refused: %s", exc)
            self._refuse(exc.public_reason)
            return
        self._set(DeviceState.DECIDING, "")
        self._on_change()
        self._signals.battle()  # identical for every verdict; takes the same time
        if self._stopped:
            return  # shut down mid-phrase: no verdict will show, so record nothing
        if self._moved_while_deciding():
            # Start afresh from empty slots, so the moved pair is never judged half-seen.
            self.rearm()
            if self._armed:
                self._refuse(_MOVED)
                self._set(DeviceState.IDLE)  # both slots are empty already
                self._signals.clear()
            else:
                self._refuse(f"{_MOVED}; {EMPTY_BOTH_SLOTS}")
            return
        try:
            challenge = self._judge.record(contenders)
        except ChallengeRefusedError as exc:
            self._refuse(exc.public_reason)
            return
        except StoreError as exc:
            log.error("could not record the challenge: %s", exc)
            self._set(DeviceState.FAULT, "the game record cannot be written: nothing recorded")
            self._on_change()
            self._signals.fault()
            return
        self._armed = False
        survivor = challenge.verdict.survivor
        self._signals.result(survivor)
        if self.on_decided is not None:
            self.on_decided(self._clock() - t_valid)
        self._last_survivor = survivor
        self._set(DeviceState.RESULT)
        game = self._store.current
        log.info("game %d challenge %d: %s", game.id, challenge.number, _VERDICT_WORDS[survivor])
        if challenge.verdict.flag_fell:
            assert game.ending is not None and game.ending.winner is not None
            log.info("a Flag fell: game %d over, %s wins", game.id, game.ending.winner.title)
            # Game over shows at once, ending published; Taps (23 s) must not hold the device.
            self._set(DeviceState.GAME_OVER)
            self._signals.game_over()
            self._on_change()
            self._signals.begin_taps()

    def _moved_while_deciding(self) -> bool:
        """Take in readings that came during the battle phrase; True if a piece moved."""
        moved = False
        for reading in self._pending_readings():
            self._readings[reading.slot] = reading
            moved = True
        # Readers report only changes, so any reading now is a piece that moved.
        return moved


_VERDICT_WORDS = {
    Survivor.ATTACKER: "attacker survives",
    Survivor.DEFENDER: "defender survives",
    Survivor.NONE: "split, both eliminated",
}
