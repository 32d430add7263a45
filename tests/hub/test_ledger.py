"""The ledger: events exactly once, results from the tables, corrections, exports, archives."""

from __future__ import annotations

import csv
import io
import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from arbiter import wire
from arbiter.hub.errors import (
    ArchiveError,
    ContradictingEventError,
    ExportError,
    LedgerEventError,
    TableAssignmentError,
)
from arbiter.hub.exports import export
from arbiter.hub.ledger import Ledger
from arbiter.tournament.errors import DuplicatePlayerError, PairingError, UnknownPlayerError
from arbiter.tournament.model import Pairing, Player, Result
from arbiter.tournament.standings import TieBreak
from arbiter.wire.errors import TopicMismatchError
from arbiter.wire.errors import WireFormatError as MalformedEventError
from tests.support.clock import FakeClock
from tests.support.contract import assigned, assignment, challenge, game_over, new_game
from web.hub import views


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime(2026, 11, 23, 20, 0, tzinfo=UTC).timestamp())


@pytest.fixture
def ledger(tmp_path: Path, clock: FakeClock) -> Iterator[Ledger]:
    with Ledger(tmp_path / "event.sqlite", "open-2026", clock=clock.wall) as led:
        yield led


@pytest.fixture
def paired(ledger: Ledger) -> Ledger:
    """Four players, round robin round 1 (Berger: 1-4, 2-3) at tables T1 and T2."""
    ledger.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dee")])
    assert ledger.admin.pair_round("round-robin") == [
        Pairing(1, 1, "Ana", "Dee"), Pairing(1, 2, "Ben", "Cid")
    ]
    ledger.admin.assign_table(1, 1, "T1", who="org")
    ledger.admin.assign_table(1, 2, "T2", who="org")
    return ledger


def test_ledger_records_an_event_exactly_once(ledger: Ledger) -> None:
    event = new_game("T1", 1, "g1")
    assert ledger.events.record("T1", event) is True
    assert ledger.events.record("T1", dict(reversed(list(event.items())))) is False  # same JSON
    assert ledger.events.of_table("T1") == [event]
    assert ledger.events.last_seq("T1") == 1
    assert ledger.tables.names() == ["T1"]


