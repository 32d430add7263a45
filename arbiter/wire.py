"""The table-to-hub wire format (docs/tournament/mqtt.md): topics, typed messages, one validation.

Both ends import this module: the table's link (:mod:`arbiter.fleet`) builds
every payload with the constructors here, and the hub's intake
(:mod:`arbiter.hub`) reads every payload with :func:`parse`, which refuses
anything that is not exactly this format *before* it reaches the ledger:

* a payload larger than its topic's limit (:data:`MAX_BYTES`) is refused
  before it is parsed;
* JSON only: ``NaN``/``Infinity`` are refused, and every number anywhere in a
  payload is a finite value of at most :data:`MAX_INT` in size (a JavaScript
  safe integer, well inside SQLite's signed 64 bits), so no value can overflow
  the ledger;
* each field is of its type (``true`` is not a number), within its domain
  (a challenge's eliminated pieces within an army, a round within
  :data:`MAX_ROUND`), strings of bounded length, enumerations (event types,
  endings, sides, the ``state`` of ``/api/status``) from their sets;
* a message names the table of its topic.

What the hub keeps is what :func:`parse` returns: the known fields only, so a
field a table adds never reaches the ledger or a page unchecked.
Standard library and :mod:`arbiter.rules` only.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, NotRequired, TypeAlias, TypedDict, cast, overload

from arbiter.errors import PayloadTooLargeError, TopicMismatchError, WireFormatError
from arbiter.rules.game import EndingKind
from arbiter.rules.ranks import ARMY_SIZE

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


class Topic(enum.Enum):
    """The last level(s) of a table's topic ``gg/<event>/table/<table>/<topic>``."""

    ONLINE = "online"
    STATUS = "status"
    EVENTS = "events"
    RECORD = "record"  # record/<game>
    ASSIGNMENT = "assignment"  # hub to table
    RESEND = "resend"  # hub to table


#: The largest payload of each topic, refused before it is parsed. A status is about
#: 1 KiB and an event 300 bytes; a record of a long game (60 challenges) about 20 KiB.
MAX_BYTES: dict[Topic, int] = {
    Topic.ONLINE: 16,
    Topic.STATUS: 8 * 1024,
    Topic.EVENTS: 4 * 1024,
    Topic.RECORD: 64 * 1024,
    Topic.ASSIGNMENT: 1024,
    Topic.RESEND: 16 * 1024,
}
#: Topics kept retained by the broker: an empty payload clears them.
RETAINED = frozenset({Topic.ONLINE, Topic.STATUS, Topic.RECORD, Topic.ASSIGNMENT, Topic.RESEND})


#: The first level of every topic of the format.
ROOT = "gg"


@dataclass(frozen=True)
class TopicName:
    """A table's topic, split: ``gg/<event>/table/<table>/<topic>[/<game>]``.

    ``topic`` is None for a topic under the table's prefix that is not of the wire
    format (``rest`` is what followed the prefix: the hub notes it when it refuses it).
    """

    event: str
    table: str
    topic: Topic | None
    game: str | None = None
    rest: str = ""


def prefix(event: str, table: str) -> str:
    """``gg/<event>/table/<table>/``: the topic prefix of one table."""
    return f"{ROOT}/{event}/table/{table}/"


def topic(event: str, table: str, kind: Topic, game: GameId | None = None) -> str:
    """The name of a table's ``kind`` topic (a record's names its ``game``).

    :raises ValueError: a record without a game, a game on another topic, or a game id
        that is not a topic level.
    """
    if (kind is Topic.RECORD) != (game is not None):
        raise ValueError(f"{kind.value}: a game goes with the record topic only")
    if game is None:
        return prefix(event, table) + kind.value
    if not GAME_ID.fullmatch(str(game)):
        raise ValueError(f"game {game!r} is not a topic level")
    return f"{prefix(event, table)}{kind.value}/{game}"


def table_filter(event: str, kind: Topic | None = None) -> str:
    """The subscription (or ACL pattern) of every table's ``kind`` topic (None: all of
    them, a record's games too)."""
    head = f"{ROOT}/{event}/table/+/"
    if kind is None:
        return head + "#"
    return head + kind.value + ("/#" if kind is Topic.RECORD else "")


