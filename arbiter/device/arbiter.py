"""The arbiter as a device: read both slots, decide, signal, record.

One worker thread owns the device; readers, buttons and the web page only
put events on its queue, so a challenge is decided exactly once and in
order, and a slow page never delays a verdict. :class:`Arbiter` owns that
thread and composes the parts, each in its own module:

- :mod:`~arbiter.device.sequence`: the challenge sequence (the state machine);
- :mod:`~arbiter.device.status`: the public status and its subscribers;
- :mod:`~arbiter.device.enrollment`: enrollment mode (RFID tags);
- :mod:`~arbiter.device.selftest`: the self-test;
- :mod:`~arbiter.device.protocol`: what the web may use (:class:`DeviceView`).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from arbiter.device.confirm import NewGameButton
from arbiter.device.enrollment import EnrollmentMode
from arbiter.device.errors import DeviceError
from arbiter.device.event_thread import Worker
from arbiter.device.protocol import DeviceConfig, HeldButton
from arbiter.device.selftest import SelfTest
from arbiter.device.sequence import ChallengeSequence, DeviceState
from arbiter.device.status import OutputWatchers, StatusFacts, StatusHub
from arbiter.drivers.identify import PieceIdentifier
from arbiter.drivers.readers.base import SlotReader, SlotReading
from arbiter.drivers.readers.sim import SimSlots
from arbiter.drivers.signals import Signals
from arbiter.errors import ArbiterError
from arbiter.fleet.state import FleetState
from arbiter.rules.errors import WrongGameError
from arbiter.rules.game import EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from arbiter.storage.registry import TagRegistry
from arbiter.threads import BackgroundThread, declare
from arbiter.tunes.rtttl import Tune

NEW_GAME = declare("new-game", __name__,
                   "hands a hold of the NEW GAME button to the device's thread and waits")

__all__ = ["COMMAND_TIMEOUT", "Arbiter", "DeviceError", "DeviceState"]

log = logging.getLogger(__name__)

#: How long a command waits for the worker (Taps plus a self-test can hold it this long).
COMMAND_TIMEOUT = 90.0
#: The self-test plays every tune: it may hold the worker longer.
SELFTEST_TIMEOUT = 180.0

T = TypeVar("T")


class Arbiter:
    """The running device. ``start`` begins reading; ``close`` turns everything off.

    Implements :class:`arbiter.device.protocol.DeviceView` for the web.

    :param store: the game record (durable).
    :param readers: slot readers covering both slots.
    :param identifier: maps tokens to pieces (key table, tag registry, text).
    :param signals: LEDs and buzzer.
    :param tunes: the tunes the signals play (for the self-test and the browser).
    :param config: where the data is and the web's settings.
    :param sim: the simulator's slots when running without hardware.
    :param registry: the RFID tag registry, when enrollment is possible.
    :param outputs: the watchers ``signals`` was built to notify (its ``on_change``).
    :param new_game_button: held twice within a few seconds, it starts a new game
        (:mod:`arbiter.device.confirm`); closed with the device.
    :param clock: monotonic seconds for the worker's heartbeat and the button's
        confirmation window (tests pass a fake).
    :param fleet: the tournament link's state (broker, assignment); None: no tournament.
    """

    def __init__(
        self,
        store: GameStore,
        readers: Sequence[SlotReader],
        identifier: PieceIdentifier,
        signals: Signals,
        *,
        tunes: Mapping[str, Tune],
        config: DeviceConfig,
        sim: SimSlots | None = None,
        registry: TagRegistry | None = None,
        outputs: OutputWatchers | None = None,
        new_game_button: HeldButton | None = None,
        clock: Callable[[], float] = time.monotonic,
        fleet: FleetState | None = None,
    ) -> None:
        covered = {slot for reader in readers for slot in reader.slots}
        if covered != {Role.ATTACKER, Role.DEFENDER}:
            raise ValueError("the readers must cover both slots")
        self.store = store
        self.config = config
        self.sim = sim
        self.registry = registry
        self._readers = list(readers)
        self._signals = signals
        self._tunes = dict(tunes)
        self._outputs = outputs if outputs is not None else OutputWatchers()
        self._worker = Worker(
            self._on_reading,
            after_command=self._publish,
            on_error=lambda: self._sequence.report("internal error: see the log"),
            reading_budget=COMMAND_TIMEOUT,  # a verdict with its battle phrase and Taps
            clock=clock,
            on_idle=lambda: self._question.run_out(),
        )
        self._question = NewGameButton(
            signals, lambda: self._do_new_game(self.store.current.id), clock)
        self._started = False
        self._closed = False
        self._sequence = ChallengeSequence(
            store,
            identifier,
            signals,
            on_change=self._publish,
            pending_readings=self._worker.take_pending_readings,
        )
        self._enrollment = EnrollmentMode(registry, signals)
        self._selftest = SelfTest(signals, self._tunes)
        self.fleet = fleet  # the app's broker link keeps it up to date
        self._status_hub = StatusHub("sim" if sim is not None else "hardware", fleet=fleet)
        if fleet is not None:
            fleet.add_listener(self._status_hub.refresh)
        self._button = new_game_button
        if new_game_button is not None:
            new_game_button.when_held = self._new_game_held
        self._publish()  # a status exists from the start

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Start the worker and the readers; the ready signal plays."""
        if self._started:
            return
        self._started = True
        self._publish()
        self._worker.start()
        for reader in self._readers:
            reader.start(self._worker.post)
        self._call(lambda: self._sequence.show(greet=True))

    def close(self) -> None:
        """Stop reading, turn LEDs and buzzer off, close the record. Safe twice."""
        if self._closed:
            return
        self._closed = True
        self._sequence.stop()
        for reader in self._readers:
            with contextlib.suppress(Exception):
                reader.close()
        self._signals.off()  # cuts a playing tune short so the worker can stop
        self._worker.stop(timeout=5)
        if self._button is not None:
            with contextlib.suppress(Exception):
                self._button.close()
        self._signals.close()
        self.store.close()

    def is_alive(self) -> bool:
        """True while the worker thread runs."""
        return self._worker.is_alive()

    def is_healthy(self) -> bool:
        """True while the worker makes progress: the watchdog's health check.

        See :mod:`arbiter.device.event_thread` for the heartbeat and the budgets.
        """
        return self._worker.is_healthy()

    # -- commands (any thread) ---------------------------------------------

    def _call(self, action: Callable[[], T], timeout: float = COMMAND_TIMEOUT) -> T:
        """Run ``action`` on the worker thread and return its result (or raise).

        :raises DeviceError: shut down, or the worker stayed busy past ``timeout``
            (the command is then withdrawn and never runs).
        """
        if self._closed:
            raise DeviceError("the arbiter is shut down")
        return self._worker.call(action, timeout)

    def new_game(self, abandon: int | None = None) -> int:
        """Start a new game (one still on is abandoned: ``abandon`` names it, checked on
        the worker, else :class:`WrongGameError`); returns its id."""
        return self._call(lambda: self._do_new_game(abandon))

    def _do_new_game(self, abandon: int | None = None) -> int:
        if self._enrollment.active:
            raise DeviceError("finish or stop enrollment first")
        current = self.store.current
        if abandon is not None and abandon != current.id and not current.over:
            raise WrongGameError(f"game {abandon} is not the current game ({current.id})")
        held = self.fleet.assignment if self.fleet is not None else None
        return self._question.starting(
            lambda: self._sequence.new_game(held.to_dict() if held else None))

    def _new_game_held(self) -> None:
        def press() -> None:
            try:
                self._call(self._question.held)
            except ArbiterError as exc:  # a button has nowhere to show it but the log
                log.warning("NEW GAME button: no new game: %s", exc)

        # The button's own thread calls this: a thread of its own waits for the worker.
        BackgroundThread(lambda _stopping: press(), NEW_GAME).start()

    @property
    def sealed_games(self) -> tuple[int, ...]:
        """Abandoned games whose ranks stay secret until the next game has begun."""
        return self.store.sealed

    def reveal_abandoned(self) -> list[int]:
        """The next game began by the players' word: reveal the sealed games (ids)."""
        return self._call(self._sequence.reveal_abandoned)

    def declare_end(
        self, kind: EndingKind, winner: Side | None, game_id: int | None = None
    ) -> None:
        """Record an ending the device cannot see (flag home, resignation, draw).

        :param game_id: the game the players meant; checked on the worker, so a
            NEW GAME just before cannot make the ending land on the wrong game.
        :raises WrongGameError: ``game_id`` is not the current game.
        :raises EndingError: not declarable, bad winner, or the game is already over.
        :raises DeviceError: the record cannot be written, or the device is busy.
        """
        self._call(lambda: self._sequence.declare_end(kind, winner, game_id))

    def start_enrollment(self, only: str | None = None) -> JsonDict:
        """Enter enrollment: tags in the ATTACKER slot are enrolled, not judged.

        :param only: a physical piece (``W:PVT#3``) to re-enroll; all missing ones if None.
        :raises DeviceError: if this device has no tag registry.
        """
        target = self._enrollment.target(only)
        self._call(lambda: self._enrollment.begin(target))
        return self.enrollment_status()

    def stop_enrollment(self) -> None:
        def stop() -> None:
            self._enrollment.end()
            self._sequence.rearm()

        self._call(stop)

    def skip_enrollment(self) -> JsonDict:
        """Leave the piece asked for without a tag and go on to the next.

        :raises DeviceError: if enrollment is not on.
        """
        self._call(self._enrollment.skip)
        return self.enrollment_status()

    def choose_enrollment(self, piece: str) -> JsonDict:
        """Enroll the piece named (``B:SPY``, ``W:PVT#3``) next: the admin's own order.

        :raises DeviceError: enrollment is off, or the piece has its tag already.
        :raises PieceError: not a piece.
        """
        self._call(lambda: self._enrollment.choose(piece))
        return self.enrollment_status()

    def enrollment_status(self) -> JsonDict:
        """Admin only: prompts name pieces."""
        return self._enrollment.status()

    def selftest(self, *, tunes: Sequence[str] | None = None, force: bool = False) -> list[str]:
        """Blink each LED, play each tune, report each slot's reading.

        Runs on the worker, so no challenge is decided while the outputs are under test.

        :param force: test even during a game (the command line, with no players waiting).
        :raises DeviceError: an unknown tune; or during a game that has begun, unless
            ``force`` (it would flash and play Taps at the table).
        """
        self._selftest.check(self.store.current, tunes, force=force)

        def run() -> list[str]:
            report = self._selftest.run(tunes, self._sequence.readings)
            self._sequence.show()  # the test borrowed the outputs
            return report

        return self._call(run, timeout=SELFTEST_TIMEOUT)

    # -- what it shows (any thread) ----------------------------------------

    @property
    def state(self) -> DeviceState:
        return self._sequence.state

    @property
    def on_decided(self) -> Callable[[float], None] | None:
        """Benchmark hook: seconds from a valid pair to its verdict on the LEDs."""
        return self._sequence.on_decided

    @on_decided.setter
    def on_decided(self, hook: Callable[[float], None] | None) -> None:
        self._sequence.on_decided = hook

    def status(self) -> JsonDict:
        """The public status: never a rank or a tag."""
        return self._status_hub.status()

    def subscribe(self) -> queue.Queue[JsonDict]:
        """A queue that receives every new status (oldest dropped if it falls behind)."""
        return self._status_hub.subscribe()

    def unsubscribe(self, q: queue.Queue[JsonDict]) -> None:
        self._status_hub.unsubscribe(q)

    def add_status_listener(self, listener: Callable[[JsonDict], None]) -> None:
        """Hand each new status of the device's own making (not one made because the fleet
        state changed) to ``listener``, which must not wait (the broker link)."""
        self._status_hub.add_listener(listener)

    def add_output_listener(self, listener: Callable[[JsonDict], None]) -> None:
        """Call ``listener`` with :meth:`outputs` after every change of LEDs or buzzer."""
        self._outputs.add(listener)

    def outputs(self) -> JsonDict:
        """LEDs and buzzer as the simulator panel shows them."""
        return self._signals.snapshot().to_dict()

    def tunes_json(self) -> dict[str, list[list[float | None]]]:
        """Each tune as ``[frequency or None, seconds]`` pairs, for the browser."""
        return {
            name: [[note.frequency, note.seconds] for note in tune.notes]
            for name, tune in self._tunes.items()
        }

    def reader_faults(self) -> list[str]:
        """One line per slot whose reader reports a fault."""
        return self._sequence.reader_faults()

    @property
    def data_dir(self) -> Path:
        return self.config.data_dir

    @property
    def admin_pin(self) -> str | None:
        return self.config.web.admin_pin

    @property
    def is_simulator(self) -> bool:
        return self.sim is not None

    @property
    def can_enroll(self) -> bool:
        return self._enrollment.available

    @property
    def current_game_id(self) -> int:
        return self.store.current.id

    def settle(self, timeout: float = COMMAND_TIMEOUT) -> None:
        """Wait until every reading and command posted so far has been handled.

        A challenge is handled whole (battle phrase, verdict, and Taps, which
        plays on after the device already answers), so a script waits here
        between two commands as a person waits for the LEDs and the buzzer.

        :raises DeviceError: shut down, or still busy after ``timeout`` s.
        """
        start = time.monotonic()
        self._call(lambda: None, timeout)
        left = timeout - (time.monotonic() - start)
        if not self._signals.wait_tunes(max(left, 0.0)):
            raise DeviceError("the device is busy (a tune): try again")

    def game_ids(self) -> list[int]:
        return self.store.game_ids()

    def game(self, game_id: int) -> Game:
        return self.store.get(game_id)

    def _publish(self) -> None:
        sequence = self._sequence
        self._status_hub.publish(
            StatusFacts(
                game=self.store.current,
                state=sequence.state,
                message=sequence.message,
                last_verdict=sequence.last_verdict,
                readings=dict(sequence.readings),
                enrolling=self._enrollment.active,
            )
        )

    # -- the worker ----------------------------------------------------------

    def _on_reading(self, reading: SlotReading) -> None:
        self._question.withdraw()  # a piece moved: the players play on
        if self._enrollment.active:
            self._sequence.note(reading)  # shown in the status, never judged
            self._enrollment.step(self._sequence.readings)
        else:
            self._sequence.take(reading)
        self._publish()
