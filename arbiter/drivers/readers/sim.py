"""The simulator's slots: a slot reader with no hardware, driven by calls.

:class:`SimSlots` is only the backend. Drivers are separate: the terminal
(:mod:`arbiter.app.sim_console`, lines on standard input) and the web page's
simulator panel both call :meth:`SimSlots.seat` and :meth:`SimSlots.clear`.
"""

from __future__ import annotations

import threading

from arbiter.drivers.readers.base import ReadingCallback, SlotReading, SlotState
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role


class SimSlots:
    """Two virtual slots. A seated piece reads at once (no bounce to wait out)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._report: ReadingCallback | None = None
        self._held: dict[Role, str | None] = {Role.ATTACKER: None, Role.DEFENDER: None}

    @property
    def slots(self) -> tuple[Role, ...]:
        return (Role.ATTACKER, Role.DEFENDER)

    def start(self, report: ReadingCallback) -> None:
        with self._lock:
            self._report = report
            held = dict(self._held)
        for role, token in held.items():
            report(_reading(role, token))

    def seat(self, role: Role, piece_text: str) -> Piece:
        """Put a piece in a slot (replacing what was there).

        :raises PieceError: for text that is not a piece.
        """
        piece = Piece.parse(piece_text)
        self._set(role, str(piece))
        return piece

    def clear(self, role: Role) -> None:
        """Take the piece out of a slot."""
        self._set(role, None)

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