def test_ledger_refuses_a_contradicting_event_and_logs_it(
    ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    ledger.events.record("T1", new_game("T1", 1, "g1"))
    with caplog.at_level(logging.WARNING), pytest.raises(ContradictingEventError):
        ledger.events.record("T1", new_game("T1", 1, "g2"))
    assert ledger.events.of_table("T1") == [new_game("T1", 1, "g1")]
    assert [(t, s) for _, t, s, _ in ledger.events.rejections()] == [("T1", 1)]
    assert "T1" in caplog.text and "contradicts" in caplog.text


def test_ledger_refuses_a_payload_naming_another_table(ledger: Ledger) -> None:
    with pytest.raises(TopicMismatchError):
        ledger.events.record("T1", new_game("T2", 1, "g1"))
    assert ledger.events.of_table("T1") == [] and ledger.events.of_table("T2") == []
    assert len(ledger.events.rejections()) == 1


def _broken(change: dict[str, Any]) -> dict[str, Any]:
    return {**game_over("T1", 3, "g1", "flag_home", "W"), **change}


@pytest.mark.parametrize(
    "event",
    [
        _broken({"format": 2}),
        _broken({"seq": 0}),
        _broken({"seq": "3"}),
        _broken({"seq": True}),
        _broken({"game": None}),
        _broken({"type": "reveal"}),
        _broken({"ending": {"kind": "flag_home", "winner": "X"}}),
        _broken({"ending": {"kind": "timeout", "winner": "W"}}),
        {**new_game("T1", 1, "g1"),
         "assignment": {"round": 1, "board": "1", "white": "a", "black": "b"}},
        {**challenge("T1", 2, "g1", 1, 0, 1), "eliminated": {"W": 0}},
    ],
)
def test_ledger_refuses_malformed_events(ledger: Ledger, event: dict[str, Any]) -> None:
    with pytest.raises(MalformedEventError):
        ledger.events.record("T1", event)
    assert ledger.events.of_table("T1") == []


def test_ledger_gaps_name_the_missing_runs(ledger: Ledger) -> None:
    for seq in (2, 5, 6, 9):
        ledger.events.record("T1", challenge("T1", seq, "g1", seq, 0, 0))
    assert ledger.events.gaps("T1") == [(1, 1), (3, 4), (7, 8)]
    for seq in (1, 3, 4, 7, 8):
        ledger.events.record("T1", challenge("T1", seq, "g1", seq, 0, 0))
    assert ledger.events.gaps("T1") == []


def test_ledger_scores_a_game_played_on_its_assignment(paired: Ledger) -> None:
    a = assigned(paired, 1, 1)
    for event in (
        new_game("T1", 1, "g1", a),
        challenge("T1", 2, "g1", 1, 0, 1),
        challenge("T1", 3, "g1", 2, 1, 1),
        game_over("T1", 4, "g1", "flag_captured", "B"),
    ):
        paired.events.record("T1", event)
    row = paired.admin.pairings(1)[0]
    assert row.result is Result.BLACK_WIN and row.table == "T1" and not row.corrected
    (game,) = paired.events.games()
    assert (game.challenges, game.lost_w, game.lost_b, game.ending, game.scored) == (
        2, 1, 1, "flag_captured", True
    )
    assert paired.archive.verify() == []


def test_ledger_keeps_but_does_not_score_unassigned_or_mismatched_games(paired: Ledger) -> None:
    # T2 plays a game with no assignment, then one whose names are not board 2's,
    # then one claiming board 1, which is T1's.
    for event in (
        new_game("T2", 1, "g1", None),
        game_over("T2", 2, "g1", "resignation", "W"),
        new_game("T2", 3, "g2", assignment(1, 2, "Ben", "Dee")),
        game_over("T2", 4, "g2", "resignation", "W"),
        new_game("T2", 5, "g3", assignment(1, 1, "Ana", "Dee")),
        game_over("T2", 6, "g3", "resignation", "W"),
    ):
        paired.events.record("T2", event)
    assert [r.result for r in paired.admin.pairings(1)] == [None, None]
    assert [(g.game, g.result, g.scored) for g in paired.events.games()] == [
        ("g1", Result.WHITE_WIN, False),
        ("g2", Result.WHITE_WIN, False),
        ("g3", Result.WHITE_WIN, False),
    ]


def test_ledger_scores_once_a_missing_new_game_arrives(paired: Ledger) -> None:
    paired.events.record("T2", game_over("T2", 2, "g1", "draw", None))
    assert paired.admin.pairings(1)[1].result is None
    assert paired.events.gaps("T2") == [(1, 1)]
    paired.events.record("T2", new_game("T2", 1, "g1", assigned(paired, 1, 2)))
    assert paired.admin.pairings(1)[1].result is Result.DRAW


def test_ledger_correction_is_audited_and_wins_over_later_events(
    paired: Ledger, clock: FakeClock
) -> None:
    clock.advance(timedelta(minutes=5, milliseconds=250).total_seconds())
    paired.admin.correct_result(1, 1, Result.DRAW, who="chief arbiter")
    paired.events.record("T1", new_game("T1", 1, "g1", assigned(paired, 1, 1)))
    paired.events.record("T1", game_over("T1", 2, "g1", "flag_home", "W"))
    assert paired.admin.pairings(1)[0].result is Result.DRAW
    (entry,) = paired.admin.audit()
    assert (entry.who, entry.what, entry.target, entry.before, entry.after) == (
        "chief arbiter", "result", "round 1 board 1", None, "1/2-1/2"
    )
    assert entry.at == "2026-11-23T20:05:00.250+00:00"


def test_ledger_reassigning_a_table_is_audited(paired: Ledger) -> None:
    payload = paired.admin.assign_table(1, 1, "T3", who="org")
    ids = [r.pairing_id for r in paired.admin.pairings(1)]
    assert payload == {"format": 1, "round": 1, "board": 1, "white": "Ana", "black": "Dee",
                       "pairing": ids[0]}
    assert [(c.what, c.before, c.after) for c in paired.admin.audit()] == [("reassign", "T1", "T3")]
    assert paired.admin.assignments(1) == {
        "T3": payload,
        "T2": {"format": 1, "round": 1, "board": 2, "white": "Ben", "black": "Cid",
               "pairing": ids[1]},
    }
    with pytest.raises(TableAssignmentError):
        paired.admin.assign_table(1, 1, "T2", who="org")


def test_ledger_players_unique_withdrawn_not_paired(ledger: Ledger) -> None:
    ledger.admin.import_players_csv("name,rating\nAna,1500\nBen,1700\nCid,1600\n")
    with pytest.raises(DuplicatePlayerError):
        ledger.admin.add_player("Ana")
    ledger.admin.withdraw("Cid", who="org")
    with pytest.raises(UnknownPlayerError):
        ledger.admin.withdraw("Zed", who="org")
    assert [p.name for p in ledger.admin.seeded()] == ["Ben", "Cid", "Ana"]
    assert ledger.admin.pair_round("swiss") == [Pairing(1, 1, "Ben", "Ana")]
    assert ledger.admin.audit()[0].what == "withdraw"


def test_ledger_survives_reopening_and_belongs_to_one_event(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with Ledger(path, "open") as led:
        led.admin.add_player("Ana")
        led.events.record("T1", new_game("T1", 1, "g1"))
    with Ledger(path, "open") as led:
        assert [p.name for p in led.admin.players()] == ["Ana"]
        assert led.events.last_seq("T1") == 1
    with pytest.raises(LedgerEventError):
        Ledger(path, "another")


def _play_round_robin(ledger: Ledger) -> None:
    """A whole 4-player round robin at T1 and T2: Ana beats all; Ben-Cid drawn;
    Ben and Cid beat Dee."""
    ledger.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dee")])
    seq = {"T1": 0, "T2": 0}
    winners = {
        frozenset(("Ana", "Dee")): "Ana", frozenset(("Ben", "Cid")): None,
        frozenset(("Ana", "Ben")): "Ana", frozenset(("Dee", "Cid")): "Cid",
        frozenset(("Ana", "Cid")): "Ana", frozenset(("Ben", "Dee")): "Ben",
    }
    for number in (1, 2, 3):
        for p, table in zip(ledger.admin.pair_round("round-robin"), ("T1", "T2"), strict=True):
            assert p.black is not None
            ledger.admin.assign_table(number, p.board, table, who="org")
            game = f"r{number}"
            winner = winners[frozenset((p.white, p.black))]
            side = None if winner is None else ("W" if winner == p.white else "B")
            for event in (
                new_game(table, seq[table] + 1, game, assigned(ledger, number, p.board)),
                game_over(table, seq[table] + 2, game,
                          "draw" if side is None else "flag_captured", side),
            ):
                ledger.events.record(table, event)
            seq[table] += 2


def test_ledger_round_robin_standings_export(ledger: Ledger) -> None:
    _play_round_robin(ledger)
    # Scores: Ana 3; Ben 1.5 and Cid 1.5 (drawn with each other: direct encounter 0.5 each;
    # Buchholz Ben = Ana 3 + Cid 1.5 + Dee 0 = 4.5 = Cid's; Sonneborn-Berger Ben = Dee 0
    # + half Cid 0.75 = 0.75 = Cid's): a shared 2nd place; Dee 0.
    text = export(ledger, "standings", "csv")
    assert [",".join(r) for r in csv.reader(io.StringIO(text))] == [
        "rank,name,score,played,wins,draws,losses,byes,"
        "direct-encounter,buchholz,sonneborn-berger",
        "1,Ana,3.0,3,3,0,0,0,0.0,3.0,3.0",
        "2,Ben,1.5,3,1,1,1,0,0.5,4.5,0.75",
        "2,Cid,1.5,3,1,1,1,0,0.5,4.5,0.75",
        "4,Dee,0.0,3,0,0,3,0,0.0,6.0,0.0",
    ]
    rows = json.loads(export(ledger, "pairings", "json"))
    assert len(rows) == 6 and all(r["result"] for r in rows)
    games = json.loads(export(ledger, "games", "json"))
    assert sum(g["scored"] for g in games) == 6
    ledger.admin.set_tiebreaks([TieBreak.BUCHHOLZ], who="org")
    assert next(csv.reader(io.StringIO(export(ledger, "standings", "csv"))))[-2:] == [
        "byes", "buchholz"]
    with pytest.raises(ExportError):
        export(ledger, "ranks", "csv")


def test_ledger_archive_imports_into_a_new_hub(ledger: Ledger, tmp_path: Path) -> None:
    _play_round_robin(ledger)
    ledger.admin.correct_result(3, 1, Result.DRAW, who="org")
    with pytest.raises(ContradictingEventError):
        ledger.events.record("T1", new_game("T1", 1, "other"))
    archive = json.loads(json.dumps(ledger.archive.export()))
    with Ledger(tmp_path / "new.sqlite", "open-2026") as fresh:
        fresh.archive.load(archive)
        assert fresh.archive.export() == archive
        for kind in ("standings", "pairings", "games"):
            assert export(fresh, kind, "csv") == export(ledger, kind, "csv")
        assert fresh.archive.verify() == []
        with pytest.raises(ArchiveError):
            fresh.archive.load(archive)
    with Ledger(tmp_path / "other.sqlite", "other-event") as other, pytest.raises(ArchiveError):
        other.archive.load(archive)


def test_ledger_archive_keeps_the_resend_requests(ledger: Ledger, tmp_path: Path) -> None:
    # A new hub keeps the last request of each table (the organiser page shows it); its
    # next request has a new random id, which the table (it serves each id once) serves.
    _play_round_robin(ledger)
    ledger.events.ask_resend("T1", [(2, 3)])
    second = ledger.events.ask_resend("T1", [(5, 5)], ["g1"])  # and a record it lacks
    archive = json.loads(json.dumps(ledger.archive.export()))
    with Ledger(tmp_path / "new.sqlite", "open-2026") as fresh:
        fresh.archive.load(archive)
        assert fresh.events.resends() == ledger.events.resends()
        assert fresh.events.resends()["T1"].records == ("g1",)
        assert fresh.events.ask_resend("T1", [(7, 7)]).id != second.id
    older = {k: v for k, v in archive.items() if k != "resends"}  # written before resends
    with Ledger(tmp_path / "older.sqlite", "open-2026") as fresh:
        fresh.archive.load(older)
        assert fresh.events.resends() == {}
        assert fresh.admin.standings() == ledger.admin.standings()


def test_ledger_archive_holds_every_column_the_ledger_keeps(ledger: Ledger) -> None:
    # Read from the ledger's own schema, so a column added later and forgotten in the
    # archive fails here (the resend requests' records were, once). Games are not kept:
    # an import derives them again from the events.
    with closing(sqlite3.connect(ledger.store.path)) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"
                                           " AND name NOT IN ('games', 'sqlite_sequence')")]
        assert {"players", "pairings", "events", "resends"} <= set(tables)
        _play_round_robin(ledger)
        ledger.tables.set_record("T1", "g1", {"game": "g1"})
        ledger.events.ask_resend("T1", [(2, 3)], ["g2"])
        exported = ledger.archive.export()
        for table in tables:
            columns = {c for _, c, *_ in db.execute(f"PRAGMA table_info({table})")}
            rows = exported[table]
            assert rows or table in ("byes", "corrections", "rejections", "refused"), table
            for row in rows:
                assert set(row) == columns, table


