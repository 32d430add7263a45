"""The wire format's messages: limits, enumerations, the typed payload of every topic and
their constructors (the table's link and the hub's publisher build every payload with
them). The format itself is described in :mod:`arbiter.wire`."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from typing import Literal, NotRequired, TypeAlias, TypedDict, cast

from arbiter.rules.game import EndingKind

#: The version of every payload (its ``format`` field); an incompatible change raises it.
FORMAT = 1
#: Largest whole number anywhere on the wire: 2**53 - 1 (exact in JSON everywhere, and
#: far inside SQLite's signed 64-bit INTEGER). Also the bound of every float's size.
MAX_INT = 2**53 - 1
#: Latest time a timestamp (seconds since 1970, UTC) may name: 2100-01-01.
MAX_TIMESTAMP = 4_102_444_800
#: Most challenges a game may count (a game of 21 pieces a side has far fewer).
MAX_CHALLENGES = 10_000
#: Highest round and board number.
MAX_ROUND = 1_000
MAX_BOARD = 10_000
#: Longest player name (shown on a phone, never parsed).
MAX_NAME = 64
#: Longest free text (a status's message, a broker's detail).
MAX_TEXT = 1_000
#: Most ranges one resend request may name.
MAX_RANGES = 256
#: Most games whose records one resend request may name (a hub missing more asks for the
#: first ones, then for the rest once those have come).
MAX_RECORDS = 64
#: A game's id: a whole number, or a short word usable as a topic level.
GAME_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: A pairing's id: 128 random bits in hex, made by the hub's ledger when the round is
#: paired; only a game whose NEW GAME carried it can score that pairing.
PAIRING_ID = re.compile(r"[0-9a-f]{32}")

#: The ``state`` values of ``GET /api/status`` (arbiter.device.sequence.DeviceState).
STATES = ("idle", "waiting", "deciding", "result", "game_over", "fault")
ENDINGS = tuple(kind.value for kind in EndingKind)
SIDES = ("W", "B")
#: A challenge's public result (arbiter.rules.verdict.Survivor.public_word).
VERDICTS = ("attacker", "defender", "split")
MODES = ("sim", "hardware")

ONLINE = b"true"
OFFLINE = b"false"


class EventType(enum.Enum):
    """The ``type`` of a ``P/events`` message."""

    NEW_GAME = "new_game"
    CHALLENGE = "challenge"
    GAME_OVER = "game_over"


EVENT_TYPES = tuple(t.value for t in EventType)




JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
#: A JSON object checked by :func:`parse` (a game's full record).
JsonObject: TypeAlias = dict[str, JsonValue]
GameId: TypeAlias = int | str


class AssignmentBody(TypedDict):
    """A pairing as a table holds it: round, board, the two players by colour, and the
    pairing's id (:data:`PAIRING_ID`; absent from a hub older than issue 27)."""

    round: int
    board: int
    white: str
    black: str
    pairing: NotRequired[str]


class AssignmentMessage(AssignmentBody):
    """``P/assignment`` (hub to table, retained)."""

    format: int


class StatusAssignment(AssignmentBody):
    """The assignment in a status, with its text (``Round 3 · Ana (White) vs ...``)."""

    text: str


class Eliminated(TypedDict):
    """Pieces fallen per side."""

    W: int
    B: int


class EndingBody(TypedDict):
    """How a game ended: ``kind`` of :data:`ENDINGS`, ``winner`` W, B or None."""

    kind: str
    winner: str | None
    at: float | None


class EventHead(TypedDict):
    """What every ``P/events`` message starts with."""

    format: int
    table: str
    seq: int
    game: GameId


class NewGameBody(TypedDict):
    type: Literal["new_game"]
    assignment: AssignmentBody | None
    at: float | None


class ChallengeBody(TypedDict):
    type: Literal["challenge"]
    number: int
    attacker_side: str | None
    result: str | None
    eliminated: Eliminated
    at: float | None


class GameOverBody(TypedDict):
    type: Literal["game_over"]
    ending: EndingBody


class NewGameEvent(EventHead, NewGameBody):
    """``new_game``: the assignment the game was started with (or None)."""


class ChallengeEvent(EventHead, ChallengeBody):
    """``challenge``: one accepted challenge, with the count of fallen pieces after it."""


class GameOverEvent(EventHead, GameOverBody):
    """``game_over``: the game's ending."""


