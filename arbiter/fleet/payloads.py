"""The topics and payloads a table publishes (docs/mqtt.md): pure functions.

Everything a game in progress puts on the wire is built from its public
view (no rank, no tag); the full record goes out only once the game is over.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from arbiter.fleet.assignment import WIRE_FORMAT
from arbiter.rules.game import Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.ranks import Side

ONLINE = b"true"
OFFLINE = b"false"


def prefix(event: str, table: str) -> str:
    """``gg/<event>/table/<table>/``."""
    return f"gg/{event}/table/{table}/"


def encode(payload: JsonDict | bool) -> bytes:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()


@dataclass(frozen=True)
class OutboxItem:
    """One message derived from a game's journal, before it gets its sequence number.

    ``index`` is its place among the game's items (new game, challenges, game
    over, record), which only grows as the journal does.
    """

    game: int
    index: int
    kind: str  # "new_game", "challenge", "game_over" (events) or "record"
    body: JsonDict

    @property
    def is_event(self) -> bool:
        return self.kind != "record"


def game_items(game: Game) -> list[OutboxItem]:
    """The game's events in order, then (once it is over) its record.

    A challenge whose journal line was lost (repaired record) is still an
    event: its number, with ``attacker_side`` and ``result`` null.
    """
    view = game.public_view()
    items = [OutboxItem(game.id, 0, "new_game",
                        {"assignment": game.assignment, "at": game.started_at})]
    verdicts = {v["number"]: v for v in view["verdicts"]}
    by_number = {c.number: c for c in game.challenges}
    eliminated = {side.letter: 0 for side in Side}
    for number in range(1, game.challenge_count + 1):
        verdict = verdicts.get(number)
        challenge = by_number.get(number)
        if challenge is not None:
            for piece in challenge.eliminated:
                eliminated[piece.side.letter] += 1
        body: JsonDict = {
            "number": number,
            "attacker_side": verdict["attacker_side"] if verdict else None,
            "result": verdict["result"] if verdict else None,
            "eliminated": dict(eliminated),
            "at": verdict["at"] if verdict else None,
        }
        items.append(OutboxItem(game.id, len(items), "challenge", body))
    if game.ending is not None:
        items.append(OutboxItem(game.id, len(items), "game_over",
                                {"ending": game.ending.to_dict()}))
        items.append(OutboxItem(game.id, len(items), "record", {"record": game.full_record()}))
    return items


def event_payload(item: OutboxItem, *, table: str, seq: int) -> JsonDict:
    """The JSON of an ``events`` message."""
    return {"format": WIRE_FORMAT, "table": table, "seq": seq, "game": item.game,
            "type": item.kind, **item.body}


def record_payload(item: OutboxItem, *, table: str) -> JsonDict:
    """The JSON of a ``record/<game>`` message (the full record: only once over)."""
    return {"format": WIRE_FORMAT, "table": table, "game": item.game, **item.body}


def status_payload(status: JsonDict, *, table: str, event_seq: int | None = None) -> JsonDict:
    """The JSON of the ``status`` message: ``GET /api/status`` plus format and table, and
    ``event_seq``, the last event sequence number published (so a hub can tell it lacks
    the tail), when known."""
    payload = {**status, "format": WIRE_FORMAT, "table": table}
    if event_seq is not None:
        payload["event_seq"] = event_seq
    return payload