def test_ledger_verify_reports_a_game_that_disagrees_with_its_events(
    paired: Ledger, tmp_path: Path
) -> None:
    paired.events.record("T1", new_game("T1", 1, "g1", assigned(paired, 1, 1)))
    paired.events.record("T1", challenge("T1", 2, "g1", 1, 0, 1))
    assert paired.archive.verify() == []
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        db.execute("UPDATE games SET challenges = 5")
    assert paired.archive.verify() == ["game g1 of table T1 differs from its events"]


def test_ledger_swiss_waits_for_every_result(ledger: Ledger) -> None:
    ledger.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dee")])
    ledger.admin.pair_round("swiss")
    ledger.admin.correct_result(1, 1, Result.WHITE_WIN, who="org")
    with pytest.raises(PairingError, match="round 1 board 2"):
        ledger.admin.pair_round("swiss")
    ledger.admin.correct_result(1, 2, Result.DRAW, who="org")
    assert len(ledger.admin.pair_round("swiss")) == 2


def test_ledger_flags_silent_tables_of_the_round(paired: Ledger, clock: FakeClock) -> None:
    quiet = timedelta(minutes=5)
    assert paired.tables.silent(quiet) == [("T1", "no event yet"), ("T2", "no event yet")]
    paired.events.record("T1", new_game("T1", 1, "g1", assigned(paired, 1, 1)))
    paired.events.record("T2", new_game("T2", 1, "g1", assigned(paired, 1, 2)))
    paired.tables.set_online("T2", False)  # its last will
    assert paired.tables.silent(quiet) == [("T2", "offline")]
    clock.advance(timedelta(minutes=6).total_seconds())
    paired.events.record("T2", game_over("T2", 2, "g1", "draw", None))  # T2's game is over
    assert paired.tables.silent(quiet) == [("T1", "no event since 2026-11-23T20:00:00.000+00:00")]


