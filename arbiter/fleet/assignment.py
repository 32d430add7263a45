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

from arbiter.errors import ArbiterError
from arbiter.rules.jsondata import JsonDict
from arbiter.storage.durable import remove_durably, write_durably

log = logging.getLogger(__name__)

#: The version of every payload on the wire (the ``format`` field).
WIRE_FORMAT = 1
#: Longest player name kept (a name is shown on a phone, never parsed).
MAX_NAME = 64
FILE_NAME = "assignment.json"


class AssignmentError(ArbiterError, ValueError):
    """An assignment payload that cannot be used; the table keeps the one it had."""


def wire_object(payload: bytes, error: type[ArbiterError]) -> JsonDict | None:
    """The JSON object of a message the hub sends a table (``assignment``, ``resend``);
    None for an empty payload (a cleared retained topic).

    :raises error: not JSON, not an object, or not of :data:`WIRE_FORMAT`.
    """
    if not payload.strip():
        return None
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise error("not a JSON object")
    if data.get("format") != WIRE_FORMAT:
        raise error(f"unknown format {data.get('format')!r}")
    return data


@dataclass(frozen=True)
class Assignment:
    """Round ``round``, board ``board``: ``white`` plays White, ``black`` plays Black."""

    round: int
    board: int
    white: str
    black: str

    @classmethod
    def from_payload(cls, payload: bytes) -> Assignment | None:
        """The assignment in an MQTT payload; None for an empty payload (cleared).

        :raises AssignmentError: not the assignment JSON of docs/mqtt.md.
        """
        data = wire_object(payload, AssignmentError)
        return None if data is None else cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: JsonDict) -> Assignment:
        """:raises AssignmentError: a field missing or of the wrong kind."""
        numbers = []
        for key in ("round", "board"):
            value = data.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise AssignmentError(f"'{key}' must be a whole number >= 0, not {value!r}")
            numbers.append(value)
        names = []
        for key in ("white", "black"):
            value = data.get(key)
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
                raise AssignmentError(f"'{key}' must be a name of 1 to {MAX_NAME} characters")
            names.append(value.strip())
        return cls(numbers[0], numbers[1], names[0], names[1])

    def to_dict(self) -> JsonDict:
        """As kept in a game's header and record."""
        return {"round": self.round, "board": self.board, "white": self.white,
                "black": self.black}

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
