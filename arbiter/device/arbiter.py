"""The arbiter as a device: read both slots, decide, signal, record.

One worker thread owns the sequence; readers, buttons and the web page only
put events on its queue, so a challenge is decided exactly once and in
order, and a slow page never delays a verdict::

    idle -> waiting (one slot seated) -> both valid -> pair checked
         -> deciding (lights flash, battle phrase: the same for every verdict)
         -> verdict made durable -> result (survivor's LED; a split blinks both)
         -> [a Flag fell: Taps -> game_over] -> both slots emptied -> idle

Pieces left seated never count twice: after a verdict the slots must both
be emptied before the next challenge. A piece pulled or swapped while
deciding aborts the challenge with the error signal and records nothing.
Logs at INFO never name a rank or a tag.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from arbiter.errors import ArbiterError
from arbiter.hardware.identify import Identity, PieceIdentifier, UnknownPieceError
from arbiter.hardware.readers.base import SlotReader, SlotReading, SlotState
from arbiter.hardware.signals import Signals
from arbiter.rules.contenders import Contenders
from arbiter.rules.game import ChallengeRefusedError, EndingKind, SameTagError, WrongGameError
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role, Survivor
from arbiter.storage.journal import GameStore, StoreError
from arbiter.tunes.rtttl import Tune

log = logging.getLogger(__name__)

SUBSCRIBER_QUEUE = 64
#: How long a command waits for the worker (Taps plus a self-test can hold it this long).
COMMAND_TIMEOUT = 90.0


class DeviceState(enum.Enum):
    IDLE = "idle"
    WAITING = "waiting"
    DECIDING = "deciding"
    RESULT = "result"
    GAME_OVER = "game_over"
    FAULT = "fault"


class DeviceError(ArbiterError):
    """A device command that cannot be carried out (closed, busy)."""


@dataclass(frozen=True)
class _Command:
    action: Callable[[], Any]
    done: Future[Any]


_STOP = object()


class Arbiter:
    """The running device. ``start`` begins reading; ``close`` turns everything off.

    :param store: the game record (durable).
    :param readers: slot readers covering both slots.
    :param identifier: maps tokens to pieces (key table, tag registry, text).
    :param signals: LEDs and buzzer.
    :param sim: the simulator's slots when running without hardware.
    :param registry: the RFID tag registry, when enrollment is possible.
    """

    def __init__(
        self,
        store: GameStore,
        readers: Sequence[SlotReader],
        identifier: PieceIdentifier,
        signals: Signals,
        *,
        tunes: Mapping[str, Tune],
        config: Any = None,
        sim: Any = None,
        registry: Any = None,
        mode: str = "hardware",
        extra_closers: Sequence[Callable[[], None]] = (),
    ) -> None:
        covered = {slot for reader in readers for slot in reader.slots}
        if covered != {Role.ATTACKER, Role.DEFENDER}:
            raise ValueError("the readers must cover both slots")
        self.store = store
        self.readers = list(readers)
        self.identifier = identifier
        self.signals = signals
        self.tunes = dict(tunes)
        self.config = config
        self.sim = sim
        self.registry = registry
        self.mode = mode
        self._closers = list(extra_closers)
        self._events: queue.Queue[Any] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name="arbiter", daemon=True)
        self._lock = threading.Lock()
        self._subscribers: list[queue.Queue[dict[str, Any]]] = []
        self._readings: dict[Role, SlotReading] = {
            role: SlotReading(role, SlotState.EMPTY) for role in Role
        }
        self._state = DeviceState.GAME_OVER if store.current.over else DeviceState.IDLE
        self._armed = True  # False after a verdict until both slots are empty
        played = store.current.challenges
        self._last_verdict: str | None = (
            played[-1].verdict.survivor.public_word if played else None
        )
        self._message = ""
        self._seq = 0
        self._status: dict[str, Any] = {}
        self._started = False
        self._closed = False
        self._enrollment: Any = None
        self._enroll_last = ""
        self.on_decided: Callable[[float], None] | None = None  # benchmark hook
        self.new_game_button: Any = None
        self._output_listeners: list[Callable[[dict[str, Any]], None]] = []
        self._publish()  # a status exists from the start

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        """Start the worker and the readers; the ready signal plays."""
        if self._started:
            return
        self._started = True
        self._publish()
        self._worker.start()
        for reader in self.readers:
            reader.start(self._on_reading)
        self._call(self._announce_ready)

    def _announce_ready(self) -> None:
        if self._state is DeviceState.GAME_OVER:
            self.signals.game_over()
        elif self._state is not DeviceState.FAULT:
            self.signals.ready()

    def close(self) -> None:
        """Stop reading, turn LEDs and buzzer off, close the record. Safe twice."""
        if self._closed:
            return
        self._closed = True
        for reader in self.readers:
            with contextlib.suppress(Exception):
                reader.close()
        self.signals.off()  # cuts a playing tune short so the worker can stop
        if self._worker.is_alive():
            self._events.put(_STOP)
            self._worker.join(timeout=5)
        for closer in self._closers:
            with contextlib.suppress(Exception):
                closer()
        self.signals.close()
        self.store.close()

    # -- inputs (any thread) ----------------------------------------------

    def _on_reading(self, reading: SlotReading) -> None:
        self._events.put(reading)

    def _call(self, action: Callable[[], Any], timeout: float = COMMAND_TIMEOUT) -> Any:
        """Run ``action`` on the worker thread and return its result (or raise).

        :raises DeviceError: shut down, or the worker stayed busy past ``timeout``
            (the command is then withdrawn and never runs).
        """
        if self._closed:
            raise DeviceError("the arbiter is shut down")
        if threading.current_thread() is self._worker:
            return action()
        done: Future[Any] = Future()
        self._events.put(_Command(action, done))
        try:
            return done.result(timeout=timeout)
        except FutureTimeout:
            if done.cancel():
                raise DeviceError("the device is busy (a tune or self-test): try again") from None
            return done.result()  # it started just now: it will finish

    def new_game(self) -> int:
        """Start a new game (one still on is recorded as abandoned); returns its id."""
        return int(self._call(self._do_new_game))

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
        self._call(lambda: self._do_declare_end(kind, winner, game_id))

    # -- public state (any thread) ----------------------------------------

    def status(self) -> dict[str, Any]:
        """The public status: never a rank or a tag."""
        with self._lock:
            return dict(self._status)

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        """A queue that receives every new status (oldest dropped if it falls behind)."""
        q: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=SUBSCRIBER_QUEUE)
        with self._lock:
            self._subscribers.append(q)
            q.put_nowait(dict(self._status))
        return q

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._subscribers.remove(q)

    def add_output_listener(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call ``listener`` with :meth:`outputs` after every change of LEDs or buzzer."""
        self._output_listeners.append(listener)

    def outputs_changed(self, snapshot: Any) -> None:
        """Signals' ``on_change`` hook: pass the snapshot on to the listeners."""
        if not self._output_listeners:
            return
        data = snapshot.to_dict()
        for listener in list(self._output_listeners):
            try:
                listener(data)
            except Exception:
                log.exception("output listener failed")

    def is_alive(self) -> bool:
        """True while the worker thread runs (the watchdog's health check)."""
        return self._worker.is_alive()

    def outputs(self) -> dict[str, Any]:
        """LEDs and buzzer as the simulator panel shows them."""
        return self.signals.snapshot().to_dict()

    def tunes_json(self) -> dict[str, list[list[float | None]]]:
        """Each tune as ``[frequency or None, seconds]`` pairs, for the browser."""
        return {
            name: [[note.frequency, note.seconds] for note in tune.notes]
            for name, tune in self.tunes.items()
        }

    @property
    def state(self) -> DeviceState:
        return self._state

    def _publish(self) -> None:
        game = self.store.current
        view = game.public_view()
        faults = [r.detail for r in self._readings.values() if r.state is SlotState.FAULT]
        with self._lock:
            self._seq += 1
            self._status = {
                "state": self._state.value,
                "game_id": game.id,
                "challenge_count": view["challenge_count"],
                "started_at": view["started_at"],
                "eliminated": view["eliminated"],
                "last_verdict": self._last_verdict,
                "verdicts": [
                    {k: v[k] for k in ("number", "attacker_side", "result")}
                    for v in view["verdicts"]
                ],
                "slots": {role.value: self._readings[role].state.value for role in Role},
                "readers": {"ok": not faults, "detail": "; ".join(dict.fromkeys(faults))},
                "ending": view["ending"],
                "message": self._message,
                "mode": self.mode,
                "enrolling": self._enrollment is not None,
                "seq": self._seq,
            }
            status = self._status
            for q in self._subscribers:
                while True:
                    try:
                        q.put_nowait(status)
                        break
                    except queue.Full:
                        with contextlib.suppress(queue.Empty):
                            q.get_nowait()

    # -- the worker --------------------------------------------------------

    def _run(self) -> None:
        while True:
            event = self._events.get()
            if event is _STOP:
                return
            try:
                self._handle(event)
            except Exception:  # the device must keep running whatever one event does
                log.exception("unexpected error handling an event")
                with contextlib.suppress(Exception):
                    self._set_fault_message("internal error: see the log")

    def _handle(self, event: Any) -> None:
        if isinstance(event, _Command):
            if not event.done.set_running_or_notify_cancel():
                return  # the caller gave up waiting: the command is withdrawn
            try:
                result = event.action()
            except Exception as exc:
                self._publish()
                event.done.set_exception(exc)
            else:
                self._publish()  # before the caller wakes: its next status() sees the change
                event.done.set_result(result)
            return
        assert isinstance(event, SlotReading)
        self._readings[event.slot] = event
        self._step()
        self._publish()

    def _set_fault_message(self, message: str) -> None:
        self._message = message
        self._publish()

    def _step(self) -> None:
        """Decide what the current readings mean."""
        if self._enrollment is not None:
            self._enroll_step()
            return
        readings = self._readings
        faults = [r for r in readings.values() if r.state is SlotState.FAULT]
        if faults:
            if self._state is not DeviceState.FAULT:
                self._state = DeviceState.FAULT
                self._message = "a slot reader is not working"
                log.warning("reader fault: %s", "; ".join(r.detail for r in faults))
                self._publish()
                self.signals.fault()
            return
        if self._state is DeviceState.FAULT:
            log.info("fault cleared")
            self._message = ""
            self._state = DeviceState.GAME_OVER if self.store.current.over else DeviceState.IDLE
            self._armed = all(r.state is SlotState.EMPTY for r in readings.values())
            self.signals.clear()
            if self.store.current.over:
                self.signals.game_over()

        empty = all(r.state is SlotState.EMPTY for r in readings.values())
        if empty:
            self._armed = True
            self._message = ""
            if self._state is DeviceState.GAME_OVER or self.store.current.over:
                self._state = DeviceState.GAME_OVER
            else:
                if self._state is not DeviceState.IDLE:
                    self.signals.clear()
                self._state = DeviceState.IDLE
            return

        invalid = [r for r in readings.values() if r.state is SlotState.INVALID]
        if invalid:
            self._refuse("a key is not fully seated or cannot be read")
            return
        if not self._armed:
            return  # a verdict is showing: wait for both slots to empty
        present = [r for r in readings.values() if r.state is SlotState.PRESENT]
        if len(present) < 2:
            if self._state is not DeviceState.GAME_OVER:
                self._state = DeviceState.WAITING
                self.signals.waiting()
            return
        self._challenge()

    def _refuse(self, public_reason: str) -> None:
        log.info("challenge refused: %s", public_reason)
        self._message = public_reason
        if self._state is not DeviceState.GAME_OVER:
            self._state = DeviceState.WAITING
        self._publish()
        self.signals.error()
        if self._state is DeviceState.GAME_OVER:
            self.signals.game_over()

    def _identify(self) -> tuple[Identity, Identity] | None:
        a = self._readings[Role.ATTACKER]
        d = self._readings[Role.DEFENDER]
        assert a.token is not None and d.token is not None
        try:
            return self.identifier.identify(a.token), self.identifier.identify(d.token)
        except UnknownPieceError as exc:
            log.debug("unknown piece: %s", exc)
            self._refuse(UnknownPieceError.public_reason)
            return None

    def _challenge(self) -> None:
        tokens = (self._readings[Role.ATTACKER].token, self._readings[Role.DEFENDER].token)
        t_valid = time.perf_counter()
        identities = self._identify()
        if identities is None:
            return
        attacker, defender = identities
        if tokens[0] == tokens[1] and attacker.tag is not None:
            self._refuse(SameTagError.public_reason)
            return
        try:
            self.store.current.check(Contenders(attacker, defender))
        except ChallengeRefusedError as exc:
            log.debug("refused: %s", exc)
            self._refuse(exc.public_reason)
            return
        self._state = DeviceState.DECIDING
        self._message = ""
        self._publish()
        self.signals.battle()  # identical for every verdict; takes the same time
        if self._closed:
            return  # shut down mid-phrase: no verdict will show, so record nothing
        if self._disturbed():
            self._refuse("a piece was moved while deciding: nothing recorded")
            # Start afresh from empty slots, so the moved pair is never judged half-seen.
            self._armed = all(r.state is SlotState.EMPTY for r in self._readings.values())
            return
        try:
            challenge = self.store.accept(Contenders(attacker, defender))
        except ChallengeRefusedError as exc:
            self._refuse(exc.public_reason)
            return
        except StoreError as exc:
            log.error("could not record the challenge: %s", exc)
            self._state = DeviceState.FAULT
            self._message = "the game record cannot be written: nothing recorded"
            self._publish()
            self.signals.fault()
            return
        self._armed = False
        self.signals.result(challenge.verdict.survivor)
        if self.on_decided is not None:
            self.on_decided(time.perf_counter() - t_valid)
        self._last_verdict = challenge.verdict.survivor.public_word
        self._state = DeviceState.RESULT
        log.info(
            "game %d challenge %d: %s",
            self.store.current.id,
            challenge.number,
            _verdict_words(challenge.verdict.survivor),
        )
        if challenge.verdict.flag_fell:
            self._publish()
            ending = self.store.current.ending
            assert ending is not None and ending.winner is not None
            log.info("a Flag fell: game %d over, %s wins", self.store.current.id,
                     ending.winner.title)
            self.signals.taps()
            self._state = DeviceState.GAME_OVER
            self.signals.game_over()

    def _disturbed(self) -> bool:
        """Take in readings that came during the battle phrase; True if a piece moved."""
        moved = False
        pending: list[Any] = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if isinstance(event, SlotReading):
                self._readings[event.slot] = event
                moved = True
            else:
                pending.append(event)
        for event in pending:
            self._events.put(event)
        # Readers report only changes, so any reading now is a piece that moved.
        return moved

    # -- commands (worker thread) -----------------------------------------

    def _do_new_game(self) -> int:
        if self._enrollment is not None:
            raise DeviceError("finish or stop enrollment first")
        try:
            game = self.store.new_game()
        except StoreError as exc:
            log.error("could not start a new game: %s", exc)
            raise DeviceError(f"the game record cannot be written: {exc}") from None
        log.info("new game %d", game.id)
        self._last_verdict = None
        self._message = ""
        empty = all(r.state is SlotState.EMPTY for r in self._readings.values())
        self._armed = empty
        if self._state is not DeviceState.FAULT:
            self._state = DeviceState.IDLE if empty else DeviceState.WAITING
            if not empty:
                self._message = "take both pieces out to begin"
            self.signals.ready()
        return game.id

    def _do_declare_end(self, kind: EndingKind, winner: Side | None, game_id: int | None) -> None:
        current = self.store.current.id
        if game_id is not None and game_id != current:
            raise WrongGameError(f"game {game_id} is not the current game ({current})")
        try:
            ending = self.store.declare_end(kind, winner)
        except StoreError as exc:
            log.error("could not record the ending: %s", exc)
            raise DeviceError(f"the game record cannot be written: {exc}") from None
        log.info("game %d ended: %s", self.store.current.id, ending.kind.value)
        if self._state is not DeviceState.FAULT:
            self._state = DeviceState.GAME_OVER
            self.signals.game_over()

    # -- enrollment (RFID) -------------------------------------------------

    def start_enrollment(self, only: str | None = None) -> dict[str, Any]:
        """Enter enrollment: tags in the ATTACKER slot are enrolled, not judged.

        :param only: a physical piece (``W:PVT#3``) to re-enroll; all missing ones if None.
        :raises DeviceError: if this device has no tag registry.
        """
        if self.registry is None:
            raise DeviceError("enrollment needs an RFID reader (reader.kind rdm6300 or mcu)")
        from arbiter.device.enrollment import EnrollmentSession
        from arbiter.rules.army import PhysicalPiece

        target = PhysicalPiece.parse(only) if only else None

        def begin() -> None:
            self._enrollment = EnrollmentSession(self.registry, only=target)
            self._enroll_last = ""

        self._call(begin)
        return self.enrollment_status()

    def stop_enrollment(self) -> None:
        def stop() -> None:
            self._enrollment = None
            self._armed = all(r.state is SlotState.EMPTY for r in self._readings.values())

        self._call(stop)

    def enrollment_status(self) -> dict[str, Any]:
        """Admin only: prompts name pieces."""
        session = self._enrollment
        if session is None:
            return {"active": False, "prompt": "", "progress": [0, 0], "last": self._enroll_last}
        done, total = session.progress
        return {
            "active": True,
            "prompt": session.prompt(),
            "progress": [done, total],
            "last": self._enroll_last,
        }

    def _enroll_step(self) -> None:
        session = self._enrollment
        reading = self._readings[session.slot]
        if reading.state is not SlotState.PRESENT or reading.token is None:
            return
        if session.done:
            return
        result = session.offer(reading.token)
        self._enroll_last = result.message
        if result.accepted:
            self.signals.ready()
        else:
            self.signals.error()
        if session.done:
            self._enrollment = None

    # -- self-test ---------------------------------------------------------

    def selftest(self, *, tunes: Sequence[str] | None = None, force: bool = False) -> list[str]:
        """Blink each LED, play each tune, report each slot's reading.

        Runs on the worker, so no challenge is decided while the outputs are under test.

        :param force: test even during a game (the command line, with no players waiting).
        :raises DeviceError: an unknown tune; or during a game that has begun, unless
            ``force`` (it would flash and play Taps at the table).
        """
        game = self.store.current
        unknown = [name for name in tunes or () if name not in self.tunes]
        if unknown:
            raise DeviceError(f"no tune {unknown[0]!r}; tunes: {', '.join(self.tunes)}")
        if game.challenges and not game.over and not force:
            raise DeviceError(
                "a game is in progress: end it or start a new game before the self-test"
            )
        report: list[str] = self._call(lambda: self._selftest(tunes), timeout=180)
        return report

    def _selftest(self, tunes: Sequence[str] | None) -> list[str]:
        lines: list[str] = []
        for survivor in (Survivor.ATTACKER, Survivor.DEFENDER):
            self.signals.result(survivor)
            time.sleep(0.6)
            lines.append(f"LED {survivor.value}: lit")
        self.signals.waiting()
        time.sleep(1.2)
        lines.append("LED status: blinked")
        self.signals.clear()
        for name in tunes if tunes is not None else sorted(self.tunes):
            self.signals.play(name)
            lines.append(f"tune {name}: played ({self.tunes[name].duration:.1f} s)")
        for role in Role:
            reading = self._readings[role]
            text = reading.state.value
            if reading.detail:
                text += f" ({reading.detail})"
            lines.append(f"slot {role.value}: {text}")
        self._restore_signals()
        return lines

    def _restore_signals(self) -> None:
        """Show the current state again after the self-test borrowed the outputs."""
        if self._state is DeviceState.GAME_OVER:
            self.signals.game_over()
        elif self._state is DeviceState.FAULT:
            self.signals.fault()
        elif self._state is DeviceState.RESULT and self._last_verdict:
            self.signals.result(
                Survivor.NONE if self._last_verdict == "split" else Survivor(self._last_verdict)
            )

    def reader_faults(self) -> list[str]:
        return [
            f"{r.slot.value}: {r.detail or 'fault'}"
            for r in self._readings.values()
            if r.state is SlotState.FAULT
        ]


def _verdict_words(survivor: Survivor) -> str:
    return {
        Survivor.ATTACKER: "attacker survives",
        Survivor.DEFENDER: "defender survives",
        Survivor.NONE: "split, both eliminated",
    }[survivor]