def test_retained_flags_skip_their_own_fsync_and_events_keep_full_sync(ledger: Ledger) -> None:
    # A table's online flag and status come again from the broker (retained), so they
    # commit without an fsync of their own; events always commit with synchronous=FULL.
    statements: list[str] = []
    db = ledger.store._db
    db.set_trace_callback(statements.append)
    try:
        ledger.tables.set_online("T1", True)
        ledger.tables.set_status("T1", {"format": 1, "table": "T1", "state": "idle"})
        flags = list(statements)
        statements.clear()
        assert ledger.events.record("T1", new_game("T1", 1, "1"))
        event = list(statements)
    finally:
        db.set_trace_callback(None)
    assert flags.count("PRAGMA synchronous=NORMAL") == 2
    assert not any("synchronous=NORMAL" in s for s in event)
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again


def test_ledger_round_robin_refused_too_early_fixes_no_order(ledger: Ledger) -> None:
    ledger.admin.add_player("Ana")
    with pytest.raises(PairingError):
        ledger.admin.pair_round("round-robin")  # one player: nothing to pair yet
    ledger.admin.add_players([Player("Ben", 1900), Player("Cy"), Player("Di")])
    pairings = ledger.admin.pair_round("round-robin")
    assert len(pairings) == 2  # all four, Ben seeded first
    assert {p.white for p in pairings} | {p.black for p in pairings} == {"Ana", "Ben", "Cy", "Di"}


