"""The guided enrollment session and its console driver (with a loop:// RDM6300 reader)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from arbiter.app.enroll_console import run_enrollment_console
from arbiter.device.enrollment import EnrollmentSession, EnrollOutcome
from arbiter.drivers.readers.rdm6300 import Rdm6300Reader, encode_frame
from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.verdict import Role
from arbiter.storage.registry import TagRegistry
from tests.support.clock import FakeClock
from tests.support.waiting import WAIT, wait_until


def pp(text: str) -> PhysicalPiece:
    return PhysicalPiece.parse(text)


def tag_for(n: int) -> str:
    return f"AB{n:08X}"


@pytest.fixture
def registry(tmp_path: Path) -> TagRegistry:
    return TagRegistry.in_directory(tmp_path)


def enroll_all_but(registry: TagRegistry, *missing: str) -> None:
    left = {pp(text) for text in missing}
    for n, piece in enumerate(all_physical_pieces()):
        if piece not in left:
            registry.enroll(tag_for(n), piece)


# -- the session -----------------------------------------------------------------


def test_enroll_session_walks_all_42_pieces_in_order(registry: TagRegistry) -> None:
    session = EnrollmentSession(registry)
    assert session.progress == (0, 42)
    seen = []
    for n in range(42):
        piece = session.current
        assert piece is not None
        seen.append(piece)
        result = session.offer(tag_for(n))
        assert result.outcome is EnrollOutcome.ENROLLED
        assert result.piece == piece
    assert seen == all_physical_pieces()
    assert session.done
    assert session.current is None
    assert session.progress == (42, 42)
    assert registry.pieces_missing() == []


def test_enroll_session_prompt_names_piece_and_slot(registry: TagRegistry) -> None:
    session = EnrollmentSession(registry)
    assert session.prompt() == "Put W:5*G in the ATTACKER slot"
    enroll_all_but(registry, "B:PVT#4")
    defender = EnrollmentSession(registry, slot=Role.DEFENDER)
    assert defender.prompt().startswith("Put B:PVT#4 in the DEFENDER slot")
    assert "Black Private" in defender.prompt()


def test_enroll_session_resumes_skipping_enrolled_pieces(registry: TagRegistry) -> None:
    enroll_all_but(registry, "W:SPY#2", "B:FLG")
    session = EnrollmentSession(registry)
    assert session.progress == (40, 42)
    assert session.current == pp("W:SPY#2")
    assert session.offer("11111111AA").outcome is EnrollOutcome.ENROLLED
    assert session.current == pp("B:FLG")


def test_enroll_session_skips_piece_enrolled_meanwhile(registry: TagRegistry) -> None:
    session = EnrollmentSession(registry)
    registry.enroll("11111111AA", pp("W:5*G"))  # e.g. from the web page
    assert session.current == pp("W:4*G")


def test_enroll_session_refuses_tag_of_another_piece(registry: TagRegistry) -> None:
    registry.enroll("11111111AA", pp("B:SPY#1"))
    session = EnrollmentSession(registry)
    result = session.offer("11111111aa")
    assert result.outcome is EnrollOutcome.TAG_BELONGS_TO_OTHER
    assert result.other == pp("B:SPY#1")
    assert result.piece == pp("W:5*G")
    assert "B:SPY#1" in result.message
    assert not result.accepted
    assert session.current == pp("W:5*G")  # still waiting for this piece


def test_enroll_session_invalid_tag_is_refused(registry: TagRegistry) -> None:
    session = EnrollmentSession(registry)
    result = session.offer("not a tag")
    assert result.outcome is EnrollOutcome.INVALID_TAG
    assert session.current == pp("W:5*G")
    assert len(registry) == 0


def test_enroll_session_skip_leaves_piece_missing(registry: TagRegistry) -> None:
    session = EnrollmentSession(registry)
    assert session.skip() == pp("W:5*G")
    assert session.current == pp("W:4*G")
    session.offer("11111111AA")
    assert registry.pieces_missing()[0] == pp("W:5*G")
    assert EnrollmentSession(registry).current == pp("W:5*G")  # a later session asks again


def test_enroll_session_offer_when_done(registry: TagRegistry) -> None:
    enroll_all_but(registry)
    session = EnrollmentSession(registry)
    assert session.done
    assert session.offer("11111111AA").outcome is EnrollOutcome.NOTHING_TO_ENROLL
    assert session.skip() is None
    assert session.prompt().startswith("Done")


def test_enroll_session_only_reenrolls_one_piece(registry: TagRegistry) -> None:
    enroll_all_but(registry)
    old = registry.tag_of(pp("W:PVT#2"))
    session = EnrollmentSession(registry, only=pp("W:PVT#2"))
    assert session.progress == (0, 1)
    assert session.prompt().startswith("Put W:PVT#2 in the ATTACKER slot")
    result = session.offer("11111111AA")
    assert result.outcome is EnrollOutcome.ENROLLED
    assert result.replaced == old
    assert old is not None and old in result.message
    assert registry.tag_of(pp("W:PVT#2")) == "11111111AA"
    assert session.done
    assert session.progress == (1, 1)


def test_enroll_session_only_with_its_own_tag(registry: TagRegistry) -> None:
    registry.enroll("11111111AA", pp("B:FLG"))
    session = EnrollmentSession(registry, only=pp("B:FLG"))
    assert session.offer("11111111AA").outcome is EnrollOutcome.ALREADY_THIS_PIECE
    assert session.done


def test_enroll_session_only_refuses_tag_of_another_piece(registry: TagRegistry) -> None:
    registry.enroll("11111111AA", pp("B:FLG"))
    registry.enroll("22222222BB", pp("W:FLG"))
    session = EnrollmentSession(registry, only=pp("B:FLG"))
    result = session.offer("22222222BB")
    assert result.outcome is EnrollOutcome.TAG_BELONGS_TO_OTHER
    assert result.other == pp("W:FLG")
    assert not session.done
    assert registry.tag_of(pp("B:FLG")) == "11111111AA"


# -- the console driver ------------------------------------------------------------


class Console:
    """Runs run_enrollment_console on a thread; typed lines and printed lines via queues."""

    def __init__(self, session: EnrollmentSession, reader: Rdm6300Reader) -> None:
        self.typed: queue.Queue[str | None] = queue.Queue()
        self.printed: queue.Queue[str] = queue.Queue()
        self.lines: list[str] = []
        self.result: tuple[int, int] | None = None
        self._thread = threading.Thread(target=self._run, args=(session, reader), daemon=True)
        self._thread.start()

    def _input(self) -> str:
        line = self.typed.get()
        if line is None:
            raise EOFError
        return line

    def _run(self, session: EnrollmentSession, reader: Rdm6300Reader) -> None:
        self.result = run_enrollment_console(session, reader, self._input, self.printed.put)

    def expect(self, text: str) -> str:
        """Wait for a printed line containing ``text``."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.printed.get(timeout=0.05)
            except queue.Empty:
                continue
            self.lines.append(line)
            if text in line:
                return line
        raise AssertionError(f"never printed {text!r}; printed {self.lines}")

    def drain(self) -> None:
        """Take in every line printed so far."""
        while not self.printed.empty():
            self.lines.append(self.printed.get())

    def finish(self) -> tuple[int, int] | None:
        self._thread.join(WAIT)
        assert not self._thread.is_alive()
        self.drain()
        return self.result


