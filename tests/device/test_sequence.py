"""The challenge sequence driven by hand: fake readings, fake signals, a fake clock, no threads.

Expected verdicts and refusals come from RULES.md (the Private takes the Spy,
the Spy takes a General, equal ranks split, a fallen Flag ends the game,
pieces of one side never challenge each other).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from arbiter.device.errors import DeviceError
from arbiter.device.sequence import ChallengeSequence, DeviceState
from arbiter.drivers.identify import TextIdentifier
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.errors import WrongGameError
from arbiter.rules.game import EndingKind
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role, Survivor
from arbiter.storage.journal import GameStore, StoreError
from tests.support.clock import FakeClock

A, D = Role.ATTACKER, Role.DEFENDER


class FakeSignals:
    """Records each signal; ``on_battle`` runs while the battle phrase "plays"."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.on_battle: Callable[[], None] | None = None

    def ready(self) -> None:
        self.calls.append("ready")

    def waiting(self) -> None:
        self.calls.append("waiting")

    def battle(self) -> None:
        self.calls.append("battle")
        if self.on_battle is not None:
            self.on_battle()

    def result(self, survivor: Survivor) -> None:
        self.calls.append(f"result:{survivor.value}")

    def taps(self) -> None:
        self.calls.append("taps")

    def begin_taps(self) -> None:
        self.calls.append("taps")

    def game_over(self) -> None:
        self.calls.append("game_over")

    def error(self) -> None:
        self.calls.append("error")

    def fault(self) -> None:
        self.calls.append("fault")

    def clear(self) -> None:
        self.calls.append("clear")

    def since(self, mark: int) -> list[str]:
        return self.calls[mark:]


class Rig:
    def __init__(self, store: GameStore) -> None:
        self.store = store
        self.signals = FakeSignals()
        self.clock = FakeClock(start=100.0)
        self.changes: list[DeviceState] = []
        self.pending: list[SlotReading] = []
        self.sequence = ChallengeSequence(
            store,
            TextIdentifier(),
            self.signals,
            clock=self.clock,
            on_change=lambda: self.changes.append(self.sequence.state),
            pending_readings=self._take_pending,
        )

    def _take_pending(self) -> list[SlotReading]:
        taken, self.pending = self.pending, []
        return taken

    def seat(self, role: Role, piece: str) -> None:
        self.sequence.take(SlotReading(role, SlotState.PRESENT, token=piece))

    def empty(self, *roles: Role) -> None:
        for role in roles or (A, D):
            self.sequence.take(SlotReading(role, SlotState.EMPTY))

    def state(self) -> DeviceState:
        # A call, not an attribute: mypy would keep an attribute narrowed between steps.
        return self.sequence.state

    def challenges(self) -> int:
        return len(self.store.current.challenges)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GameStore]:
    with GameStore(tmp_path / "data") as store:
        yield store


@pytest.fixture
def rig(store: GameStore) -> Rig:
    return Rig(store)


def test_sequence_one_seated_piece_waits(rig: Rig) -> None:
    assert rig.state() is DeviceState.IDLE
    rig.seat(A, "W:PVT")
    assert rig.state() is DeviceState.WAITING
    assert rig.signals.calls == ["waiting"]
    assert rig.challenges() == 0


def test_sequence_pair_decided_and_recorded(rig: Rig) -> None:
    rig.seat(A, "W:PVT")
    mark = len(rig.signals.calls)
    rig.seat(D, "B:SPY")  # the Private takes the Spy
    assert rig.state() is DeviceState.RESULT
    assert rig.signals.since(mark) == ["battle", "result:attacker"]
    assert rig.changes == [DeviceState.DECIDING]  # shown before the phrase plays
    assert rig.sequence.last_verdict == "attacker"
    assert rig.challenges() == 1
    assert rig.sequence.message == ""


@pytest.mark.parametrize(
    ("attacker", "defender", "word"),
    [("W:SPY", "B:5*G", "attacker"), ("B:5*G", "W:SPY", "defender"), ("W:COL", "B:COL", "split")],
)
def test_sequence_verdict_follows_the_rules(
    rig: Rig, attacker: str, defender: str, word: str
) -> None:
    rig.seat(A, attacker)
    rig.seat(D, defender)
    assert rig.sequence.last_verdict == word
    survivor = "none" if word == "split" else word
    assert rig.signals.calls[-1] == f"result:{survivor}"


def test_sequence_pieces_left_seated_never_count_twice(rig: Rig) -> None:
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    rig.empty(D)
    rig.seat(D, "B:CPT")  # a swapped piece is not a new challenge while one stays seated
    assert rig.challenges() == 1
    assert rig.state() is DeviceState.RESULT
    mark = len(rig.signals.calls)
    rig.empty(A)
    rig.empty(D)
    assert rig.state() is DeviceState.IDLE
    assert rig.signals.since(mark) == ["clear"]  # the verdict LEDs go dark
    rig.seat(A, "W:COL")
    rig.seat(D, "B:CPT")
    assert rig.challenges() == 2


