"""The game journal's file format: checked lines, their records, and reading a file back.

Each line is ``JSON<TAB>crc32-hex`` and ends with a newline. The first line
is the game header (``"t": "game"``); then challenge (``"challenge"``) and
declared ending (``"end"``) lines. A captured Flag is not written as an
ending: replaying its challenge ends the game again. The durable writing of
these lines is :mod:`arbiter.storage.journal`'s job.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.game import Challenge, Ending, EndingError, EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece, PieceError
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role, Survivor, Verdict
from arbiter.storage.errors import CorruptDataError

FORMAT_VERSION = 1


@dataclass(frozen=True)
class LoadedGame:
    """A journal file read back: the game, and how much of the file holds it."""

    game: Game
    good_bytes: int  # length of the intact prefix
    torn_tail: bool  # bytes after it without their newline: a write never acknowledged


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
    return {"t": "game", "format": FORMAT_VERSION, "id": game.id, "started_at": game.started_at}


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


def records_of(game: Game) -> Iterator[JsonDict]:
    """The records that rebuild ``game``, header first."""
    yield header_record(game)
    for challenge in game.challenges:
        yield challenge_record(challenge)
    if game.ending is not None and game.ending.kind is not EndingKind.FLAG_CAPTURED:
        yield ending_record(game.ending)


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


def load_game(path: Path) -> LoadedGame:
    """Read one journal file.

    :raises CorruptDataError: on a damaged complete line (with the valid prefix).
    """
    data = path.read_bytes()
    game: Game | None = None
    offset = 0
    line_no = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            if game is None:
                raise CorruptDataError(path, line_no + 1, "truncated header", None)
            return LoadedGame(game, offset, torn_tail=True)
        line_no += 1
        try:
            record = decode(data[offset:end])
            kind = record.get("t")
            if game is None:
                if kind != "game":
                    raise ValueError("first line is not a game header")
                if record.get("format") != FORMAT_VERSION:
                    raise ValueError(f"unknown format {record.get('format')!r}")
                game = Game(id=int(record["id"]), started_at=float(record["started_at"]))
            elif kind == "challenge":
                challenge = _challenge_from(record)
                if challenge.number != len(game.challenges) + 1:
                    raise ValueError(f"challenge {challenge.number} out of sequence")
                if game.over:
                    raise ValueError("challenge after the ending")
                game.apply(challenge)
            elif kind == "end":
                game.end(_ending_from(record))
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (ValueError, KeyError, TypeError, PieceError, EndingError) as exc:
            raise CorruptDataError(path, line_no, str(exc) or type(exc).__name__, game) from None
        offset = end + 1
    if game is None:
        raise CorruptDataError(path, 1, "empty file", None)
    return LoadedGame(game, offset, torn_tail=False)