@pytest.fixture
def loop() -> Iterator[serial.SerialBase]:
    port = serial.serial_for_url("loop://", timeout=0.05)
    yield port
    port.close()


ConsoleParts = tuple[TagRegistry, Rdm6300Reader, serial.SerialBase, list["Console"]]


@pytest.fixture
def console_parts(registry: TagRegistry, loop: serial.SerialBase) -> Iterator[ConsoleParts]:
    reader = Rdm6300Reader(Role.ATTACKER, serial_factory=lambda: loop, removal_timeout=0.1)
    consoles: list[Console] = []
    yield registry, reader, loop, consoles
    for console in consoles:
        console.typed.put(None)
    reader.close()


def test_enroll_console_enrolls_pieces_from_reader(console_parts: ConsoleParts) -> None:
    registry, reader, loop, consoles = console_parts
    enroll_all_but(registry, "W:SPY#2", "B:FLG")
    console = Console(EnrollmentSession(registry), reader)
    consoles.append(console)

    console.expect("[40/42] Put W:SPY#2 in the ATTACKER slot")
    loop.write(encode_frame("62E3086CED") * 3)
    console.expect("W:SPY#2 enrolled with tag 62E3086CED")
    console.expect("Take the piece out")
    # The piece is still seated: no further enrollment until the slot is empty.
    console.expect("[41/42] Put B:FLG")
    loop.write(encode_frame("100086F444"))
    console.expect("B:FLG enrolled with tag 100086F444")
    assert console.finish() == (42, 42)
    assert console.lines[-1] == "Enrollment finished: 42 of 42 pieces have a tag"
    assert registry.lookup_physical("62E3086CED") == pp("W:SPY#2")
    assert registry.lookup_physical("100086F444") == pp("B:FLG")
    assert not reader.running  # closed by the driver