def _replayed(paired: Ledger, table: str) -> list[wire.Event]:
    """Board 2 (Ben-Cid) at T2 under one kept assignment: game g2 drawn, then g3 won by
    White (the players pressed NEW GAME and played again)."""
    a = assigned(paired, 1, 2)
    return [
        new_game(table, 1, "g2", a),
        game_over(table, 2, "g2", "draw", None),
        new_game(table, 3, "g3", a),
        challenge(table, 4, "g3", 1, 0, 1),
        game_over(table, 5, "g3", "flag_captured", "W"),
    ]


@pytest.mark.parametrize("late", [None, 1, 0], ids=["in order", "game_over late",
                                                    "new_game late"])
def test_ledger_result_is_the_first_games_whatever_the_arrival_order(
    paired: Ledger, late: int | None
) -> None:
    events = _replayed(paired, "T2")
    if late is not None:  # a resend brings it after the rest
        events.append(events.pop(late))
    for event in events:
        paired.events.record("T2", event)
    # The rule: the first game started with the pairing, not abandoned, counts.
    assert paired.admin.pairings(1)[1].result is Result.DRAW
    assert [(g.game, g.scored) for g in paired.events.games("T2")] == [("g2", True), ("g3", False)]
    board = views.rounds(paired)[0]["boards"][1]
    assert (board["result"], board["game"]["game"]) == ("1/2-1/2", "g2")
    assert paired.archive.verify() == []
    assert paired.events.unscored_games() == [
        ("T2", "g3", "played again under round 1 board 2's assignment (game g2 counts)")]


