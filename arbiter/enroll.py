"""Guided tag enrollment: put each physical piece in a slot, one after another.

:class:`EnrollmentSession` is the logic, driven by the CLI and the web admin
page alike: it walks through the pieces that have no tag yet (so a session
can be stopped and resumed), or re-enrolls one piece. Admin-only: its
prompts and results name pieces openly.

:func:`run_enrollment_console` drives a session from a slot reader in a
terminal.
"""

from __future__ import annotations

import enum
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from arbiter.army import PhysicalPiece, all_physical_pieces
from arbiter.readers.base import SlotReader, SlotReading, SlotState
from arbiter.registry import (
    InvalidTagError,
    TagAlreadyEnrolledError,
    TagRegistry,
    normalize_tag,
)
from arbiter.verdict import Role


class EnrollOutcome(enum.Enum):
    """What offering a tag did."""

    ENROLLED = "enrolled"  # the current piece now has this tag; on to the next
    ALREADY_THIS_PIECE = "already_this_piece"  # the tag already was this piece's; on to the next
    TAG_BELONGS_TO_OTHER = "tag_belongs_to_other"  # refused: the tag is another piece's
    INVALID_TAG = "invalid_tag"  # refused: not a tag id
    NOTHING_TO_ENROLL = "nothing_to_enroll"  # the session is done


@dataclass(frozen=True)
class EnrollResult:
    """The outcome of one offered tag; ``piece`` is the piece being enrolled,
    ``other`` the piece the tag already belongs to (TAG_BELONGS_TO_OTHER)."""

    outcome: EnrollOutcome
    tag: str
    piece: PhysicalPiece | None = None
    other: PhysicalPiece | None = None
    replaced: str | None = None

    @property
    def accepted(self) -> bool:
        """True when the session moved on to the next piece."""
        return self.outcome in (EnrollOutcome.ENROLLED, EnrollOutcome.ALREADY_THIS_PIECE)

    @property
    def message(self) -> str:
        """One line for the admin."""
        if self.outcome is EnrollOutcome.ENROLLED:
            extra = f", replacing tag {self.replaced}" if self.replaced else ""
            return f"{self.piece} enrolled with tag {self.tag}{extra}"
        if self.outcome is EnrollOutcome.ALREADY_THIS_PIECE:
            return f"tag {self.tag} already is {self.piece}"
        if self.outcome is EnrollOutcome.TAG_BELONGS_TO_OTHER:
            return (
                f"tag {self.tag} already belongs to {self.other}: use another tag "
                f"for {self.piece}, or forget that tag first"
            )
        if self.outcome is EnrollOutcome.INVALID_TAG:
            return f"not a tag id: {self.tag!r}"
        return "nothing left to enroll"


