"""The wire format's topics: ``gg/<event>/table/<table>/<topic>``, built and split here
only, with each topic's size limit and whether the broker retains it.

A table writes a fixed set of topics (:data:`TABLE_WRITES`), one each, so the broker's
ACL can bound what one login keeps retained: at most one message a topic, whatever it
publishes (issue 27). Its records share one retained topic, ``record``: the latest
record, which names its game in its payload. A table of an earlier release published
each game's record on ``record/<game>``: :func:`split` still reads that form.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arbiter.wire.messages import GAME_ID, GameId


class Topic(enum.Enum):
    """The last level(s) of a table's topic ``gg/<event>/table/<table>/<topic>``."""

    ONLINE = "online"
    STATUS = "status"
    EVENTS = "events"
    RECORD = "record"  # the latest record (record/<game>: an earlier release's)
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
#: The topics a table writes: its ACL grants these exact names and no other, so the
#: broker keeps at most one retained message of each for a table's login.
TABLE_WRITES = (Topic.ONLINE, Topic.STATUS, Topic.EVENTS, Topic.RECORD)


#: The first level of every topic of the format.
ROOT = "gg"


@dataclass(frozen=True)
class TopicName:
    """A table's topic, split: ``gg/<event>/table/<table>/<topic>``. ``game`` is None but
    for an earlier release's ``record/<game>``.

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


def topic(event: str, table: str, kind: Topic) -> str:
    """The name of a table's ``kind`` topic (a record's: the one its records share)."""
    return prefix(event, table) + kind.value


def legacy_record_topic(event: str, table: str, game: GameId) -> str:
    """``record/<game>``: where a table of an earlier release published a game's record
    (the hub still reads it; broker-config's ACL no longer lets a table write it).

    :raises ValueError: a game id that is not a topic level.
    """
    if not GAME_ID.fullmatch(str(game)):
        raise ValueError(f"game {game!r} is not a topic level")
    return f"{prefix(event, table)}{Topic.RECORD.value}/{game}"


def table_filter(event: str, kind: Topic | None = None) -> str:
    """The subscription (or ACL pattern) of every table's ``kind`` topic (None: all of
    them; a record's: the latest and an earlier release's per game)."""
    head = f"{ROOT}/{event}/table/+/"
    if kind is None:
        return head + "#"
    return head + kind.value + ("/#" if kind is Topic.RECORD else "")


def table_pattern(event: str, table: str, kind: Topic) -> str:
    """One table's ``kind`` topic as a subscription or a read pattern (a record's also
    matches an earlier release's ``record/<game>``: ``record/#`` matches ``record``).
    A table's write ACL names :func:`topic` exactly."""
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
    """(topic, game) of a table topic's part after the prefix (an earlier release's
    ``record/7``: game 7); None for a topic that is not of the wire format."""
    head, slash, tail = rest.partition("/")
    try:
        kind = Topic(head)
    except ValueError:
        return None
    if kind is Topic.RECORD and slash:
        return (kind, tail) if GAME_ID.fullmatch(tail) else None
    return None if tail else (kind, None)
