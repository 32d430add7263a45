"""The game journal's file format: checked lines, their records, and reading a file back.

Each line is ``JSON<TAB>crc32-hex`` and ends with a newline. The first line
is the game header (``"t": "game"``); then challenge (``"challenge"``) and
declared ending (``"end"``) lines; an abandoned game gets a ``"reveal"`` line
once the next game has begun (before it, its ranks stay secret). A repaired
file has ``"unreadable"`` lines where a damaged challenge line was (the
challenge happened; its pieces are lost). A captured Flag is not written as an
ending: replaying its challenge ends the game again. Lines may end in CRLF (a
file saved on another computer). The durable writing of these lines is
:mod:`arbiter.storage.journal`'s job.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.errors import GameRecordError, PieceError
from arbiter.rules.game import Challenge, Ending, EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role, Survivor, Verdict
from arbiter.storage.errors import CorruptDataError

FORMAT_VERSION = 1


@dataclass(frozen=True)
class DamagedLine:
    """A complete line of a journal that could not be used."""

    line: int
    reason: str
    offset: int  # where the line starts in the file

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True)
class LoadedGame:
    """A journal file read back: the game, and how much of the file holds it."""

    game: Game
    good_bytes: int  # length of the complete lines (all but an unfinished tail)
    torn_tail: bool  # bytes after them without their newline: a write never acknowledged
    damage: tuple[DamagedLine, ...] = ()  # complete lines that could not be used


def encode(record: JsonDict) -> bytes:
    """One journal line: the record's JSON, a tab, its CRC-32, a newline."""
    body = json.dumps(record, separators=(",", ":"), sort_keys=True)
    return f"{body}\t{zlib.crc32(body.encode()):08x}\n".encode()


def decode(line: bytes) -> JsonDict:
    """The record of one line (without its newline).

    :raises ValueError: no checksum, a checksum mismatch, or not a JSON object.
    """
    text = line.decode("utf-8")
    body, sep, crc = text.rpartition("\t")
    if not sep or len(crc) != 8:
        raise ValueError("no checksum")
    if f"{zlib.crc32(body.encode()):08x}" != crc:
        raise ValueError("checksum mismatch")
    record = json.loads(body)
    if not isinstance(record, dict):
        raise ValueError("not a record")
    return record


def header_record(game: Game) -> JsonDict:
    record: JsonDict = {
        "t": "game", "format": FORMAT_VERSION, "id": game.id, "started_at": game.started_at
    }
    if game.assignment is not None:  # a tournament game: the players' names
        record["assignment"] = game.assignment
    return record


def challenge_record(c: Challenge) -> JsonDict:
    return {
        "t": "challenge",
        "n": c.number,
        "at": c.at,
        "attacker": str(c.attacker),
        "defender": str(c.defender),
        "attacker_tag": c.attacker_tag,
        "defender_tag": c.defender_tag,
        "survivor": c.verdict.survivor.value,
        "fallen_flag": c.verdict.fallen_flag.value if c.verdict.fallen_flag else None,
    }


def ending_record(ending: Ending) -> JsonDict:
    return {"t": "end", **ending.to_dict()}


def reveal_record(at: float) -> JsonDict:
    """An abandoned game may be revealed: the next game began at ``at``."""
    return {"t": "reveal", "at": at}


def unreadable_record(number: int) -> JsonDict:
    """Stands in for a challenge whose line was damaged (written only by a repair)."""
    return {"t": "unreadable", "n": number}


def records_of(game: Game) -> Iterator[JsonDict]:
    """The records that rebuild ``game``, header first, in challenge order."""
    yield header_record(game)
    readable = {c.number: c for c in game.challenges}
    for number in range(1, game.challenge_count + 1):
        challenge = readable.get(number)
        yield challenge_record(challenge) if challenge else unreadable_record(number)
    if game.ending is not None and game.ending.kind is not EndingKind.FLAG_CAPTURED:
        yield ending_record(game.ending)
    if game.revealed_at is not None:
        yield reveal_record(game.revealed_at)


def _challenge_from(record: JsonDict) -> Challenge:
    fallen = record["fallen_flag"]
    return Challenge(
        number=int(record["n"]),
        contenders=Contenders(
            Identity(Piece.parse(record["attacker"]), record["attacker_tag"]),
            Identity(Piece.parse(record["defender"]), record["defender_tag"]),
        ),
        verdict=Verdict(Survivor(record["survivor"]), Role(fallen) if fallen else None),
        at=float(record["at"]),
    )