def test_sequence_same_side_refused_records_nothing(rig: Rig) -> None:
    rig.seat(A, "W:COL")
    rig.seat(D, "W:MAJ")
    assert "same side" in rig.sequence.message
    assert rig.state() is DeviceState.WAITING
    assert rig.signals.calls[-1] == "error"
    assert rig.challenges() == 0
    rig.seat(D, "B:MAJ")  # fixing the pair makes it a challenge
    assert rig.challenges() == 1


def test_sequence_unknown_piece_refused(rig: Rig) -> None:
    rig.seat(A, "W:COL")
    rig.seat(D, "not a piece")
    assert "not known" in rig.sequence.message
    assert rig.challenges() == 0


def test_sequence_unreadable_key_refused(rig: Rig) -> None:
    rig.seat(A, "W:COL")
    rig.sequence.take(SlotReading(D, SlotState.INVALID, detail="weight 2"))
    assert "not fully seated" in rig.sequence.message
    assert rig.signals.calls[-1] == "error"
    assert rig.challenges() == 0


def test_sequence_piece_moved_while_deciding_records_nothing(rig: Rig) -> None:
    rig.signals.on_battle = lambda: rig.pending.append(SlotReading(D, SlotState.EMPTY))
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert "moved while deciding" in rig.sequence.message
    assert rig.challenges() == 0
    assert rig.sequence.readings[D].state is SlotState.EMPTY  # the moved piece was taken in
    rig.signals.on_battle = None
    rig.seat(D, "B:MAJ")  # not judged: both slots must be emptied first
    assert rig.challenges() == 0
    rig.empty()
    rig.seat(A, "W:PVT")
    rig.seat(D, "B:PVT")
    assert rig.challenges() == 1
    assert rig.sequence.last_verdict == "split"


def test_sequence_stopped_mid_phrase_records_nothing(rig: Rig) -> None:
    rig.signals.on_battle = rig.sequence.stop
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert rig.challenges() == 0
    assert "result:attacker" not in rig.signals.calls


def test_sequence_times_valid_pair_to_verdict_on_its_clock(rig: Rig) -> None:
    seen: list[float] = []
    rig.sequence.on_decided = seen.append

    def phrase() -> None:
        rig.clock.now += 1.5

    rig.signals.on_battle = phrase
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert seen == [1.5]


def test_sequence_fallen_flag_ends_the_game(rig: Rig) -> None:
    rig.seat(A, "W:PVT")
    mark = len(rig.signals.calls)
    rig.seat(D, "B:FLG")
    # Game over at once, published with its ending before Taps begins (issue 8, item 10).
    assert rig.signals.since(mark) == ["battle", "result:attacker", "game_over", "taps"]
    assert rig.changes[-1] is DeviceState.GAME_OVER
    assert rig.state() is DeviceState.GAME_OVER
    ending = rig.store.current.ending
    assert ending is not None and ending.kind is EndingKind.FLAG_CAPTURED
    assert ending.winner is Side.WHITE
    rig.empty()
    assert rig.state() is DeviceState.GAME_OVER
    mark = len(rig.signals.calls)
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert "game is over" in rig.sequence.message
    assert rig.state() is DeviceState.GAME_OVER
    assert rig.signals.since(mark) == ["error", "game_over"]
    assert rig.challenges() == 1


def test_sequence_fault_entered_and_cleared(rig: Rig) -> None:
    rig.sequence.take(SlotReading(A, SlotState.FAULT, detail="port gone"))
    assert rig.state() is DeviceState.FAULT
    assert rig.sequence.message == "a slot reader is not working"
    assert rig.changes == [DeviceState.FAULT]
    assert rig.signals.calls == ["fault"]
    assert rig.sequence.reader_faults() == ["attacker: port gone"]
    rig.sequence.take(SlotReading(D, SlotState.FAULT, detail="also gone"))
    assert rig.signals.calls == ["fault"]  # signalled once
    rig.empty()
    assert rig.state() is DeviceState.IDLE
    assert rig.sequence.message == ""
    assert rig.signals.calls == ["fault", "clear"]


def test_sequence_fault_clears_to_game_over(rig: Rig) -> None:
    rig.seat(A, "W:PVT")
    rig.seat(D, "B:FLG")
    rig.sequence.take(SlotReading(A, SlotState.FAULT))
    mark = len(rig.signals.calls)
    rig.empty()
    assert rig.state() is DeviceState.GAME_OVER
    assert rig.signals.since(mark) == ["clear", "game_over"]


def test_sequence_unwritable_record_is_a_fault(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*args: object) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(rig.store, "accept", disk_full)
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert rig.state() is DeviceState.FAULT
    assert "cannot be written" in rig.sequence.message
    assert rig.signals.calls[-1] == "fault"


