"""The simulator's slots: a slot reader with no hardware, driven by calls.

:class:`SimSlots` is only the backend. Drivers are separate: the terminal
(:mod:`arbiter.app.sim_console`, lines on standard input) and the web page's
simulator panel both call :meth:`SimSlots.seat` and :meth:`SimSlots.clear`.

Two modes. Without a tag registry a seated piece reads as its own text (the
device identifies it by name). With one (``run --sim`` for an RFID reader kind,
the flagship's ``mcu``) every one of the 42 physical pieces carries a simulated
sticker with a fixed NTAG213-like UID (7 bytes, 14 hex digits, NXP's ``04``
first), and a seated piece reads as its sticker's UID, enrolled or not, as on
the real board: so enrollment and games can be rehearsed as they will be played.
The simulated stickers are enrolled in their own file (:data:`SIM_TAGS`) beside the
real ``tags.json``: a rehearsal on the Pi itself never enrolls a sticker that does
not exist.
"""

from __future__ import annotations

import hashlib
import threading

from arbiter.drivers.readers.base import ReadingCallback, SlotReading, SlotState
from arbiter.drivers.readers.errors import SimTagError
from arbiter.rules.army import PhysicalPiece
from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role
from arbiter.storage.registry import TagRegistry

#: The simulated stickers' registry, in the data directory beside the real tags.json.
SIM_TAGS = "sim-tags.json"


def sticker_uid(piece: PhysicalPiece) -> str:
    """The simulated NTAG213 sticker on ``piece``: ``04`` and 6 bytes fixed by the piece."""
    return "04" + hashlib.sha256(str(piece).encode()).hexdigest()[:12].upper()


def check_tag(tag: str, lengths: frozenset[int], kind: str) -> str:
    """``tag`` upper-cased, if the reader kind sends ids of that many hex digits.

    :raises SimTagError: otherwise, naming the lengths the kind sends.
    """
    text = tag.strip().upper()
    if len(text) not in lengths or not all(c in "0123456789ABCDEF" for c in text):
        ordered = [str(n) for n in sorted(lengths)]
        sizes = ordered[0] if len(ordered) == 1 else f"{', '.join(ordered[:-1])} or {ordered[-1]}"
        raise SimTagError(f"a {kind} tag id is {sizes} hex digits, not {tag!r}")
    return text


class SimSlots:
    """Two virtual slots. A seated piece reads at once (no bounce to wait out).

    :param registry: the tag registry of an RFID reader kind: seated pieces then
        read as their simulated stickers (see the module doc); None: as their text.
    :param tag_lengths: the tag id lengths (hex digits) that reader kind sends,
        checked by :meth:`hold`.
    :param kind: the reader kind's name, for messages.
    """

    def __init__(self, registry: TagRegistry | None = None,
                 tag_lengths: frozenset[int] = frozenset(), kind: str = "sim") -> None:
        self._lock = threading.Lock()
        self._report: ReadingCallback | None = None
        self._held: dict[Role, str | None] = {Role.ATTACKER: None, Role.DEFENDER: None}
        self._registry = registry
        self._tag_lengths = tag_lengths
        self._kind = kind

    @property
    def slots(self) -> tuple[Role, ...]:
        return (Role.ATTACKER, Role.DEFENDER)

    @property
    def reads_tags(self) -> bool:
        """Whether seated pieces read as sticker UIDs (an RFID reader kind)."""
        return self._registry is not None

    def start(self, report: ReadingCallback) -> None:
        with self._lock:
            self._report = report
            held = dict(self._held)
        for role, token in held.items():
            report(_reading(role, token))

    def seat(self, role: Role, piece_text: str) -> Piece:
        """Put a piece in a slot (replacing what was there).

        With stickers, ``W:PVT`` is the first Private whose sticker is not enrolled
        yet (the one a person enrolling would pick up), else the first not in the
        other slot; ``W:PVT#3`` is that one.

        :raises PieceError: for text that is not a piece.
        """
        if self._registry is None:
            piece = Piece.parse(piece_text)
            self._set(role, str(piece))
            return piece
        physical = self._physical(role, piece_text)
        self._set(role, sticker_uid(physical))
        return physical.piece

    def hold(self, role: Role, tag: str) -> None:
        """Hold a bare sticker with UID ``tag`` in a slot (RFID reader kinds only).

        :raises SimTagError: not a tag id of this reader kind, or no tags read here.
        """
        if self._registry is None:
            raise SimTagError("this simulator reads pieces by name, not tags: seat a piece")
        self._set(role, check_tag(tag, self._tag_lengths, self._kind))

    def clear(self, role: Role) -> None:
        """Take the piece out of a slot."""
        self._set(role, None)

    def holding(self) -> dict[Role, SlotState]:
        """What each slot holds now, as its reading will say once the device has taken it:
        at once, so whoever seated a piece sees it seated (the device's status follows a
        moment later, and later still while it is busy with a tune)."""
        with self._lock:
            return {role: _reading(role, token).state for role, token in self._held.items()}

    def _physical(self, role: Role, text: str) -> PhysicalPiece:
        assert self._registry is not None
        if "#" in text:
            return PhysicalPiece.parse(text)
        piece = Piece.parse(text)
        copies = [PhysicalPiece(piece, n) for n in range(1, piece.rank.count + 1)]
        self._registry.reload()  # enrolled meanwhile, by the device's enrollment
        for copy in copies:
            if self._registry.lookup_physical(sticker_uid(copy)) is None:
                return copy
        with self._lock:
            other = self._held[Role.DEFENDER if role is Role.ATTACKER else Role.ATTACKER]
        free = [c for c in copies if sticker_uid(c) != other]
        if not free:
            raise PieceError(text, "its only piece is in the other slot")
        return free[0]

    def _set(self, role: Role, token: str | None) -> None:
        with self._lock:
            if self._held[role] == token:
                return
            if self._held[role] is not None and token is not None:
                # Swapping a piece passes through an empty slot, as by hand.
                self._held[role] = None
                if self._report:
                    self._report(_reading(role, None))
            self._held[role] = token
            report = self._report
        if report:
            report(_reading(role, token))

    def close(self) -> None:
        with self._lock:
            self._report = None


def _reading(role: Role, token: str | None) -> SlotReading:
    if token is None:
        return SlotReading(role, SlotState.EMPTY)
    return SlotReading(role, SlotState.PRESENT, token)
