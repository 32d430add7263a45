"""The payloads a table publishes (docs/tournament/mqtt.md), built with the wire format's types.

Everything a game in progress puts on the wire is built from its recorded
challenges (:class:`arbiter.rules.game.Challenge`): a side, a public verdict word
and counts, never a rank or a tag; the full record goes out only once the game
is over and not sealed (an abandoned game's only once the next game has begun).
The topics, types and checks are :mod:`arbiter.wire`'s, shared with the hub.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict, cast

from arbiter import __version__, wire
from arbiter.rules.game import Challenge, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.ranks import Side
from arbiter.wire import OFFLINE, ONLINE, encode

__all__ = ["OFFLINE", "ONLINE", "OutboxItem", "encode", "event_payload", "game_items",
           "record_payload", "status_payload"]


class RecordBody(TypedDict):
    """The body of a record item: the game's full record."""

    record: wire.JsonObject


@dataclass(frozen=True)
class OutboxItem:
    """One message derived from a game's journal, before it gets its sequence number.

    ``index`` is its place among the game's items (new game, challenges, game
    over, record), which only grows as the journal does. ``kind`` is the event's
    type, or None for the record (published on ``record``, not ``events``).
    """

    game: int
    index: int
    kind: wire.EventType | None
    body: wire.EventBody | RecordBody

    @property
    def is_event(self) -> bool:
        return self.kind is not None


def challenge_body(challenge: Challenge, eliminated: wire.Eliminated) -> wire.ChallengeBody:
    """The public part of one recorded challenge: who attacked and who survived, never a
    rank; ``eliminated`` is the count of fallen pieces after it."""
    return wire.challenge(challenge.number, challenge.attacker.side.letter,
                          challenge.verdict.survivor.public_word, eliminated, challenge.at)


def game_items(game: Game) -> list[OutboxItem]:
    """The game's events in order, then (once it is over and not sealed) its record, from
    the game's challenges and ending as recorded. A sealed abandoned game's record is its
    last item once revealed: the items only ever grow at the end.

    A challenge whose journal line was lost (repaired record) is still an
    event: its number, with ``attacker_side``, ``result`` and ``at`` null.
    """
    held = game.assignment
    # The pairing's id goes with it (a journal of a table before issue 27 has none).
    pairing = None if held is None else held.get("pairing")
    assignment = None if held is None else wire.assignment(
        held["round"], held["board"], held["white"], held["black"],
        pairing if isinstance(pairing, str) else None)
    items = [OutboxItem(game.id, 0, wire.EventType.NEW_GAME,
                        wire.new_game(assignment, game.started_at))]
    by_number = {c.number: c for c in game.challenges}
    fallen = {side: 0 for side in Side}
    for number in range(1, game.challenge_count + 1):
        challenge = by_number.get(number)
        if challenge is not None:
            for piece in challenge.eliminated:
                fallen[piece.side] += 1
        eliminated: wire.Eliminated = {"W": fallen[Side.WHITE], "B": fallen[Side.BLACK]}
        body = (wire.challenge(number, None, None, eliminated, None) if challenge is None
                else challenge_body(challenge, eliminated))
        items.append(OutboxItem(game.id, len(items), wire.EventType.CHALLENGE, body))
    if game.ending is not None:
        ending = game.ending
        items.append(OutboxItem(game.id, len(items), wire.EventType.GAME_OVER, wire.game_over(
            ending.kind.value, ending.winner.letter if ending.winner else None, ending.at)))
        if not game.sealed:
            items.append(OutboxItem(game.id, len(items), None,
                                    RecordBody(record=game.full_record())))
    return items


def event_payload(item: OutboxItem, *, table: str, seq: int) -> wire.Event:
    """The ``events`` message of an event item."""
    if not item.is_event:
        raise ValueError(f"item {item.index} of game {item.game} is a record, not an event")
    return wire.event(table, seq, item.game, cast(wire.EventBody, item.body))


def record_payload(item: OutboxItem, *, table: str) -> wire.RecordMessage:
    """The ``record`` message (the full record, naming its game: only once over)."""
    if item.is_event:
        raise ValueError(f"item {item.index} of game {item.game} is an event, not a record")
    return wire.record_message(table, item.game, cast(RecordBody, item.body)["record"])


def status_payload(
    status: JsonDict, *, table: str, event_seq: int | None = None
) -> wire.StatusMessage:
    """The ``status`` message: ``GET /api/status`` plus format and table, ``software``
    (this gg-arbiter's version, for the organiser's table list) and ``event_seq``, the
    last event sequence number published (so a hub can tell it lacks the tail), when
    known."""
    # The device's status is StatusMessage's fields (arbiter.device.status.build_status;
    # tests/fleet/test_payloads.py checks a real one against wire.parse).
    payload = cast(wire.StatusMessage, {**status, "format": wire.FORMAT, "table": table,
                                        "software": __version__})
    if event_seq is not None:
        payload["event_seq"] = event_seq
    return payload