EventBody: TypeAlias = NewGameBody | ChallengeBody | GameOverBody
Event: TypeAlias = NewGameEvent | ChallengeEvent | GameOverEvent


class VerdictBody(TypedDict):
    number: int
    attacker_side: str | None
    result: str | None


class Readers(TypedDict):
    ok: bool
    detail: str


class BrokerLink(TypedDict):
    state: str
    detail: str
    cause: str


class StatusMessage(TypedDict):
    """``P/status``: ``GET /api/status`` plus ``format``, ``table`` and ``event_seq``."""

    format: int
    table: str
    state: str
    seq: NotRequired[int]
    event_seq: NotRequired[int]
    game_id: NotRequired[GameId | None]
    challenge_count: NotRequired[int]
    started_at: NotRequired[float | None]
    eliminated: NotRequired[Eliminated]
    last_verdict: NotRequired[str | None]
    verdicts: NotRequired[list[VerdictBody]]
    slots: NotRequired[dict[str, str]]
    readers: NotRequired[Readers]
    ending: NotRequired[EndingBody | None]
    message: NotRequired[str]
    mode: NotRequired[str]
    enrolling: NotRequired[bool]
    broker: NotRequired[BrokerLink]
    assignment: NotRequired[StatusAssignment | None]
    software: NotRequired[str]
    new_game_needed: NotRequired[bool]


class RecordMessage(TypedDict):
    """``P/record``: a finished game's full record (``GET /api/games/<id>``), naming its
    game (the latest record is retained; every one is published at QoS 1)."""

    format: int
    table: str
    game: GameId
    record: JsonObject


class ResendMessage(TypedDict):
    """``P/resend`` (hub to table, retained): publish the events in ``ranges`` again, and
    the records of the games in ``records`` (absent from a hub before records were
    asked for; a table before them ignores the field)."""

    format: int
    table: str
    id: int
    ranges: list[list[int]]
    records: NotRequired[list[GameId]]


Message: TypeAlias = (
    bool | Event | StatusMessage | RecordMessage | AssignmentMessage | ResendMessage
)


# --- building them (the table's link, the hub's publisher, the tests) -----------------------


def assignment(
    round_number: int, board: int, white: str, black: str, pairing: str | None = None
) -> AssignmentBody:
    body: AssignmentBody = {"round": round_number, "board": board, "white": white,
                            "black": black}
    if pairing is not None:
        body["pairing"] = pairing
    return body


def assignment_message(body: AssignmentBody) -> AssignmentMessage:
    message: AssignmentMessage = {"format": FORMAT, "round": body["round"],
                                  "board": body["board"], "white": body["white"],
                                  "black": body["black"]}
    if "pairing" in body:
        message["pairing"] = body["pairing"]
    return message


def new_game(assignment: AssignmentBody | None, at: float | None) -> NewGameBody:
    return {"type": "new_game", "assignment": assignment, "at": at}


def challenge(
    number: int, attacker_side: str | None, result: str | None, eliminated: Eliminated,
    at: float | None,
) -> ChallengeBody:
    return {"type": "challenge", "number": number, "attacker_side": attacker_side,
            "result": result, "eliminated": eliminated, "at": at}


def game_over(kind: str, winner: str | None, at: float | None) -> GameOverBody:
    return {"type": "game_over", "ending": {"kind": kind, "winner": winner, "at": at}}


def event(table: str, seq: int, game: GameId, body: EventBody) -> Event:
    """A ``P/events`` message: the head, then its type's fields."""
    head: EventHead = {"format": FORMAT, "table": table, "seq": seq, "game": game}
    # The union of the two TypedDicts is one of the three events (mypy cannot join them).
    return cast(Event, {**head, **body})


def record_message(table: str, game: GameId, record: JsonObject) -> RecordMessage:
    return {"format": FORMAT, "table": table, "game": game, "record": record}


def resend_message(table: str, request_id: int, ranges: list[list[int]],
                   records: Sequence[GameId] = ()) -> ResendMessage:
    message: ResendMessage = {"format": FORMAT, "table": table, "id": request_id,
                              "ranges": ranges}
    if records:
        message["records"] = list(records)
    return message


def encode(message: Message | Mapping[str, JsonValue]) -> bytes:
    """The bytes of a message: compact JSON, keys sorted."""
    return json.dumps(message, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False).encode()


def canonical(message: Message | Mapping[str, JsonValue]) -> str:
    """The one JSON text of a message, so two copies compare equal."""
    return json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