def test_sequence_show_puts_each_state_on_the_outputs(rig: Rig) -> None:
    rig.sequence.show(greet=True)
    assert rig.signals.calls == ["ready"]
    rig.seat(A, "W:COL")
    rig.seat(D, "B:COL")
    mark = len(rig.signals.calls)
    rig.sequence.show()
    assert rig.signals.since(mark) == ["result:none"]  # a split shows again
    rig.empty()
    mark = len(rig.signals.calls)
    rig.sequence.show()
    assert rig.signals.since(mark) == ["clear"]
    rig.sequence.take(SlotReading(A, SlotState.FAULT))
    mark = len(rig.signals.calls)
    rig.sequence.show(greet=True)  # at start a fault has sounded already
    rig.sequence.show()
    assert rig.signals.since(mark) == ["fault"]


def test_sequence_new_game_with_pieces_seated_waits_for_empty_slots(rig: Rig) -> None:
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert rig.sequence.new_game() == 2
    assert rig.state() is DeviceState.WAITING
    assert rig.sequence.message == "take both pieces out to begin"
    assert rig.sequence.last_verdict is None
    rig.seat(D, "B:CPT")
    assert rig.challenges() == 0  # the seated pair is not judged
    rig.empty()
    assert rig.state() is DeviceState.IDLE
    rig.seat(A, "W:COL")
    rig.seat(D, "B:CPT")
    assert rig.challenges() == 1


def test_sequence_declared_ending_checks_the_game(rig: Rig) -> None:
    with pytest.raises(WrongGameError):
        rig.sequence.declare_end(EndingKind.DRAW, None, game_id=7)
    assert rig.store.current.ending is None
    rig.sequence.declare_end(EndingKind.RESIGNATION, Side.BLACK, game_id=1)
    assert rig.state() is DeviceState.GAME_OVER
    assert rig.signals.calls[-1] == "game_over"


def test_sequence_new_game_on_unwritable_record_keeps_the_game(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(assignment: object = None) -> None:
        raise StoreError("disk full")

    monkeypatch.setattr(rig.store, "new_game", disk_full)
    with pytest.raises(DeviceError, match="cannot be written"):
        rig.sequence.new_game()
    assert rig.store.current.id == 1


def test_sequence_resumes_the_last_verdict_and_an_ended_game(store: GameStore) -> None:
    first = Rig(store)
    first.seat(A, "W:PVT")
    first.seat(D, "B:FLG")
    again = Rig(store)  # a restart on the same record
    assert again.sequence.state is DeviceState.GAME_OVER
    assert again.sequence.last_verdict == "attacker"


def test_sequence_noted_readings_are_never_judged(rig: Rig) -> None:
    rig.sequence.note(SlotReading(A, SlotState.PRESENT, token="W:COL"))
    rig.sequence.note(SlotReading(D, SlotState.PRESENT, token="B:MAJ"))
    assert rig.challenges() == 0
    assert rig.signals.calls == []
    rig.sequence.rearm()  # pieces still seated: wait for both slots to empty
    rig.seat(D, "B:MAJ")
    assert rig.challenges() == 0


def test_sequence_old_refusal_is_not_shown_under_game_over(rig: Rig) -> None:
    """Issue 8, item 10: "a piece was moved while deciding" stayed under "Game over"."""
    rig.signals.on_battle = lambda: rig.pending.append(SlotReading(D, SlotState.EMPTY))
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert "moved while deciding" in rig.sequence.message
    rig.signals.on_battle = None
    rig.sequence.declare_end(EndingKind.RESIGNATION, Side.WHITE, None)
    assert rig.state() is DeviceState.GAME_OVER
    assert rig.sequence.message == ""


def test_sequence_abort_with_slots_emptied_is_idle_and_next_pair_starts_clean(
    rig: Rig,
) -> None:
    def pull_both() -> None:
        rig.pending.extend([SlotReading(A, SlotState.EMPTY), SlotReading(D, SlotState.EMPTY)])

    rig.signals.on_battle = pull_both
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    assert rig.state() is DeviceState.IDLE  # both slots are empty: nothing to wait for
    assert "moved while deciding" in rig.sequence.message
    rig.signals.on_battle = None
    rig.seat(A, "W:PVT")  # a new pair begins: the old refusal is stale
    assert rig.state() is DeviceState.WAITING
    assert rig.sequence.message == ""


def test_sequence_abort_with_both_seated_says_empty_both_slots(rig: Rig) -> None:
    """Issue 8, item 10: after an aborted challenge with both pieces seated, say what to do."""

    def swap() -> None:
        rig.pending.extend(
            [SlotReading(D, SlotState.EMPTY), SlotReading(D, SlotState.PRESENT, token="B:LTC")]
        )

    rig.signals.on_battle = swap
    rig.seat(A, "W:COL")
    rig.seat(D, "B:MAJ")
    rig.signals.on_battle = None
    assert rig.state() is DeviceState.WAITING
    assert "take both pieces out" in rig.sequence.message
    rig.sequence.report("")  # the message can be lost (shown, then cleared)...
    rig.seat(A, "W:COL")  # ...the next reading of seated pieces says it again
    assert rig.state() is DeviceState.WAITING
    assert "take both pieces out" in rig.sequence.message
    assert rig.challenges() == 0
