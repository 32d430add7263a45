"""The hub's assignment of a table: round, board and the two players with their colours.

The hub writes it retained on ``gg/<event>/table/<table>/assignment``; the
table keeps it in ``DATA/assignment.json`` (so a reboot between rounds keeps
it), shows it on its page and puts it in the header of the next NEW GAME.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from arbiter import wire
from arbiter.fleet.errors import AssignmentMessageError
from arbiter.rules.jsondata import JsonDict
from arbiter.storage.durable import remove_durably, write_durably
from arbiter.wire.errors import WireFormatError

log = logging.getLogger(__name__)

#: Longest player name kept (a name is shown on a phone, never parsed).
MAX_NAME = wire.MAX_NAME
FILE_NAME = "assignment.json"


@dataclass(frozen=True)
class Assignment:
    """Round ``round``, board ``board``: ``white`` plays White, ``black`` plays Black;
    ``pairing`` the hub's id of that pairing, carried into the game's NEW GAME so the hub
    scores only a game started under it (None from a hub older than issue 27)."""

    round: int
    board: int
    white: str
    black: str
    pairing: str | None = None

    @classmethod
    def from_payload(cls, payload: bytes) -> Assignment | None:
        """The assignment in an MQTT payload; None for an empty payload (cleared).

        :raises AssignmentMessageError: not the assignment JSON of docs/tournament/mqtt.md.
        """
        try:
            message = wire.parse(wire.Topic.ASSIGNMENT, payload)
        except WireFormatError as exc:
            raise AssignmentMessageError(str(exc)) from None
        return None if message is None else cls.from_body(message)

    @classmethod
    def from_body(cls, body: wire.AssignmentBody) -> Assignment:
        return cls(body["round"], body["board"], body["white"], body["black"],
                   body.get("pairing"))

    @classmethod
    def from_dict(cls, data: JsonDict) -> Assignment:
        """The assignment of a JSON object (``DATA/assignment.json``: no ``format``).

        :raises AssignmentMessageError: a field missing or of the wrong kind.
        """
        try:
            return cls.from_body(wire.check_assignment(data))
        except WireFormatError as exc:
            raise AssignmentMessageError(str(exc)) from None

    def to_dict(self) -> JsonDict:
        """As kept in a game's header and record (:class:`arbiter.wire.AssignmentBody`)."""
        out: JsonDict = {"round": self.round, "board": self.board, "white": self.white,
                         "black": self.black}
        if self.pairing is not None:
            out["pairing"] = self.pairing
        return out

    @property
    def text(self) -> str:
        """``Round 3 · Ana (White) vs Ben (Black)``."""
        return f"Round {self.round} · {self.white} (White) vs {self.black} (Black)"


class AssignmentFile:
    """``DATA/assignment.json``: the last assignment received, kept durably."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / FILE_NAME

    def load(self) -> Assignment | None:
        """The stored assignment; None if there is none or it cannot be read (logged)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return Assignment.from_dict(data) if isinstance(data, dict) else None
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring %s: %s", self.path, exc)
            return None

    def save(self, assignment: Assignment | None) -> None:
        """Keep ``assignment`` (None: remove it). :raises OSError: not written."""
        if assignment is None:
            remove_durably(self.path)
        else:
            write_durably(self.path, json.dumps(assignment.to_dict()).encode())
