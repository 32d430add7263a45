"""A table serves the hub's request for records from its journals (issue 27, item 5): only
records the outbox itself gives, so only of games over and revealed; a sealed abandoned
game's not before the next game has begun."""

from __future__ import annotations

import json
from pathlib import Path

from arbiter import wire
from arbiter.fleet.outbox import Cursor, Outbox, Pending
from arbiter.fleet.payloads import record_payload
from arbiter.fleet.resend_service import ResendService
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore, read_game


def _pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(Piece.parse(attacker), Piece.parse(defender))


def _request(request_id: int, records: list[int], ranges: list[list[int]] | None = None) -> bytes:
    return wire.encode(wire.resend_message("7", request_id, ranges or [], records))


class _Sent:
    """What the service hands the link: each item, with a message id of its own."""

    def __init__(self) -> None:
        self.items: list[Pending] = []

    def __call__(self, pending: Pending) -> int:
        self.items.append(pending)
        return len(self.items)

    def records(self) -> list[int]:
        return [p.item.game for p in self.items if p.seq is None]


def _published(data: Path) -> Cursor:
    """How far the normal publishing went: everything the outbox gives now."""
    pending = Outbox(data).pending(Cursor(), 1000)
    return pending[-1].after


def test_records_asked_for_go_out_again_only_once_revealed(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(_pair("W:PVT", "B:FLG"))  # game 1: the flag falls, over
        store.new_game()
        store.accept(_pair("W:SPY", "B:5*G"))  # game 2: a general falls...
        store.new_game()  # ... and NEW GAME abandons it: sealed, its ranks secret
        service = ResendService(tmp_path, "7", window=100)
        sent = _Sent()
        assert service.take(_request(1, [1, 2]))
        service.serve(sent, _published(tmp_path))
        # Game 1's record, exactly as published the first time; game 2's is not given.
        assert sent.records() == [1]
        assert record_payload(sent.items[0].item, table="7")["record"] == (
            read_game(tmp_path, 1).full_record())
        assert [p.item.game for p in sent.items] == [1]  # nothing at all of game 2
        service.settled({1})
        service.serve(sent, _published(tmp_path))
        assert not service.busy  # served (and game 2's record said not published)

        store.accept(_pair("B:COL", "W:MAJ"))  # game 3 begins: game 2 is revealed
        assert service.take(_request(2, [2]))
        service.serve(sent, _published(tmp_path))
    assert sent.records() == [1, 2]
    revealed = record_payload(sent.items[-1].item, table="7")
    assert revealed["game"] == 2 and "B:5*G" in json.dumps(revealed)


def test_a_request_for_events_and_records_serves_both_in_journal_order(
    tmp_path: Path,
) -> None:
    with GameStore(tmp_path) as store:
        store.accept(_pair("W:PVT", "B:FLG"))
        store.new_game()
        store.accept(_pair("B:PVT", "W:FLG"))
        service = ResendService(tmp_path, "7", window=100)
        sent = _Sent()
        service.take(_request(5, [1, 2], [[1, 1]]))
        service.serve(sent, _published(tmp_path))
    assert [(p.seq, p.item.game) for p in sent.items] == [(1, 1), (None, 1), (None, 2)]


def test_a_request_names_records_in_the_wire_format() -> None:
    message = wire.parse(wire.Topic.RESEND, _request(9, [3, 4]), table="7")
    assert message is not None and message["records"] == [3, 4] and message["ranges"] == []
    # A request with neither events nor records asks for nothing: not the format.
    for bad in (b'{"format":1,"table":"7","id":1,"ranges":[]}',
                b'{"format":1,"table":"7","id":1,"ranges":[],"records":[]}',
                b'{"format":1,"table":"7","id":1,"ranges":[],"records":["a/b"]}',
                json.dumps({"format": 1, "table": "7", "id": 1, "ranges": [],
                            "records": list(range(wire.MAX_RECORDS + 1))}).encode()):
        try:
            wire.parse(wire.Topic.RESEND, bad, table="7")
        except wire.errors.WireFormatError:
            continue
        raise AssertionError(f"accepted {bad!r}")
