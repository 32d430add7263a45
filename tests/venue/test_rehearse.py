"""`gg-arbiter venue rehearse` (issue 26, item 8): a broker (broker-config's Mosquitto),
the hub and simulated tables joined with `join` start on one machine, play their rounds
until every result is on the hub, say where to look, and all end on one Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from pathlib import Path

import pytest

from arbiter.app.cli import main
from tests.support.spawn import Session, free_port
from tests.support.tools import require_tool
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(300)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _get(port: int, path: str) -> dict:  # type: ignore[type-arg]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return json.loads(r.read())  # type: ignore[no-any-return]


def test_rehearse_plays_a_venue_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    require_tool("mosquitto")
    port = free_port()
    work = tmp_path / "rehearsal"
    run = Session(["venue", "rehearse", "--tables", "3", "--players", "6", "--rounds", "2",
                   "--port", str(port), "--dir", str(work), "--seed", "5"])
    try:
        at = run.expect(f"the hub: http://127.0.0.1:{port}/", timeout=240)
        pin = run.lines[at].rsplit("PIN ", 1)[1].rstrip(")")
        assert pin.isdigit() and len(pin) == 6
        run.expect("all 2 rounds played", after=at, timeout=240)
        children = _children(run.proc.pid)
        names = [Path(f"/proc/{c}/cmdline").read_bytes().split(b"\0") for c in children]
        assert sum(any(a.endswith(b"mosquitto") for a in n) for n in names) == 1
        assert sum(b"--sim" in n for n in names) == 3 and sum(b"hub" in n for n in names) == 1
        # Each table joined from broker-config's files: its config names the venue broker.
        config = (work / "tables" / "2" / "config.toml").read_text()
        assert 'table = "table-2"' in config or 'table = "2"' in config, config
        # Every board of both rounds has its result, from the games played at the tables:
        # 3 boards a round, one point each, so the standings hold 6 points in all.
        rounds = _get(port, "/api/rounds")
        assert [len(r["boards"]) for r in rounds] == [3, 3]
        assert all(b["result"] and b["game"] for r in rounds for b in r["boards"])
        rows = _get(port, "/api/standings")["rows"]
        assert len(rows) == 6 and sum(r["score"] for r in rows) == 6.0
        assert all(r["played"] == 2 for r in rows)
        assert all(t["online"] is True for t in _get(port, "/api/venue")["tables"])
        run.proc.send_signal(signal.SIGINT)
        code, out = run.finish(timeout=60)
        assert code == 0, out
        assert "rehearsal stopped" in out
        for child in children:  # every one ended (and was waited for: no zombie)
            assert not os.path.exists(f"/proc/{child}"), (child, out)
        assert (work / "logs" / "hub.log").exists()
    finally:
        run.kill()


def _running_under(work: Path) -> list[str]:
    """Command lines of the processes that name ``work`` (the rehearsal's children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(work) in line:
                found.append(line)
    return found


def test_ctrl_c_while_the_venue_starts_leaves_nothing_running(tmp_path: Path) -> None:
    require_tool("mosquitto")
    work = tmp_path / "rehearsal"
    run = Session(["venue", "rehearse", "--tables", "4", "--rounds", "1",
                   "--port", str(free_port()), "--dir", str(work)])
    try:
        # The broker and the hub are up, the tables on their way.
        wait_until(lambda: (work / "logs" / "hub.log").exists(), timeout=120,
                   what="the hub started")
        assert _running_under(work)
        run.proc.send_signal(signal.SIGINT)
        code, out = run.finish(timeout=60)
        assert code == 0, out
        assert "rehearsal stopped" in out
        assert _running_under(work) == []
    finally:
        run.kill()


@pytest.mark.parametrize(("args", "says"), [
    (["--tables", "0"], "a rehearsal needs a table, two players and a round"),
    (["--players", "1"], "a rehearsal needs a table, two players and a round"),
    (["--port", "0"], "the hub's port 0 is not one to open a page on"),
    (["--tables", "2", "--players", "5"], "5 players need 3 tables, not 2"),
])
def test_rehearse_refuses_what_cannot_be_rehearsed(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["venue", "rehearse", *args]) == 2
    assert capsys.readouterr().err.strip() == says


def test_rehearse_with_an_odd_player_plays_around_the_bye(tmp_path: Path) -> None:
    require_tool("mosquitto")
    port = free_port()
    run = Session(["venue", "rehearse", "--tables", "2", "--players", "3", "--rounds", "2",
                   "--port", str(port), "--dir", str(tmp_path / "r")])
    try:
        run.expect("all 2 rounds played", timeout=240)
        rounds = _get(port, "/api/rounds")
        byes = [b for r in rounds for b in r["boards"] if b["bye"]]
        games = [b for r in rounds for b in r["boards"] if not b["bye"]]
        assert len(byes) == 2 and len(games) == 2 and all(b["result"] for b in games)
        run.proc.send_signal(signal.SIGTERM)  # as systemd or kill would stop it
        code, out = run.finish(timeout=60)
        assert code == 0, out
        played = [ln for ln in out.splitlines() if ln.startswith("round ")]
        assert played == ["round 1 played: 1 game, every result on the hub",
                          "round 2 played: 1 game, every result on the hub"], out
    finally:
        run.kill()