def _ending_from(record: JsonDict) -> Ending:
    winner = record["winner"]
    return Ending(EndingKind(record["kind"]), Side(winner) if winner else None, float(record["at"]))


def _id_from_name(path: Path) -> int | None:
    stem = path.name.split(".")[0]
    return int(stem) if stem.isdigit() else None


class _Reader:
    """Rebuilds a game line by line, keeping every intact line around a damaged one.

    A damaged line is taken for a challenge whose record is lost: the next
    intact challenge's number shows how many were lost, and damaged lines
    left over before the ending (or the end of the file) count as one each.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.game: Game | None = None
        self.damage: list[DamagedLine] = []
        self.pending = 0  # damaged lines not yet accounted for
        self.first_at: float | None = None  # to date a game whose header is lost

    def damaged(self, line_no: int, reason: str, offset: int) -> None:
        self.damage.append(DamagedLine(line_no, reason, offset))
        if self.game is None or not self.game.over:
            self.pending += 1

    def _game(self, record: JsonDict) -> Game:
        if self.game is not None:
            return self.game
        # The header was damaged: the file's name gives the id, its first record the time.
        game_id = _id_from_name(self.path)
        if game_id is None:
            raise ValueError("first line is not a game header")
        self.game = Game(id=game_id, started_at=float(record.get("at", 0.0)))
        self.pending = 0  # the damaged line was the header, not a challenge
        return self.game

    def _lost_up_to(self, game: Game, number: int) -> None:
        """Count the challenges before ``number`` as unreadable."""
        while game.challenge_count + 1 < number:
            game.add_unreadable(game.challenge_count + 1)
        self.pending = 0

    def _flush_pending(self, game: Game) -> None:
        for _ in range(self.pending):
            game.add_unreadable(game.challenge_count + 1)
        self.pending = 0

    def line(self, raw: bytes) -> None:
        record = decode(raw.removesuffix(b"\r"))  # CRLF: a file saved on another computer
        kind = record.get("t")
        if kind == "game":
            if self.game is not None:
                raise ValueError("a second game header")
            if record.get("format") != FORMAT_VERSION:
                raise ValueError(f"unknown format {record.get('format')!r}")
            assignment = record.get("assignment")
            self.game = Game(
                id=int(record["id"]),
                started_at=float(record["started_at"]),
                assignment=assignment if isinstance(assignment, dict) else None,
            )
            self.pending = 0
            return
        if kind not in ("challenge", "unreadable", "end", "reveal"):
            raise ValueError(f"unknown record type {kind!r}")
        game = self._game(record)
        if kind == "reveal":
            game.reveal(float(record["at"]))  # EndingError: not abandoned, or twice
            return
        if kind == "end":
            ending = _ending_from(record)
            if game.over:
                raise ValueError("a second ending")
            self._flush_pending(game)
            game.end(ending)
            return
        number = int(record["n"])
        if game.over:
            raise ValueError("challenge after the ending")
        if number <= game.challenge_count:
            raise ValueError(f"challenge {number} out of sequence")
        if kind == "challenge":
            challenge = _challenge_from(record)
            self._lost_up_to(game, number)
            game.apply(challenge)
        else:
            self._lost_up_to(game, number)
            game.add_unreadable(number)

    def finish(self) -> Game | None:
        if self.game is not None and not self.game.over:
            self._flush_pending(self.game)
        return self.game


def load_game(path: Path) -> LoadedGame:
    """Read one journal file, keeping every intact line (LF or CRLF endings).

    Damaged lines are listed in ``damage`` and stand for unreadable challenges.

    :raises CorruptDataError: when no line of the file can be used.
    """
    return parse_game(path, path.read_bytes())


def parse_game(path: Path, data: bytes) -> LoadedGame:
    """:func:`load_game` of ``data`` read from ``path``."""
    reader = _Reader(path)
    offset = 0
    line_no = 0
    torn = False
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            torn = True
            break
        line_no += 1
        try:
            reader.line(data[offset:end])
        except (ValueError, KeyError, TypeError, PieceError, GameRecordError) as exc:
            reader.damaged(line_no, str(exc) or type(exc).__name__, offset)
        offset = end + 1
    game = reader.finish()
    if game is None:
        empty = "truncated header" if torn else "empty file"
        reason = "; ".join(map(str, reader.damage)) or empty
        raise CorruptDataError(path, 1, f"nothing readable ({reason})", None)
    return LoadedGame(game, offset, torn_tail=torn, damage=tuple(reader.damage))
