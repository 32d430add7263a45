"""The ledger's unplayed rounds (issue 26): forfeits both ways and double, byes the
organiser gives for a coming round, events imported with them, and a ledger written
before them opening and working on: tests/hub/data/ledger-before-forfeits.sqlite, made by
the code of commit 42cb993 (event "club"): Ana 2000, Ben 1900, Cid 1800, Dee 1700, Eve
1600, 4 rounds announced; round 1 Swiss-paired, its boards at T1 and T2 (the tables'
games: White won, Black won; the second corrected to a draw), Eve's bye; round 2
Swiss-paired, board 1 at T1."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from arbiter.hub.errors import TableAssignmentError, UnplayedRoundError
from arbiter.hub.exports import trf
from arbiter.hub.ledger import Ledger
from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Bye, Colour, Pairing, Player, Result
from arbiter.tournament.trf import import_trf
from tests.support.contract import assigned, game_over, new_game

OLD = Path(__file__).parent / "data" / "ledger-before-forfeits.sqlite"
GOLDEN = Path(__file__).parents[1] / "tournament" / "golden" / "trf"
NAMES = ("Ana", "Ben", "Cid", "Dee", "Eve", "Fay")


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    """Six players (Ana highest), round 1: Ana-Dee, Eve-Ben, Cid-Fay (as given)."""
    with Ledger(tmp_path / "event.sqlite", "club") as led:
        led.admin.add_players([Player(n, 2000 - 100 * i) for i, n in enumerate(NAMES)])
        led.admin.set_total_rounds(4, "org")
        led.admin.add_round([Pairing(1, 1, "Ana", "Dee"), Pairing(1, 2, "Eve", "Ben"),
                             Pairing(1, 3, "Cid", "Fay")])
        yield led


def test_forfeits_each_way_and_double_score_and_are_audited(ledger: Ledger) -> None:
    ledger.unplayed.forfeit(1, 1, Colour.WHITE, "arbiter")
    ledger.unplayed.forfeit(1, 2, Colour.BLACK, "arbiter")
    ledger.unplayed.forfeit(1, 3, None, "arbiter")
    rows = {r.pairing.board: (r.result, r.forfeit) for r in ledger.admin.pairings(1)}
    assert rows == {1: (Result.WHITE_WIN, True), 2: (Result.BLACK_WIN, True), 3: (None, True)}
    score = {s.name: s.score for s in ledger.admin.standings()}
    assert score == {"Ana": 1, "Dee": 0, "Eve": 0, "Ben": 1, "Cid": 0, "Fay": 0}
    trail = [(c.who, c.what, c.target, c.before, c.after) for c in ledger.admin.audit()][-3:]
    assert trail == [("arbiter", "forfeit", "round 1 board 1", None, "+/-"),
                     ("arbiter", "forfeit", "round 1 board 2", None, "-/+"),
                     ("arbiter", "forfeit", "round 1 board 3", None, "-/-")]
    # The double forfeit settles its board: the next round pairs.
    assert len(ledger.admin.pair_round("swiss")) == 3
    # And the TRF says so: + and - on both sides, - on both for the double forfeit.
    lines = {line[14:47].strip(): line[91:99] for line in trf(ledger).splitlines()
             if line.startswith("001")}
    assert lines["Ana"] == "0004 w +" and lines["Dee"] == "0001 b -"
    assert lines["Ben"].endswith("b +") and lines["Eve"].endswith("w -")
    assert lines["Cid"].endswith("w -") and lines["Fay"].endswith("b -")


def test_a_forfeit_is_the_organisers_and_a_table_no_longer_changes_it(ledger: Ledger) -> None:
    ledger.admin.assign_table(1, 1, "T1", "org")
    ledger.unplayed.forfeit(1, 1, Colour.BLACK, "org")
    ledger.events.record("T1", new_game("T1", 1, "1", assigned(ledger, 1, 1)))
    ledger.events.record("T1", game_over("T1", 2, "1", "resignation", "W"))
    row = ledger.admin.pairings(1)[0]
    assert (row.result, row.forfeit) == (Result.BLACK_WIN, True)
    # A correction to a game played clears the forfeit, and is audited as from "-/+".
    ledger.admin.correct_result(1, 1, Result.WHITE_WIN, "org")
    row = ledger.admin.pairings(1)[0]
    assert (row.result, row.forfeit) == (Result.WHITE_WIN, False)
    assert ledger.admin.audit()[-1].before == "-/+"
    # The same forfeit twice is one entry.
    ledger.unplayed.forfeit(1, 2, None, "org")
    ledger.unplayed.forfeit(1, 2, None, "org")
    assert [c.target for c in ledger.admin.audit()].count("round 1 board 2") == 1
    with pytest.raises(TableAssignmentError, match="forfeited"):
        ledger.admin.assign_table(1, 2, "T2", "org")


def test_a_bye_is_no_game_to_forfeit(ledger: Ledger) -> None:
    for board, code in ((1, Result.WHITE_WIN), (2, Result.DRAW), (3, Result.BLACK_WIN)):
        ledger.admin.correct_result(1, board, code, "org")
    ledger.admin.withdraw("Fay", "org")
    bye = next(p for p in ledger.admin.pair_round("swiss") if p.black is None)
    with pytest.raises(UnplayedRoundError, match="is a bye"):
        ledger.unplayed.forfeit(2, bye.board, Colour.WHITE, "org")


def test_a_bye_requested_keeps_the_player_out_of_the_next_pairing(ledger: Ledger) -> None:
    for board, code in ((1, Result.WHITE_WIN), (2, Result.DRAW), (3, Result.BLACK_WIN)):
        ledger.admin.correct_result(1, board, code, "org")
    ledger.unplayed.request_bye("Cid", 2, "org")
    ledger.unplayed.request_bye("Dee", 3, "org", Bye.ZERO)
    # Before the pairing: no points yet for round 2.
    assert {s.name: s.score for s in ledger.admin.standings()}["Cid"] == 0
    paired = ledger.admin.pair_round("swiss")
    names = [n for p in paired for n in (p.white, p.black) if n is not None]
    assert "Cid" not in names and sorted(names) == ["Ana", "Ben", "Dee", "Eve", "Fay"]
    assert sum(p.black is None for p in paired) == 1  # five left: the pairing's own bye
    assert {s.name: s.score for s in ledger.admin.standings()}["Cid"] == 0.5
    # Round 2 is paired: its byes are fixed; round 3's can still be taken back.
    with pytest.raises(UnplayedRoundError, match="paired already"):
        ledger.unplayed.cancel_bye("Cid", 2, "org")
    with pytest.raises(UnplayedRoundError, match="already has a bye"):
        ledger.unplayed.request_bye("Dee", 3, "org")
    ledger.unplayed.cancel_bye("Dee", 3, "org")
    assert [(g.pairing.round, g.pairing.white, g.bye) for g in ledger.unplayed.byes()] == [
        (2, "Cid", Bye.HALF)]
    trail = [(c.what, c.target, c.before, c.after) for c in ledger.admin.audit()][-3:]
    assert trail == [("bye", "Cid round 2", None, "H"), ("bye", "Dee round 3", None, "Z"),
                     ("bye", "Dee round 3", "Z", None)]


def test_a_bye_request_that_cannot_be_kept_is_refused(ledger: Ledger) -> None:
    with pytest.raises(UnplayedRoundError, match="paired already"):
        ledger.unplayed.request_bye("Ana", 1, "org")
    with pytest.raises(UnplayedRoundError, match="4 rounds"):
        ledger.unplayed.request_bye("Ana", 5, "org")
    with pytest.raises(UnknownPlayerError):
        ledger.unplayed.request_bye("Zed", 2, "org")
    with pytest.raises(UnplayedRoundError, match="pairing's to give"):
        ledger.unplayed.request_bye("Ana", 2, "org", Bye.PAIRING)
    ledger.unplayed.request_bye("Fay", 3, "org")
    ledger.admin.withdraw("Fay", "org")  # the bye to come goes with the withdrawal
    assert ledger.unplayed.byes() == []
    with pytest.raises(UnplayedRoundError, match="withdrawn"):
        ledger.unplayed.request_bye("Fay", 2, "org")


def test_manual_and_round_robin_pairings_respect_the_byes(tmp_path: Path) -> None:
    with Ledger(tmp_path / "rr.sqlite", "rr") as led:
        led.admin.add_players([Player(n) for n in NAMES[:4]])
        led.unplayed.request_bye("Dee", 1, "org")
        with pytest.raises(PairingError, match="round-robin"):
            led.admin.pair_round("round-robin")
        with pytest.raises(PairingError, match="Dee has a bye"):
            led.admin.pair_manual([("Ana", "Ben"), ("Cid", "Dee")], "org")
        paired = led.admin.pair_manual([("Ana", "Ben"), ("Cid", None)], "org")
        assert [(p.white, p.black) for p in paired] == [("Ana", "Ben"), ("Cid", None)]


def test_the_archive_keeps_forfeits_and_byes(ledger: Ledger, tmp_path: Path) -> None:
    ledger.unplayed.forfeit(1, 1, None, "org")
    ledger.unplayed.request_bye("Eve", 2, "org")
    data = ledger.archive.export()
    with Ledger(tmp_path / "copy.sqlite", "club") as copy:
        copy.archive.load(data)
        assert copy.admin.pairings(1)[0].forfeit and copy.admin.pairings(1)[0].result is None
        assert copy.unplayed.byes() == ledger.unplayed.byes()
    # An archive written before forfeits (no "forfeit", no "byes") loads as none.
    for row in data["pairings"]:
        del row["forfeit"]
    del data["byes"]
    with Ledger(tmp_path / "older.sqlite", "club") as older:
        older.archive.load(data)
        assert not any(r.forfeit for r in older.admin.pairings())
        assert older.unplayed.byes() == []


def test_a_ledger_made_before_forfeits_opens_and_works_on(tmp_path: Path) -> None:
    path = tmp_path / "hub.sqlite"
    shutil.copy(OLD, path)
    with Ledger(path, "club") as led:
        rows = led.admin.pairings()
        # As the old code left it (its printout when made): round 1 Ana-Cid 1-0 at T1,
        # Dee-Ben corrected to a draw at T2, Eve's bye; round 2 paired, nothing played.
        assert [(r.pairing.round, r.pairing.white, r.pairing.black,
                 r.result, r.table, r.corrected, r.forfeit) for r in rows] == [
            (1, "Ana", "Cid", Result.WHITE_WIN, "T1", False, False),
            (1, "Dee", "Ben", Result.DRAW, "T2", True, False),
            (1, "Eve", None, None, None, False, False),
            (2, "Ben", "Ana", None, "T1", False, False),
            (2, "Eve", "Dee", None, None, False, False),
            (2, "Cid", None, None, None, False, False),
        ]
        assert led.archive.verify() == []
        # Its table still scores round 2, the organiser forfeits the other board, gives a
        # bye for round 3, and round 3 pairs without that player.
        led.events.record("T1", new_game("T1", 3, "2", assigned(led, 2, 1)))
        led.events.record("T1", game_over("T1", 4, "2", "resignation", "B"))
        led.unplayed.forfeit(2, 2, Colour.WHITE, "org")
        led.unplayed.request_bye("Ben", 3, "org")
        third = led.admin.pair_round("swiss")
        assert "Ben" not in {n for p in third for n in (p.white, p.black)}
        score = {s.name: s.score for s in led.admin.standings()}
        assert score == {"Ana": 2, "Ben": 1, "Cid": 1, "Dee": 0.5, "Eve": 2}
        assert led.archive.verify() == []


def test_an_event_begun_elsewhere_imports_with_its_forfeits_and_byes(tmp_path: Path) -> None:
    text = (GOLDEN / "gen-020p-7r-f10-h10-r20-seed1.trf").read_bytes().decode()
    event = import_trf(text)
    assert any(g.forfeit for g in event.games) and any(
        g.bye in (Bye.HALF, Bye.ZERO) for g in event.games if g.pairing.is_bye)
    with Ledger(tmp_path / "event.sqlite", "open") as led:
        led.unplayed.import_event(event.players, event.games, event.total_rounds)
        assert len(led.admin.rounds()) == 7
        # Every player's score is the file's (columns 81-84).
        file_scores = {line[14:47].strip(): float(line[80:84]) for line in text.split("\r")
                       if line.startswith("001")}
        assert {s.name: s.score for s in led.admin.standings()} == file_scores
        with pytest.raises(PairingError, match="already holds"):
            led.unplayed.import_event(event.players, event.games, event.total_rounds)


def test_late_entries_and_absent_rounds_import_and_pair(tmp_path: Path) -> None:
    # Hand-written TRF (LF endings, no XXR): Ana, Ben, Cid, Dee play round 1; Eve enters
    # in round 2 (round 1 blank); Dee is absent in round 2 ("0000 - -") and back in
    # round 3, not yet paired. Round 2: Ana-Eve 1-0, Ben-Cid ½.
    def line(rank: int, name: str, blocks: str) -> str:
        rating = 2000 - 100 * rank
        return f"001 {rank:>4}      {name:<33} {rating:>4}{'':27}  0.0 {rank:>4}" + blocks

    text = "\n".join([
        "012 Late",
        line(1, "Ana", "  0004 w 1  0005 w 1"),
        line(2, "Ben", "  0003 b =  0003 w ="),
        line(3, "Cid", "  0002 w =  0002 b ="),
        line(4, "Dee", "  0001 b 0  0000 - -"),
        line(5, "Eve", "            0001 b 0"),
    ]) + "\n"
    event = import_trf(text)
    assert event.total_rounds == 2 and not any(p.withdrawn for p in event.players)
    with Ledger(tmp_path / "late.sqlite", "late") as led:
        led.unplayed.import_event(event.players, event.games, event.total_rounds)
        assert [(r.pairing.round, r.pairing.white, r.pairing.black) for r in
                led.admin.pairings()] == [(1, "Ana", "Dee"), (1, "Cid", "Ben"),
                                          (2, "Ana", "Eve"), (2, "Ben", "Cid")]
        score = {s.name: s.score for s in led.admin.standings()}
        assert score == {"Ana": 2, "Ben": 1, "Cid": 1, "Dee": 0, "Eve": 0}
        # The export says the same: Eve's round 1 and Dee's round 2 as not paired.
        blocks = {ln[14:47].strip(): ln[91:] for ln in trf(led).splitlines()
                  if ln.startswith("001")}
        assert blocks["Eve"] == "0000 - -  0001 b 0"
        assert blocks["Dee"] == "0001 b 0  0000 - -"
        led.admin.set_total_rounds(3, "org")
        third = led.admin.pair_round("swiss")
        assert sorted(n for p in third for n in (p.white, p.black) if n) == [
            "Ana", "Ben", "Cid", "Dee", "Eve"]


def test_a_forfeited_board_is_no_silent_table(ledger: Ledger) -> None:
    ledger.admin.assign_table(1, 1, "T1", "org")
    ledger.tables.set_online("T1", False)
    assert [t for t, _why in ledger.tables.silent(timedelta(minutes=5))] == ["T1"]
    # Nobody came: the board needs nothing more from its table.
    ledger.unplayed.forfeit(1, 1, None, "org")
    assert ledger.tables.silent(timedelta(minutes=5)) == []
