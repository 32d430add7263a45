"""A result only from a game of this event and this pairing (issue 27): a fresh ledger
with last week's event name, players and pairings, fed last week's games by tables asked
for all their events, scores only the games started under its own pairings."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter import wire
from arbiter.fleet.assignment import Assignment
from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Pairing, Player, Result
from arbiter.wire.errors import WireFormatError
from tests.support.contract import assigned, assignment, game_over, new_game

PLAYERS = ("Ana", "Ben", "Cid", "Dee")


def _event(path: Path) -> Ledger:
    """A ledger of event "club" with round 1 paired (Ana-Dee, Ben-Cid) at T1 and T2."""
    ledger = Ledger(path, "club")
    ledger.admin.add_players([Player(n, 2000 - i) for i, n in enumerate(PLAYERS)])
    ledger.admin.add_round([Pairing(1, 1, "Ana", "Dee"), Pairing(1, 2, "Ben", "Cid")])
    ledger.admin.assign_table(1, 1, "T1", "org")
    ledger.admin.assign_table(1, 2, "T2", "org")
    return ledger


@pytest.fixture
def weeks(tmp_path: Path) -> Iterator[tuple[Ledger, Ledger]]:
    with _event(tmp_path / "last.sqlite") as last, _event(tmp_path / "this.sqlite") as this:
        yield last, this


def _last_week(last: Ledger) -> list[wire.Event]:
    """T1's journal: last week's game 10 (White won) under last week's assignment, a game
    11 of a table software that sent no pairing id (White won); then this week's."""
    return [
        new_game("T1", 1, "10", assigned(last, 1, 1)),
        game_over("T1", 2, "10", "flag_captured", "W"),
        new_game("T1", 3, "11", assignment(1, 1, "Ana", "Dee")),
        game_over("T1", 4, "11", "resignation", "B"),
    ]


@pytest.mark.parametrize("order", ["as played", "this week's first"])
def test_pairing_id_last_weeks_games_are_kept_listed_never_scored(
    weeks: tuple[Ledger, Ledger], order: str
) -> None:
    last, this = weeks
    ids = {r.pairing_id for led in weeks for r in led.admin.pairings(1)}
    assert len(ids) == 4 and all(re.fullmatch(r"[0-9a-f]{32}", str(i)) for i in ids)
    events = [*_last_week(last),
              new_game("T1", 5, "17", assigned(this, 1, 1)),
              game_over("T1", 6, "17", "resignation", "B")]
    if order != "as played":
        events = events[4:] + events[:4]
    for event in events:
        this.events.record("T1", event)
    # Game 17 counts: the first started (lowest seq) of the games carrying this pairing.
    assert this.admin.pairings(1)[0].result is Result.BLACK_WIN
    assert [g.game for g in this.events.games("T1", scored_only=True)] == ["17"]
    assert [g.game for g in this.events.games("T1")] == ["10", "11", "17"]  # kept
    why = "not started under round 1 board 1's pairing (from before it was paired: an" \
          " earlier run of the event, or another hub's)"
    assert this.events.unscored_games() == [("T1", "10", why), ("T1", "11", why)]
    assert this.archive.verify() == []


def test_pairing_id_an_archive_keeps_the_ids(weeks: tuple[Ledger, Ledger],
                                            tmp_path: Path) -> None:
    _last, this = weeks
    this.events.record("T1", new_game("T1", 1, "17", assigned(this, 1, 1)))
    this.events.record("T1", game_over("T1", 2, "17", "resignation", "B"))
    with Ledger(tmp_path / "restored.sqlite", "club") as restored:
        restored.archive.load(this.archive.export())
        assert restored.admin.pairings(1) == this.admin.pairings(1)
        assert restored.admin.pairings(1)[0].result is Result.BLACK_WIN


def test_pairing_id_travels_from_the_assignment_into_the_new_game(
    weeks: tuple[Ledger, Ledger]
) -> None:
    """The hub's retained assignment -> the table's Assignment (kept in its file as
    to_dict) -> the NEW GAME it starts: the id arrives whole."""
    _last, this = weeks
    payload = wire.encode(this.admin.assignments(1)["T1"])
    held = Assignment.from_payload(payload)
    assert held is not None and held.pairing == this.admin.pairings(1)[0].pairing_id
    kept = Assignment.from_dict(held.to_dict())  # DATA/assignment.json across a reboot
    event = wire.check_event(new_game("T1", 1, "1", wire.check_assignment(kept.to_dict())),
                             "T1")
    this.events.record("T1", event)
    this.events.record("T1", game_over("T1", 2, "1", "resignation", "W"))
    assert this.admin.pairings(1)[0].result is Result.WHITE_WIN


@pytest.mark.parametrize("bad", ["", "ABCDEF" * 6, "0" * 31, 7, "g" * 32])
def test_pairing_id_malformed_is_refused(bad: object) -> None:
    with pytest.raises(WireFormatError, match="pairing"):
        wire.check_assignment({**assignment(1, 1, "Ana", "Dee"), "pairing": bad})


def test_pairing_id_an_older_ledger_keeps_its_rule(tmp_path: Path) -> None:
    """A ledger written before pairing ids: its pairings have none, and a game of the
    board's round, board and players counts as it did."""
    with _event(tmp_path / "old.sqlite") as old, old.store.write() as db:
        db.execute("UPDATE pairings SET pairing_id=NULL")
    with Ledger(tmp_path / "old.sqlite", "club") as old:
        old.events.record("T1", new_game("T1", 1, "1", assignment(1, 1, "Ana", "Dee")))
        old.events.record("T1", game_over("T1", 2, "1", "resignation", "W"))
        assert old.admin.pairings(1)[0].result is Result.WHITE_WIN


def test_pairing_id_a_ledger_file_without_the_new_columns_gets_them(tmp_path: Path) -> None:
    """A file written before issue 27 (no pairing ids, no game limits): opened, it gets the
    columns, each game its start, and scores as before."""
    path = tmp_path / "old.sqlite"
    with _event(path) as old:
        old.events.record("T1", new_game("T1", 1, "1", assignment(1, 1, "Ana", "Dee")))
        old.events.record("T1", game_over("T1", 2, "1", "resignation", "W"))
    db = sqlite3.connect(path)
    for index in ("games_limit", "games_of_board", "games_scored", "games_latest"):
        db.execute(f"DROP INDEX {index}")
    for table, column in (("pairings", "pairing_id"), ("games", "started_seq"),
                          ("games", "over_limit"), ("games", "pairing_id"),
                          ("games", "limit_round")):
        db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.commit()
    db.close()
    with Ledger(path, "club") as reopened:
        assert reopened.admin.pairings(1)[0].pairing_id is None
        assert reopened.store.read("SELECT started_seq, limit_round FROM games") == [(1, 1)]
        reopened.events.record("T1", new_game("T1", 3, "2", assignment(1, 1, "Ana", "Dee")))
        assert [g.game for g in reopened.events.games(scored_only=True)] == ["1"]
        assert reopened.admin.pairings(1)[0].result is Result.WHITE_WIN
        assert reopened.archive.verify() == []
