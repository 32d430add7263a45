"""The wire format's topics: ``gg/<event>/table/<table>/<topic>[/<game>]``, built and split
here only, with each topic's size limit and whether the broker retains it."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arbiter.wire.messages import GAME_ID, GameId


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
