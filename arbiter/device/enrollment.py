"""Guided tag enrollment: put each physical piece in a slot, one after another.

:class:`EnrollmentSession` is the logic, driven by the CLI and the web admin
page alike: it walks through the pieces that have no tag yet (so a session
can be stopped and resumed), or re-enrolls one piece. Admin-only: its
prompts and results name pieces openly.

:class:`EnrollmentMode` is the running device's side: while a session is on,
tags seated in its slot are enrolled, not judged.

:func:`arbiter.app.enroll_console.run_enrollment_console` drives a session
from a slot reader in a terminal.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from arbiter.device.errors import DeviceError
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role
from arbiter.storage.errors import InvalidTagError, TagAlreadyEnrolledError
from arbiter.storage.registry import TagRegistry, normalize_tag


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

    def choose(self, text: str) -> PhysicalPiece:
        """Order-free enrollment: the piece the admin holds, named by them, comes next.

        ``W:PVT`` is the first Private without a tag; ``W:PVT#3`` that one.

        :raises PieceError: not a piece.
        :raises DeviceError: the piece already has a tag (``--piece`` redoes one), or
            this session re-enrolls another piece.
        """
        if self._only is not None:
            raise DeviceError(f"this session re-enrolls {self._only} only")
        if "#" in text:
            wanted = [PhysicalPiece.parse(text)]
        else:
            piece = Piece.parse(text)
            wanted = [PhysicalPiece(piece, n) for n in range(1, piece.rank.count + 1)]
        free = [p for p in wanted if self._registry.tag_of(p) is None]
        if not free:
            which = wanted[0] if len(wanted) == 1 else wanted[0].piece
            raise DeviceError(f"{which} already has a tag (gg-arbiter enroll --piece "
                              f"{wanted[0]} gives one a new tag)")
        self._queue = [free[0]] + [p for p in self._queue if p != free[0]]
        return free[0]

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


class EnrollSignals(Protocol):
    """A tag taken or refused (:class:`arbiter.drivers.signals.Signals`)."""

    def ready(self) -> None: ...

    def error(self) -> None: ...


class EnrollmentMode:
    """The device's enrollment mode, around one :class:`EnrollmentSession` at a time.

    Driven on the device's worker; :meth:`status` may be read from any thread.

    :param registry: the tag registry; None when the readers read no tags.
    """

    def __init__(self, registry: TagRegistry | None, signals: EnrollSignals) -> None:
        self._registry = registry
        self._signals = signals
        self._session: EnrollmentSession | None = None
        self._last = ""

    @property
    def available(self) -> bool:
        return self._registry is not None

    @property
    def active(self) -> bool:
        return self._session is not None

    def target(self, only: str | None) -> PhysicalPiece | None:
        """The piece to re-enroll (all missing ones if None), checked before the mode begins.

        :raises DeviceError: if this device has no tag registry.
        :raises PieceError: ``only`` is not a physical piece (``W:PVT#3``).
        """
        self._needs_registry()
        return PhysicalPiece.parse(only) if only else None

    def begin(self, only: PhysicalPiece | None) -> None:
        """Enter the mode: a fresh session (one already on is dropped). With every
        piece enrolled already the mode does not begin: ``last`` says so."""
        session = EnrollmentSession(self._needs_registry(), only=only)
        self._last = ""
        if session.done:
            self._session = None
            self._last = session.prompt()
            return
        self._session = session

    def end(self) -> None:
        self._session = None

    def skip(self) -> None:
        """Leave the current piece without a tag and move on (the mode ends after the last).

        :raises DeviceError: if enrollment is not on.
        """
        session = self._session
        if session is None:
            raise DeviceError("enrollment is not on")
        piece = session.skip()
        if piece is not None:
            self._last = f"skipped {piece}"
        if session.done:
            self._session = None

    def choose(self, text: str) -> None:
        """Order-free: the piece named (``B:SPY``) is the one to enroll next.

        :raises DeviceError: enrollment is off, or the piece has its tag already.
        :raises PieceError: not a piece.
        """
        session = self._session
        if session is None:
            raise DeviceError("enrollment is not on")
        self._last = f"next: {session.choose(text)}"

    def _needs_registry(self) -> TagRegistry:
        if self._registry is None:
            raise DeviceError("enrollment needs an RFID reader (reader.kind rdm6300 or mcu)")
        return self._registry

    def status(self) -> JsonDict:
        """Admin only: prompts name pieces."""
        session = self._session
        if session is None:
            return {"active": False, "prompt": "", "progress": [0, 0], "last": self._last}
        done, total = session.progress
        return {
            "active": True,
            "prompt": session.prompt(),
            "progress": [done, total],
            "last": self._last,
        }

    def step(self, readings: Mapping[Role, SlotReading]) -> None:
        """Offer the tag in the session's slot; the mode ends when every piece has one."""
        session = self._session
        if session is None:
            return
        reading = readings[session.slot]
        if reading.state is not SlotState.PRESENT or reading.token is None:
            return
        if session.done:
            return
        result = session.offer(reading.token)
        self._last = result.message
        if result.accepted:
            self._signals.ready()
        else:
            self._signals.error()
        if session.done:
            self._session = None