def test_ledger_an_abandoned_first_game_gives_way_to_the_next(paired: Ledger) -> None:
    a = assigned(paired, 1, 2)
    for event in (new_game("T2", 1, "g2", a), game_over("T2", 2, "g2", "abandoned", None),
                  new_game("T2", 3, "g3", a), game_over("T2", 4, "g3", "resignation", "B")):
        paired.events.record("T2", event)
    assert paired.admin.pairings(1)[1].result is Result.BLACK_WIN
    assert paired.events.unscored_games() == []


def test_ledger_verify_reports_a_result_that_is_not_its_scored_games(
    paired: Ledger, tmp_path: Path
) -> None:
    for event in _replayed(paired, "T2"):
        paired.events.record("T2", event)
    with sqlite3.connect(tmp_path / "event.sqlite") as db:
        db.execute("UPDATE pairings SET result='1-0' WHERE round=1 AND board=2")
    assert paired.archive.verify() == [
        "round 1 board 2: its result is not the one of its scored game"]


def test_ledger_setting_an_unchanged_result_does_nothing(paired: Ledger) -> None:
    paired.events.record("T1", new_game("T1", 1, "g1", assigned(paired, 1, 1)))
    paired.events.record("T1", game_over("T1", 2, "g1", "flag_home", "B"))
    assert paired.admin.pairings(1)[0].result is Result.BLACK_WIN
    paired.admin.correct_result(1, 1, Result.BLACK_WIN, who="org")  # Set pressed, nothing changed
    assert paired.admin.audit() == []
    assert paired.admin.pairings(1)[0].corrected is False
    paired.admin.correct_result(1, 2, None, who="org")  # no result, set to none
    assert paired.admin.audit() == [] and paired.admin.pairings(1)[1].corrected is False


def test_ledger_flags_a_game_played_without_new_game_after_the_assignment(
    ledger: Ledger, clock: FakeClock
) -> None:
    ledger.admin.add_players([Player("Ana"), Player("Ben")])
    ledger.events.record("T1", new_game("T1", 1, "g1"))  # the start-up game, no pairing
    clock.advance(timedelta(minutes=1).total_seconds())
    ledger.admin.pair_round("round-robin")
    ledger.admin.assign_table(1, 1, "T1", who="org")
    clock.advance(timedelta(minutes=1).total_seconds())
    ledger.events.record("T1", challenge("T1", 2, "g1", 1, 0, 1))  # played on, no NEW GAME
    ledger.events.record("T1", game_over("T1", 3, "g1", "flag_captured", "W"))
    assert ledger.admin.pairings(1)[0].result is None
    assert ledger.events.unscored_games() == [
        ("T1", "g1", "played without NEW GAME after round 1 board 1 was assigned")]


FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+cmd", "@SUM(1)", "-2+3", "=1+1", "@x",
            "\tTab", "\rCr"]


def test_ledger_csv_exports_neutralise_formulas(ledger: Ledger) -> None:
    # OWASP (CSV Injection): a cell a spreadsheet would run as a formula starts with a
    # single quote, and every cell is quoted.
    # (A tab or carriage return starts no player's name: the name rule refuses them.)
    ledger.admin.add_players([Player(FORMULAS[0]), Player(FORMULAS[1]), Player(FORMULAS[2]),
                              Player(FORMULAS[3])])
    ledger.admin.pair_round("round-robin")
    ledger.admin.assign_table(1, 1, "T1", who="org")
    # A table's new game names players the ledger never checked.
    ledger.events.record("T9", new_game("T9", 1, "g1", assignment(1, 7, FORMULAS[4],
                                                                  FORMULAS[5])))
    for kind in ("standings", "pairings", "games"):
        text = export(ledger, kind, "csv")
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        shown = [f for f in FORMULAS if "'" + f in cells]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))], kind
        assert all(line.startswith('"') for line in text.split("\n") if line), kind
        assert shown, kind
    games = list(csv.DictReader(io.StringIO(export(ledger, "games", "csv"))))
    assert (games[0]["white"], games[0]["black"]) == ("'=1+1", "'@x")