class EnrollmentSession:
    """A guided walk through the pieces that still need a tag.

    :param registry: where tags are stored (every accepted tag is saved at once).
    :param only: re-enroll just this piece: its new tag replaces the old one.
    :param slot: the slot the pieces are put in (named in the prompt).
    """

    def __init__(
        self,
        registry: TagRegistry,
        *,
        only: PhysicalPiece | None = None,
        slot: Role = Role.ATTACKER,
    ) -> None:
        self._registry = registry
        self._only = only
        self._slot = slot
        self._queue: list[PhysicalPiece] = [only] if only else registry.pieces_missing()
        self._finished_only = False

    @property
    def slot(self) -> Role:
        return self._slot

    @property
    def current(self) -> PhysicalPiece | None:
        """The piece to put in the slot now, or None when done."""
        if self._only is not None:
            return None if self._finished_only else self._only
        # Resumable: a piece enrolled meanwhile (another session) is skipped.
        while self._queue and self._registry.tag_of(self._queue[0]) is not None:
            self._queue.pop(0)
        return self._queue[0] if self._queue else None

    @property
    def done(self) -> bool:
        return self.current is None

    @property
    def progress(self) -> tuple[int, int]:
        """(enrolled, total): of all 42 pieces, or 0/1 or 1/1 when re-enrolling one."""
        if self._only is not None:
            return (1 if self._finished_only else 0, 1)
        pieces = all_physical_pieces()
        return (len(pieces) - len(self._registry.pieces_missing()), len(pieces))

    def prompt(self) -> str:
        """What to do next, for the admin: ``Put W:5*G in the ATTACKER slot``."""
        piece = self.current
        if piece is None:
            enrolled, total = self.progress
            return f"Done: {enrolled} of {total} pieces have a tag"
        text = f"Put {piece} in the {self._slot.name} slot"
        if piece.rank.count > 1:
            text += f" (any {piece.side.title} {piece.rank.full_name} without a tag yet)"
        return text

    def offer(self, tag: str) -> EnrollResult:
        """The tag read in the slot: enroll it to the current piece if it is free."""
        piece = self.current
        if piece is None:
            return EnrollResult(EnrollOutcome.NOTHING_TO_ENROLL, tag)
        try:
            key = normalize_tag(tag)
            owner = self._registry.lookup_physical(key)
            if owner == piece:
                result = EnrollResult(EnrollOutcome.ALREADY_THIS_PIECE, key, piece)
            elif self._only is not None:
                replaced = self._registry.reenroll(piece, key)
                result = EnrollResult(EnrollOutcome.ENROLLED, key, piece, replaced=replaced)
            else:
                self._registry.enroll(key, piece)
                result = EnrollResult(EnrollOutcome.ENROLLED, key, piece)
        except InvalidTagError:
            return EnrollResult(EnrollOutcome.INVALID_TAG, tag, piece)
        except TagAlreadyEnrolledError as exc:
            return EnrollResult(EnrollOutcome.TAG_BELONGS_TO_OTHER, exc.tag, piece, exc.other)
        self._advance()
        return result

    def skip(self) -> PhysicalPiece | None:
        """Leave the current piece without a tag (for this session); returns it."""
        piece = self.current
        if piece is not None:
            self._advance()
        return piece

    def _advance(self) -> None:
        if self._only is not None:
            self._finished_only = True
        elif self._queue:
            self._queue.pop(0)


_Event = tuple[str, object]


def run_enrollment_console(
    session: EnrollmentSession,
    reader: SlotReader,
    input_fn: Callable[[], str] = input,
    print_fn: Callable[[str], object] = print,
) -> tuple[int, int]:
    """Drive ``session`` from ``reader`` in a terminal; returns the final progress.

    Starts the reader and closes it at the end. For each piece: prints the
    prompt, waits for a tag in the session's slot, offers it, prints the
    result, then waits for the slot to be empty before the next prompt.
    Typed commands, read by ``input_fn`` on a daemon thread (which may still
    be waiting for a line after this returns): ``s`` skips the piece, ``q``
    quits, Enter repeats the prompt. Returns when done or on ``q``.
    """
    events: queue.Queue[_Event] = queue.Queue()

    def on_reading(reading: SlotReading) -> None:
        if reading.slot is session.slot:
            events.put(("reading", reading))

    def read_commands() -> None:
        while True:
            try:
                line = input_fn()
            except (EOFError, OSError):
                return
            events.put(("command", line.strip().lower()))

    threading.Thread(target=read_commands, name="enroll input", daemon=True).start()
    print_fn("Enrollment: s + Enter skips a piece, q + Enter quits.")
    reader.start(on_reading)
    try:
        need_empty = False
        prompted = False
        while not session.done:
            if not need_empty and not prompted:
                enrolled, total = session.progress
                print_fn(f"[{enrolled}/{total}] {session.prompt()}")
                prompted = True
            kind, value = events.get()
            if kind == "command":
                if value in ("q", "quit"):
                    break
                if value in ("s", "skip"):
                    print_fn(f"Skipped {session.skip()}")
                prompted = False
                continue
            assert isinstance(value, SlotReading)
            if value.state is SlotState.FAULT:
                print_fn(f"Reader fault: {value.detail or 'no detail'}")
            elif value.state is SlotState.EMPTY:
                if need_empty:
                    need_empty = False
                    prompted = False
            elif value.state is SlotState.PRESENT and not need_empty and value.token:
                result = session.offer(value.token)
                print_fn(result.message)
                if not session.done:
                    print_fn("Take the piece out of the slot")
                need_empty = True
                prompted = False
        enrolled, total = session.progress
        print_fn(f"Enrollment finished: {enrolled} of {total} pieces have a tag")
        return session.progress
    finally:
        reader.close()