def table_pattern(event: str, table: str, kind: Topic) -> str:
    """One table's ``kind`` topic as an ACL pattern (a record's: each of its games)."""
    return prefix(event, table) + kind.value + ("/#" if kind is Topic.RECORD else "")


def event_filter(event: str) -> str:
    """Every topic of one event: ``gg/<event>/#``."""
    return f"{ROOT}/{event}/#"


def split(event: str, name: str) -> TopicName | None:
    """The parts of a table's topic of ``event``; None for a topic that is not a table's
    of this event. A topic of the table that is not of the format has ``topic`` None."""
    parts = name.split("/", 4)
    if len(parts) < 5 or parts[:3] != [ROOT, event, "table"] or not parts[3]:
        return None
    table, rest = parts[3], parts[4]
    which = topic_of(rest)
    if which is None:
        return TopicName(event, table, None, None, rest)
    return TopicName(event, table, which[0], which[1], rest)


def topic_of(rest: str) -> tuple[Topic, str | None] | None:
    """(topic, game) of a table topic's part after the prefix (``record/7``: the game);
    None for a topic that is not of the wire format."""
    head, _, tail = rest.partition("/")
    try:
        kind = Topic(head)
    except ValueError:
        return None
    if kind is Topic.RECORD:
        return (kind, tail) if GAME_ID.fullmatch(tail) else None
    return None if tail else (kind, None)


# --- the messages ---------------------------------------------------------------------

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
    """``P/record/<game>``: a finished game's full record (``GET /api/games/<id>``)."""

    format: int
    table: str
    game: GameId
    record: JsonObject


class ResendMessage(TypedDict):
    """``P/resend`` (hub to table, retained): publish the events in ``ranges`` again."""

    format: int
    table: str
    id: int
    ranges: list[list[int]]


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


def resend_message(table: str, request_id: int, ranges: list[list[int]]) -> ResendMessage:
    return {"format": FORMAT, "table": table, "id": request_id, "ranges": ranges}


def encode(message: Message | Mapping[str, JsonValue]) -> bytes:
    """The bytes of a message: compact JSON, keys sorted."""
    return json.dumps(message, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False).encode()


def canonical(message: Message | Mapping[str, JsonValue]) -> str:
    """The one JSON text of a message, so two copies compare equal."""
    return json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# --- reading them: the one validation ---------------------------------------------------