def test_enroll_console_waits_for_removal_before_next_piece(console_parts: ConsoleParts) -> None:
    registry, _, loop, consoles = console_parts
    clock = FakeClock()
    reader = Rdm6300Reader(
        Role.ATTACKER, serial_factory=lambda: loop, removal_timeout=0.1, clock=clock
    )
    enroll_all_but(registry, "W:SPY#1", "W:SPY#2")
    console = Console(EnrollmentSession(registry), reader)
    consoles.append(console)
    console.expect("Put W:SPY#1")
    loop.write(encode_frame("62E3086CED"))
    console.expect("Take the piece out")
    for frames in range(2, 8):  # the piece stays seated: its frames keep coming, 50 ms apart
        clock.advance(0.05)
        loop.write(encode_frame("62E3086CED"))
        wait_until(lambda: reader.frames == frames)  # noqa: B023 (called at once)
    console.drain()
    assert not [line for line in console.lines if "Put W:SPY#2" in line]
    clock.advance(0.1)  # the removal timeout since the last frame
    console.expect("Put W:SPY#2")
    assert [line for line in console.lines if "enrolled" in line] == [
        "W:SPY#1 enrolled with tag 62E3086CED"
    ]
    console.typed.put("q")
    assert console.finish() == (41, 42)
    reader.close()


def test_enroll_console_swapped_piece_counts_as_the_next_one(console_parts: ConsoleParts) -> None:
    registry, _, loop, consoles = console_parts
    reader = Rdm6300Reader(Role.ATTACKER, serial_factory=lambda: loop, removal_timeout=2.0)
    enroll_all_but(registry, "W:SPY#1", "W:SPY#2")
    console = Console(EnrollmentSession(registry), reader)
    consoles.append(console)
    console.expect("Put W:SPY#1")
    loop.write(encode_frame("62E3086CED"))
    console.expect("Take the piece out")
    # Another tag replacing the first with no gap: the reader reports EMPTY, then PRESENT.
    loop.write(encode_frame("100086F444"))
    console.expect("W:SPY#2 enrolled with tag 100086F444")
    assert console.finish() == (42, 42)
    reader.close()


def test_enroll_console_reports_tag_of_another_piece(console_parts: ConsoleParts) -> None:
    registry, reader, loop, consoles = console_parts
    enroll_all_but(registry, "B:FLG")
    taken = registry.tag_of(pp("W:FLG"))
    assert taken is not None
    console = Console(EnrollmentSession(registry), reader)
    consoles.append(console)
    console.expect("Put B:FLG")
    loop.write(encode_frame(taken))
    console.expect(f"tag {taken} already belongs to W:FLG")
    console.expect("Put B:FLG")  # asked again once the slot is empty
    console.typed.put("q")
    assert console.finish() == (41, 42)


def test_enroll_console_skip_and_quit(console_parts: ConsoleParts) -> None:
    registry, reader, _, consoles = console_parts
    console = Console(EnrollmentSession(registry), reader)
    consoles.append(console)
    console.expect("Put W:5*G")
    console.typed.put("s")
    console.expect("Skipped W:5*G")
    console.expect("Put W:4*G")
    console.typed.put("q")
    assert console.finish() == (0, 42)
    assert not reader.running
