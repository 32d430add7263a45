"""Reading the wire: :func:`parse`, the one validation the hub's intake runs before
anything reaches the ledger (the rules it applies are listed in :mod:`arbiter.wire`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast, overload

from arbiter.rules.game import EndingKind
from arbiter.rules.ranks import ARMY_SIZE
from arbiter.wire.errors import PayloadTooLargeError, TopicMismatchError, WireFormatError
from arbiter.wire.jsontext import loads
from arbiter.wire.messages import (
    ENDINGS,
    EVENT_TYPES,
    FORMAT,
    GAME_ID,
    MAX_BOARD,
    MAX_CHALLENGES,
    MAX_INT,
    MAX_NAME,
    MAX_RANGES,
    MAX_RECORDS,
    MAX_ROUND,
    MAX_TEXT,
    MAX_TIMESTAMP,
    MODES,
    OFFLINE,
    ONLINE,
    PAIRING_ID,
    SIDES,
    STATES,
    VERDICTS,
    AssignmentBody,
    AssignmentMessage,
    EndingBody,
    Event,
    EventBody,
    EventType,
    GameId,
    JsonObject,
    Message,
    RecordMessage,
    ResendMessage,
    StatusMessage,
    VerdictBody,
    assignment,
    assignment_message,
    challenge,
    event,
    new_game,
    record_message,
    resend_message,
)
from arbiter.wire.topics import MAX_BYTES, RETAINED, Topic


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
    games = ([_game(g) for g in _list(obj["records"], "records", MAX_RECORDS)]
             if "records" in obj else [])
    if not runs and not games:
        raise WireFormatError(f"'ranges' must list 1 to {MAX_RANGES} [first, last] pairs,"
                              f" or 'records' 1 to {MAX_RECORDS} games")
    return resend_message(table, request_id, runs, games)


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
