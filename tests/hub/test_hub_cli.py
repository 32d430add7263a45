"""`gg-arbiter hub`: scripting the ledger, and a served hub killed with -9 mid-round."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter import wire
from arbiter.app.cli import main
from arbiter.hub.ledger import Ledger
from arbiter.wire.errors import WireFormatError
from tests.support.contract import challenge, game_over, new_game
from tests.support.mqtt import mosquitto
from tests.support.spawn import gg_arbiter
from tests.support.waiting import wait_until

EVENT = "club-night"


def hub(data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(data), *args])


def test_hub_cli_runs_an_event_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    players = tmp_path / "players.csv"
    players.write_text("name,rating\nAna,1800\nBen,1700\nCid,1600\nDee,1500\n")
    assert hub(tmp_path, "players", "import", str(players)) == 0
    assert hub(tmp_path, "pair", "--system", "swiss") == 0
    out = capsys.readouterr().out
    # Round 1: top half (Ana, Ben) against bottom half (Cid, Dee); White alternates by board.
    assert "round 1 board 1: Ana - Cid" in out and "round 1 board 2: Dee - Ben" in out
    assert hub(tmp_path, "assign", "1", "1", "T1") == 0
    capsys.readouterr()
    assert hub(tmp_path, "silent", "--quiet", "5") == 1
    assert capsys.readouterr().out == "T1\tno event yet\n"
    assert hub(tmp_path, "result", "1", "1", "0-1", "--who", "chief") == 0
    assert hub(tmp_path, "result", "1", "2", "1-0") == 0
    capsys.readouterr()
    assert hub(tmp_path, "export", "standings") == 0
    # Cid and Dee 1 each (never met: direct encounter 0; Buchholz: their opponents Ana and
    # Ben have 0 each; Sonneborn-Berger 0), so they share first; Ana and Ben share third.
    out = capsys.readouterr().out
    assert [",".join(r) for r in csv.reader(io.StringIO(out))][1:] == [
        "1,Cid,1.0,1,1,0,0,0,0.0,0.0,0.0",
        "1,Dee,1.0,1,1,0,0,0,0.0,0.0,0.0",
        "3,Ana,0.0,1,0,0,1,0,0.0,1.0,0.0",
        "3,Ben,0.0,1,0,0,1,0,0.0,1.0,0.0",
    ]
    capsys.readouterr()
    assert hub(tmp_path, "silent") == 0  # every game of the round has its result
    assert capsys.readouterr().out.startswith("no table is silent: every table of round 1 ")
    assert hub(tmp_path, "audit") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[1:] for line in lines] == [
        ["chief", "result", "round 1 board 1", "None -> 0-1"],
        ["organiser", "result", "round 1 board 2", "None -> 1-0"],
    ]
    archive = tmp_path / "archive.json"
    assert hub(tmp_path, "archive", "export", str(archive)) == 0
    assert hub(tmp_path / "new", "archive", "import", str(archive)) == 0
    assert hub(tmp_path / "new", "export", "pairings", "--format", "json") == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_hub_says_truly_where_it_serves() -> None:
    from arbiter.app.commands.hub import serving_line

    # Listening on every address: not only "127.0.0.1", which reads as this machine only.
    line = serving_line("0.0.0.0", 8088, "http://127.0.0.1:8088/")
    assert line.startswith("hub web on http://127.0.0.1:8088/")
    assert "every address" in line and "8088" in line
    assert serving_line("127.0.0.1", 8088, "http://127.0.0.1:8088/") == (
        "hub web on http://127.0.0.1:8088/")


def test_hub_cli_gaps_says_in_words_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arbiter.hub.ledger import Ledger
    from tests.support.contract import challenge, new_game

    assert hub(tmp_path, "gaps") == 0
    assert capsys.readouterr().out == "no table has events or records missing\n"
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ledger.events.record("T1", new_game("T1", 1, "1"))
        ledger.events.record("T1", challenge("T1", 4, "1", 3, 1, 2))
        ledger.events.record("T1", challenge("T1", 6, "1", 5, 2, 3))
    assert hub(tmp_path, "gaps") == 1
    assert capsys.readouterr().out == "table T1: 3 events missing (2 to 3, 5)\n"


def test_hub_cli_gaps_names_the_records_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table's record topic holds only its latest: a game over whose record the ledger
    lacks is missing, named, and asked for with the events."""
    from arbiter.hub.ledger import Ledger
    from tests.support.contract import challenge, game_over, new_game

    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ledger.events.record("T1", new_game("T1", 1, "1"))
        ledger.events.record("T1", challenge("T1", 2, "1", 1, 1, 2))
        ledger.events.record("T1", game_over("T1", 3, "1", "flag_captured", "W"))
    assert hub(tmp_path, "gaps") == 1
    assert capsys.readouterr().out == "table T1: the record of game 1 missing\n"