@overload
def parse(topic: Literal[Topic.ONLINE], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> bool: ...
@overload
def parse(topic: Literal[Topic.EVENTS], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> Event: ...
@overload
def parse(topic: Literal[Topic.STATUS], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> StatusMessage | None: ...
@overload
def parse(topic: Literal[Topic.RECORD], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> RecordMessage | None: ...
@overload
def parse(topic: Literal[Topic.ASSIGNMENT], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> AssignmentMessage | None: ...
@overload
def parse(topic: Literal[Topic.RESEND], raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> ResendMessage | None: ...
@overload
def parse(topic: Topic, raw: bytes, *, table: str | None = ...,
          game: str | None = ...) -> Message | None: ...
def parse(
    topic: Topic, raw: bytes, *, table: str | None = None, game: str | None = None
) -> Message | None:
    """The message of a ``topic`` payload, checked; None for an empty retained payload (a
    cleared topic). ``table`` (and for a record ``game``) is what the topic names: the
    payload must name the same.

    :raises PayloadTooLargeError: over :data:`MAX_BYTES` (before any parsing).
    :raises TopicMismatchError: the payload names another table or game.
    :raises WireFormatError: anything else that is not the format.
    """
    if len(raw) > MAX_BYTES[topic]:
        raise PayloadTooLargeError(
            f"{topic.value}: {len(raw)} bytes, over the limit of {MAX_BYTES[topic]}")
    if topic is Topic.ONLINE:
        text = raw.strip()
        if text not in (ONLINE, OFFLINE):
            raise WireFormatError(f"online: {text[:16]!r} is neither true nor false")
        return text == ONLINE
    if not raw.strip():
        if topic in RETAINED:
            return None
        raise WireFormatError(f"{topic.value}: an empty payload")
    return check(topic, loads(raw), table=table, game=game)


def loads(raw: bytes) -> object:
    """JSON of a payload with every number finite and within :data:`MAX_INT`.

    :raises WireFormatError: not UTF-8 JSON, or a number out of bounds.
    """
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_int=_int_literal, parse_float=_float_literal,
                          parse_constant=_constant)
    except WireFormatError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireFormatError(f"not JSON: {type(exc).__name__}") from None
    if has_lone_surrogate(text, data):
        raise WireFormatError("not JSON text: a \\u escape names half a character"
                              " (a lone surrogate)")
    return data


#: A ``\u`` escape of a UTF-16 surrogate: only JSON escapes can put one in a string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def has_lone_surrogate(text: str, data: object) -> bool:
    """Whether ``data``, parsed from the JSON ``text``, holds a lone surrogate (half of a
    UTF-16 pair) in a string or a key: text no UTF-8 file, database or page can hold.
    Read only when ``text`` escapes a surrogate at all (a pair makes one character)."""
    if not _SURROGATE_ESCAPE.search(text):
        return False
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _int_literal(text: str) -> int:
    if len(text) > 17:  # 2**53 has 16 digits: refuse long ones before converting
        raise WireFormatError(f"a number of {len(text)} digits")
    value = int(text)
    if abs(value) > MAX_INT:
        raise WireFormatError(f"the number {value} is out of range")
    return value


def _float_literal(text: str) -> float:
    value = float(text[:64]) if len(text) <= 64 else math.inf
    if not math.isfinite(value) or abs(value) > MAX_INT:
        raise WireFormatError(f"the number {text[:24]} is out of range")
    return value


def _constant(text: str) -> float:
    raise WireFormatError(f"{text} is not a number the wire carries")


def check(
    topic: Topic, data: object, *, table: str | None = None, game: str | None = None
) -> Message:
    """:func:`parse` after JSON: the checked message of ``data`` (the known fields only)."""
    if topic is Topic.ONLINE:
        if not isinstance(data, bool):
            raise WireFormatError("online: neither true nor false")
        return data
    obj = _object(data, topic.value)
    if obj.get("format") != FORMAT:
        raise WireFormatError(f"{topic.value}: format {_short(obj.get('format'))}, not {FORMAT}")
    if topic is Topic.ASSIGNMENT:
        return assignment_message(_assignment(obj))
    if table is not None and obj.get("table") != table:
        raise TopicMismatchError(
            f"the payload names table {_short(obj.get('table'))} on table {table!r}'s topic",
            _seq(obj))
    name = _text(obj, "table", 1, 64)
    if topic is Topic.EVENTS:
        return check_event(obj, name)
    if topic is Topic.STATUS:
        return _status(obj, name)
    if topic is Topic.RECORD:
        return _record(obj, name, game)
    return _resend(obj, name)


def check_event(data: object, table: str | None = None) -> Event:
    """One event of ``P/events`` (already JSON), checked; :func:`check` of it."""
    obj = _object(data, "an event")
    seq = _seq(obj)
    try:
        if obj.get("format") != FORMAT:
            raise WireFormatError(f"format {_short(obj.get('format'))}, not {FORMAT}")
        if table is not None and obj.get("table") != table:
            raise TopicMismatchError(
                f"the payload names table {_short(obj.get('table'))} on table {table!r}'s topic")
        name = _text(obj, "table", 1, 64)
        if seq is None:
            raise WireFormatError(f"seq {_short(obj.get('seq'))} is not a whole number from 1"
                                  f" to {MAX_INT}")
        game = _game(obj.get("game"))
        kind = obj.get("type")
        body: EventBody
        if kind == EventType.NEW_GAME.value:
            raw = obj.get("assignment")
            body = new_game(None if raw is None else _assignment(_object(raw, "assignment")),
                            _time(obj, "at"))
        elif kind == EventType.CHALLENGE.value:
            lost = _object(obj.get("eliminated"), "eliminated")
            body = challenge(
                _whole(obj, "number", 1, MAX_CHALLENGES),
                _choice(obj, "attacker_side", SIDES, optional=True),
                _choice(obj, "result", VERDICTS, optional=True),
                {"W": _whole(lost, "W", 0, ARMY_SIZE), "B": _whole(lost, "B", 0, ARMY_SIZE)},
                _time(obj, "at"),
            )
        elif kind == EventType.GAME_OVER.value:
            ending = _ending(obj.get("ending"))
            if ending is None:
                raise WireFormatError("game_over needs ending {kind, winner, at}")
            body = {"type": "game_over", "ending": ending}
        else:
            raise WireFormatError(f"type {_short(kind)} is not one of {', '.join(EVENT_TYPES)}")
        return event(name, seq, game, body)
    except WireFormatError as exc:
        exc.seq = seq
        raise


def check_assignment(data: object) -> AssignmentBody:
    """An assignment's round, board and players (a new game's, or a table's kept copy)."""
    return _assignment(_object(data, "assignment"))


def _status(obj: Mapping[str, object], table: str) -> StatusMessage:
    state = _choice(obj, "state", STATES)
    assert state is not None
    out: StatusMessage = {"format": FORMAT, "table": table, "state": state}
    if "seq" in obj:
        out["seq"] = _whole(obj, "seq", 0, MAX_INT)
    if "event_seq" in obj:
        out["event_seq"] = _whole(obj, "event_seq", 0, MAX_INT)
    if "game_id" in obj:
        out["game_id"] = None if obj["game_id"] is None else _game(obj["game_id"])
    if "challenge_count" in obj:
        out["challenge_count"] = _whole(obj, "challenge_count", 0, MAX_CHALLENGES)
    if "started_at" in obj:
        out["started_at"] = _time(obj, "started_at")
    if "eliminated" in obj:
        lost = _object(obj["eliminated"], "eliminated")
        out["eliminated"] = {"W": _whole(lost, "W", 0, ARMY_SIZE),
                             "B": _whole(lost, "B", 0, ARMY_SIZE)}
    if "last_verdict" in obj:
        out["last_verdict"] = _choice(obj, "last_verdict", VERDICTS, optional=True)
    if "verdicts" in obj:
        out["verdicts"] = [_verdict(v) for v in _list(obj["verdicts"], "verdicts",
                                                       MAX_CHALLENGES)]
    if "slots" in obj:
        slots = _object(obj["slots"], "slots")
        out["slots"] = {k: _text(slots, k, 0, 32) for k in ("attacker", "defender")
                        if k in slots}
    if "readers" in obj:
        readers = _object(obj["readers"], "readers")
        out["readers"] = {"ok": _flag(readers, "ok"), "detail": _text(readers, "detail")}
    if "ending" in obj:
        out["ending"] = _ending(obj["ending"])
    if "message" in obj:
        out["message"] = _text(obj, "message")
    if "mode" in obj:
        mode = _choice(obj, "mode", MODES)
        assert mode is not None
        out["mode"] = mode
    if "enrolling" in obj:
        out["enrolling"] = _flag(obj, "enrolling")
    if "broker" in obj:
        broker = _object(obj["broker"], "broker")
        out["broker"] = {"state": _text(broker, "state", 1, 32),
                         "detail": _text(broker, "detail"), "cause": _text(broker, "cause")}
    if "assignment" in obj:
        raw = obj["assignment"]
        if raw is None:
            out["assignment"] = None
        else:
            body = _object(raw, "assignment")
            a = _assignment(body)
            out["assignment"] = {**a, "text": _text(body, "text", 0, MAX_TEXT)}
    if "software" in obj:  # the table's gg-arbiter version, shown to the organiser
        out["software"] = _text(obj, "software", 1, 32)
    if "new_game_needed" in obj:  # an assignment waits for NEW GAME at the table
        out["new_game_needed"] = _flag(obj, "new_game_needed")
    return out


def _record(obj: Mapping[str, object], table: str, game: str | None) -> RecordMessage:
    gid = _game(obj.get("game"))
    if game is not None and str(gid) != game:
        raise TopicMismatchError(f"the record of game {_short(gid)} on game {game!r}'s topic")
    record = _object(obj.get("record"), "record")
    # The times shown on the game's page: within the calendar.
    _time(record, "started_at")
    ending = record.get("ending")
    if ending is not None:
        _ending(ending)
    for c in _list(record.get("challenges", []), "challenges", MAX_CHALLENGES):
        _time(_object(c, "a challenge"), "at")
    # Checked by loads(): only JSON values, numbers in bounds.
    return record_message(table, gid, cast(JsonObject, record))


def _resend(obj: Mapping[str, object], table: str) -> ResendMessage:
    request_id = _whole(obj, "id", 1, MAX_INT)
    runs: list[list[int]] = []
    for run in _list(obj.get("ranges"), "ranges", MAX_RANGES):
        if (not isinstance(run, list) or len(run) != 2
                or not all(_is_whole(x) and 1 <= x <= MAX_INT for x in run)
                or run[0] > run[1]):
            raise WireFormatError(f"a range must be [first, last] with 1 <= first <= last <="
                                  f" {MAX_INT}, not {_short(run)}")
        runs.append([run[0], run[1]])
    if not runs:
        raise WireFormatError(f"'ranges' must list 1 to {MAX_RANGES} [first, last] pairs")
    return resend_message(table, request_id, runs)


# --- field checks ---------------------------------------------------------------------------


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _object(value: object, what: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise WireFormatError(f"{what} is not a JSON object")
    return cast(Mapping[str, object], value)


def _list(value: object, what: str, most: int) -> list[object]:
    if not isinstance(value, list) or len(value) > most:
        raise WireFormatError(f"'{what}' is not a list of at most {most}")
    return cast(list[object], value)


def _seq(obj: Mapping[str, object]) -> int | None:
    seq = obj.get("seq")
    return cast(int, seq) if _is_whole(seq) and 1 <= cast(int, seq) <= MAX_INT else None


def _whole(obj: Mapping[str, object], key: str, low: int, high: int) -> int:
    value = obj.get(key)
    if not _is_whole(value) or not low <= cast(int, value) <= high:
        raise WireFormatError(f"'{key}' must be a whole number from {low} to {high},"
                              f" not {_short(value)}")
    return cast(int, value)


def _flag(obj: Mapping[str, object], key: str) -> bool:
    value = obj.get(key)
    if not isinstance(value, bool):
        raise WireFormatError(f"'{key}' must be true or false")
    return value


def _text(obj: Mapping[str, object], key: str, shortest: int = 0, longest: int = MAX_TEXT) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not shortest <= len(value) <= longest:
        raise WireFormatError(f"'{key}' must be text of {shortest} to {longest} characters")
    return value


def _choice(
    obj: Mapping[str, object], key: str, allowed: tuple[str, ...], *, optional: bool = False
) -> str | None:
    value = obj.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise WireFormatError(f"'{key}' must be one of {', '.join(allowed)},"
                              f" not {_short(value)}")
    return value


def _time(obj: Mapping[str, object], key: str) -> float | None:
    """A timestamp (seconds since 1970) or None."""
    value = obj.get(key)
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not 0 <= value <= MAX_TIMESTAMP):
        raise WireFormatError(f"'{key}' must be a time in seconds from 0 to {MAX_TIMESTAMP}")
    return value


def _game(value: object) -> GameId:
    if _is_whole(value) and 0 <= cast(int, value) <= MAX_INT:
        return cast(int, value)
    if isinstance(value, str) and GAME_ID.fullmatch(value):
        return value
    raise WireFormatError(f"game {_short(value)} is not an id")


def _assignment(obj: Mapping[str, object]) -> AssignmentBody:
    names = []
    for key in ("white", "black"):
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
            raise WireFormatError(f"'{key}' must be a name of 1 to {MAX_NAME} characters")
        names.append(value.strip())
    pairing = obj.get("pairing")
    if pairing is not None and not (isinstance(pairing, str) and PAIRING_ID.fullmatch(pairing)):
        raise WireFormatError("'pairing' must be 32 hexadecimal digits")
    return assignment(_whole(obj, "round", 0, MAX_ROUND), _whole(obj, "board", 0, MAX_BOARD),
                      names[0], names[1], pairing)


def _ending(value: object) -> EndingBody | None:
    if value is None:
        return None
    obj = _object(value, "ending")
    kind = _choice(obj, "kind", ENDINGS)
    assert kind is not None
    winner = _choice(obj, "winner", SIDES, optional=True)
    if EndingKind(kind).has_winner != (winner is not None):
        raise WireFormatError(f"a {kind} ending {'needs' if winner is None else 'has no'}"
                              " winner")
    return {"kind": kind, "winner": winner, "at": _time(obj, "at")}


def _verdict(value: object) -> VerdictBody:
    obj = _object(value, "a verdict")
    return {"number": _whole(obj, "number", 1, MAX_CHALLENGES),
            "attacker_side": _choice(obj, "attacker_side", SIDES, optional=True),
            "result": _choice(obj, "result", VERDICTS, optional=True)}
