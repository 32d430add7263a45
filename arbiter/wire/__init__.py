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

One format, four modules, every name re-exported here (``wire.topic(...)``,
``wire.parse(...)``): :mod:`~arbiter.wire.topics` (the topic names, built and split),
:mod:`~arbiter.wire.messages` (limits, enumerations, the typed payloads and their
constructors), :mod:`~arbiter.wire.jsontext` (JSON with bounded numbers) and
:mod:`~arbiter.wire.parse` (the validation).
"""

from __future__ import annotations

from arbiter.wire.jsontext import has_lone_surrogate, loads
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
    BrokerLink,
    ChallengeBody,
    ChallengeEvent,
    Eliminated,
    EndingBody,
    Event,
    EventBody,
    EventHead,
    EventType,
    GameId,
    GameOverBody,
    GameOverEvent,
    JsonObject,
    JsonValue,
    Message,
    NewGameBody,
    NewGameEvent,
    Readers,
    RecordMessage,
    ResendMessage,
    StatusAssignment,
    StatusMessage,
    VerdictBody,
    assignment,
    assignment_message,
    canonical,
    challenge,
    encode,
    event,
    game_over,
    new_game,
    record_message,
    resend_message,
)
from arbiter.wire.parse import (
    check,
    check_assignment,
    check_event,
    parse,
)
from arbiter.wire.topics import (
    MAX_BYTES,
    RETAINED,
    ROOT,
    TABLE_WRITES,
    Topic,
    TopicName,
    event_filter,
    legacy_record_topic,
    prefix,
    split,
    table_filter,
    table_pattern,
    topic,
    topic_of,
)

__all__ = [
    "ENDINGS",
    "EVENT_TYPES",
    "FORMAT",
    "GAME_ID",
    "MAX_BOARD",
    "MAX_BYTES",
    "MAX_CHALLENGES",
    "MAX_INT",
    "MAX_NAME",
    "MAX_RANGES",
    "MAX_RECORDS",
    "MAX_ROUND",
    "MAX_TEXT",
    "MAX_TIMESTAMP",
    "MODES",
    "OFFLINE",
    "ONLINE",
    "PAIRING_ID",
    "RETAINED",
    "ROOT",
    "SIDES",
    "STATES",
    "TABLE_WRITES",
    "VERDICTS",
    "AssignmentBody",
    "AssignmentMessage",
    "BrokerLink",
    "ChallengeBody",
    "ChallengeEvent",
    "Eliminated",
    "EndingBody",
    "Event",
    "EventBody",
    "EventHead",
    "EventType",
    "GameId",
    "GameOverBody",
    "GameOverEvent",
    "JsonObject",
    "JsonValue",
    "Message",
    "NewGameBody",
    "NewGameEvent",
    "Readers",
    "RecordMessage",
    "ResendMessage",
    "StatusAssignment",
    "StatusMessage",
    "Topic",
    "TopicName",
    "VerdictBody",
    "assignment",
    "assignment_message",
    "canonical",
    "challenge",
    "check",
    "check_assignment",
    "check_event",
    "encode",
    "event",
    "event_filter",
    "game_over",
    "has_lone_surrogate",
    "legacy_record_topic",
    "loads",
    "new_game",
    "parse",
    "prefix",
    "record_message",
    "resend_message",
    "split",
    "table_filter",
    "table_pattern",
    "topic",
    "topic_of",
]