def test_hub_cli_reports_errors_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hub(tmp_path, "players", "add", "Ana") == 0
    assert hub(tmp_path, "players", "add", "Ana") == 2
    assert "Ana" in capsys.readouterr().err
    assert main(["hub", "--event", "other", "--data", str(tmp_path), "players", "list"]) == 2
    assert "ledger of event 'club-night'" in capsys.readouterr().err
    assert hub(tmp_path, "--broker", "http://x") == 2
    assert "broker must be mqtt://" in capsys.readouterr().err
    assert hub(tmp_path) == 2  # serving needs a broker
    (tmp_path / "file").write_text("")
    assert hub(tmp_path / "file", "players", "list") == 2
    assert "cannot open the ledger" in capsys.readouterr().err
    assert hub(tmp_path, "pair", "--system", "round-robin") == 2  # one player
    capsys.readouterr()


def _events(table: str, count: int, assigned: wire.AssignmentBody) -> list[wire.Event]:
    """``count`` events of one table: game g1 on round 1 board 1, then unassigned games."""
    out: list[wire.Event] = []
    for seq in range(1, count + 1):
        number, step = divmod(seq - 1, 10)
        game = f"g{number + 1}"
        if step == 0:
            a = assigned if number == 0 else None
            out.append(new_game(table, seq, game, a))
        elif step < 9:
            out.append(challenge(table, seq, game, step, step // 2, (step + 1) // 2))
        else:
            out.append(game_over(table, seq, game, "flag_captured", "W"))
    return out


class Serve:
    """`gg-arbiter hub ... --broker` as a child process."""

    def __init__(self, data: Path, port: int) -> None:
        env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
        self.proc = subprocess.Popen(
            [*gg_arbiter(), "hub", "--event", EVENT, "--data", str(data),
             "--broker", f"mqtt://127.0.0.1:{port}", "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        wait_until(lambda: any("hub serving" in ln for ln in self.lines)
                   or self.proc.poll() is not None, timeout=30)
        assert self.proc.poll() is None, "".join(self.lines)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)


def test_hub_killed_mid_round_loses_no_event(tmp_path: Path) -> None:
    data = tmp_path / "hub"
    assert hub(data, "players", "add", "Ana") == 0
    assert hub(data, "players", "add", "Ben") == 0
    assert hub(data, "pair", "--system", "round-robin") == 0
    assert hub(data, "assign", "1", "1", "T1") == 0
    with mosquitto(tmp_path / "broker") as port, Ledger(data / "hub.sqlite", EVENT) as ledger:
        first = Serve(data, port)
        table = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="table-T1")
        got: dict[str, bytes] = {}
        assigned = threading.Event()

        def note(_c: mqtt.Client, _u: object, msg: mqtt.MQTTMessage) -> None:
            got[msg.topic] = msg.payload
            assigned.set()

        table.on_message = note
        table.connect("127.0.0.1", port)
        table.loop_start()
        try:
            prefix = wire.prefix(EVENT, "T1")
            table.subscribe(prefix + "assignment", qos=1)
            assert assigned.wait(10), "the hub published no assignment at start"
            assert json.loads(got[prefix + "assignment"])["white"] == "Ana"
            # As the table carries it into its NEW GAME (its pairing id included).
            sent = _events("T1", 400, wire.check_assignment(json.loads(got[prefix + "assignment"])))

            def publish_all() -> None:
                for event in sent:
                    table.publish(prefix + "events", json.dumps(event), qos=1)

            publisher = threading.Thread(target=publish_all)
            publisher.start()
            wait_until(lambda: ledger.events.last_seq("T1") >= 50, timeout=30)
            first.proc.kill()  # SIGKILL: mid-stream, some messages unacknowledged
            first.proc.wait(10)
            held_at_kill = len(ledger.events.of_table("T1"))
            publisher.join(30)
            second = Serve(data, port)
            try:
                wait_until(lambda: len(ledger.events.of_table("T1")) == 400, timeout=60)
            finally:
                second.proc.terminate()
                assert second.proc.wait(10) == 0
        finally:
            table.disconnect()
            table.loop_stop()
        print(f"events held at the kill: {held_at_kill} of 400")
        assert held_at_kill < 400, "the kill came too late to test anything"
        assert ledger.events.of_table("T1") == sent
        assert ledger.events.gaps("T1") == []
        assert ledger.archive.verify() == []
        assert ledger.admin.pairings(1)[0].result is not None


def test_hub_cli_assigns_a_round_to_the_suggested_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    players = tmp_path / "players.csv"
    players.write_text("name,rating\nAna,1800\nBen,1700\nCid,1600\nDee,1500\nEve,1400\n")
    assert hub(tmp_path, "players", "import", str(players)) == 0
    assert hub(tmp_path, "pair", "--system", "swiss") == 0  # two boards and a bye
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ledger.tables.set_online("1", True)  # one table heard of: board 2 has none to take
    capsys.readouterr()
    assert hub(tmp_path, "assign-round", "1") == 1
    out, err = capsys.readouterr()
    assert out == "round 1 board 1 -> table 1\n" and "board(s) 2" in err
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ledger.tables.set_online("2", True)
    assert hub(tmp_path, "assign-round", "1") == 0
    assert capsys.readouterr().out == "round 1 board 2 -> table 2\n"  # board 1 kept
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        assert {t: a["board"] for t, a in ledger.admin.assignments(1).items()} == {"1": 1, "2": 2}


def test_hub_cli_huge_numbers_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 10**30 does not fit SQLite's INTEGER: these raised OverflowError (a traceback).
    huge = str(10**30)
    assert hub(tmp_path, "players", "add", "Zed", "--rating", huge) == 2
    assert "rating" in capsys.readouterr().err
    assert hub(tmp_path, "players", "add", "Ana") == 0
    assert hub(tmp_path, "players", "add", "Ben") == 0
    assert hub(tmp_path, "pair", "--system", "round-robin") == 0
    capsys.readouterr()
    assert hub(tmp_path, "result", huge, "1", "1-0") == 2
    assert hub(tmp_path, "result", "1", huge, "1-0") == 2
    assert "no board" in capsys.readouterr().err
    for span in ("1e300", "inf", "nan"):
        assert hub(tmp_path, "silent", "--quiet", span) == 2
        assert "--quiet" in capsys.readouterr().err


def test_hub_silent_says_so_before_any_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hub(tmp_path, "silent") == 0
    assert capsys.readouterr().out == "no table is silent: no round is paired yet\n"


def test_hub_cli_gaps_lists_refused_messages_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ledger.events.record("T1", new_game("T1", 1, "g1"))
        with pytest.raises(WireFormatError):
            ledger.events.record("T1", {**challenge("T1", 2, "g1", 1, 0, 1), "number": 0})
    assert hub(tmp_path, "gaps") == 0  # nothing missing: a refused message is not a gap
    out, err = capsys.readouterr()
    assert out == "no table has events or records missing\n"
    assert "table T1 seq 2: 'number' must be a whole number from 1 to" in err


def test_hub_cli_no_legal_swiss_round_exits_1_and_is_paired_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hub(tmp_path, "players", "add", "Ana", "--rating", "1800") == 0
    assert hub(tmp_path, "players", "add", "Ben", "--rating", "1700") == 0
    assert hub(tmp_path, "pair") == 0
    assert hub(tmp_path, "result", "1", "1", "1-0") == 0
    capsys.readouterr()
    # Two players who have met: the only pairing would be a rematch (C1).
    assert hub(tmp_path, "pair") == 1
    err = capsys.readouterr().err
    assert "round 2: no legal pairing" in err and "pair-manual" in err
    assert hub(tmp_path, "pair-manual", "--game", "Ben", "Ana", "--who", "chief") == 0
    assert capsys.readouterr().out == "round 2 board 1: Ben - Ana\n"
    assert hub(tmp_path, "audit") == 0
    audit = [line.split("\t")[1:] for line in capsys.readouterr().out.splitlines()]
    assert ["chief", "pair-manual", "round 2", "None -> Ben - Ana"] in audit
    # A hand pairing must still place every active player exactly once.
    assert hub(tmp_path, "pair-manual", "--game", "Ana", "Ana") == 2
    assert "paired twice" in capsys.readouterr().err


def test_hub_cli_trf_export_import_export_is_the_same_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    players = tmp_path / "players.csv"
    players.write_text("name,rating\nAna,1800\nBen,1700\nCid,1600\nDee,1500\nEve,1400\n")
    assert hub(first, "players", "import", str(players)) == 0
    assert hub(first, "rounds", "3") == 0
    assert hub(first, "pair") == 0
    assert hub(first, "result", "1", "1", "1-0") == 0
    assert hub(first, "result", "1", "2", "1/2-1/2") == 0
    capsys.readouterr()
    assert hub(first, "export", "trf") == 0
    exported = capsys.readouterr().out
    lines = exported.splitlines()
    assert lines[:3] == ["012 club-night", "XXR 3", "XXC white1"]
    # Ana (start rank 1) beat Cid (3) with White; Eve (5) had the pairing-allocated bye.
    assert lines[3].startswith("001    1      Ana") and lines[3].endswith("  0003 w 1")
    assert lines[7].startswith("001    5      Eve") and lines[7].endswith("  0000 - U")
    trf = tmp_path / "event.trf"
    trf.write_text(exported)
    assert hub(second, "import-trf", str(trf)) == 0
    assert "5 player(s), 1 round(s) of 3 imported" in capsys.readouterr().out
    assert hub(second, "export", "trf") == 0
    assert capsys.readouterr().out == exported
    assert hub(second, "import-trf", str(trf)) == 2  # not into an event that has players