def test_ledger_flags_a_table_of_the_round_that_publishes_nothing(
    paired: Ledger, clock: FakeClock
) -> None:
    quiet, grace = timedelta(minutes=10), timedelta(minutes=1)
    assert paired.tables.silent(quiet, grace) == [("T1", "no event yet"), ("T2", "no event yet")]
    # T2 is heard (its status), but its events do not come (a publish the ACL refuses).
    paired.tables.set_status("T2", {"format": 1, "table": "T2", "state": "waiting", "event_seq": 3})
    clock.advance(timedelta(minutes=2).total_seconds())
    assert paired.tables.silent(quiet, grace) == [
        ("T1", "publishes nothing: not heard since round 1 was paired"
               " (check its login and table name)"),
        ("T2", "publishes nothing: its status counts 3 events, 0 arrived"),
    ]
    for event in (new_game("T2", 1, "g1", assigned(paired, 1, 2)),
                  challenge("T2", 2, "g1", 1, 0, 1), challenge("T2", 3, "g1", 2, 0, 2)):
        paired.events.record("T2", event)
    assert [t for t, _why in paired.tables.silent(quiet, grace)] == ["T1"]


def test_ledger_pairings_of_some_tables_only(paired: Ledger) -> None:
    """The live feed reads the pairings of the tables that changed: those and no other,
    also for more names than one query's list takes."""
    assert [r.pairing.board for r in paired.admin.pairings(1, tables={"T2"})] == [2]
    assert paired.admin.pairings(1, tables={"T9"}) == []
    assert paired.admin.pairings(1, tables=()) == []
    many = {f"X{i}" for i in range(2000)} | {"T1"}
    assert [r.table for r in paired.admin.pairings(1, tables=many)] == ["T1"]
    assert paired.admin.pairings(1, tables={"T1", "T2"}) == paired.admin.pairings(1)


def test_ledger_snapshot_reads_one_commit(paired: Ledger) -> None:
    """What the live feed reads for one message comes from one commit: a write committed
    meanwhile shows only after the snapshot."""
    with paired.store.snapshot():
        before = paired.events.games()
        assert paired.events.record("T1", new_game("T1", 1, "g1")) is True
        with paired.store.snapshot():  # joins the open one
            assert paired.events.games() == before == []
        assert paired.tables.state("T1") == (None, None, None)
    assert [g.game for g in paired.events.games()] == ["g1"]
    assert paired.tables.state("T1")[2] is not None


def test_ledger_a_flood_of_refused_messages_is_counted_not_kept(
    ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    """One table sending bad messages by the thousand fills neither the hub's disk nor
    its log: its latest 200 notes are kept and all of them counted; another table's note
    stays."""
    from arbiter.hub.table_events import REJECTIONS_KEPT

    ledger.events.note_rejection("T2", 7, "events: not JSON: JSONDecodeError")
    with caplog.at_level(logging.WARNING):
        for seq in range(1, 3001):
            with pytest.raises(TopicMismatchError):
                ledger.events.record("T1", new_game("T9", seq, "g1"))
    kept = [(t, s) for _at, t, s, _why in ledger.events.rejections()]
    assert kept == [("T2", 7)] + [("T1", s) for s in range(3001 - REJECTIONS_KEPT, 3001)]
    assert ledger.events.refused() == {"T1": 3000, "T2": 1}
    lines = [r for r in caplog.records if "table 'T1'" in r.getMessage()]
    assert 10 <= len(lines) <= 13  # the first ten, then one in a thousand
    assert "3000 refused from this table so far" in lines[-1].getMessage()
