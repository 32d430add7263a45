"""The organiser's pages and API: PIN (wrong, rate-limited), CSRF, logout, and the
actions (players, pairing, assignment, corrections with their audit, exports)."""

from __future__ import annotations

import csv
import html as html_text
import io
import re
from pathlib import Path
from typing import Any

import pytest

from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Player
from tests.support.clock import FakeClock
from tests.support.organiser import csrf as _csrf
from tests.support.organiser import login as _login
from tests.support.web import PIN
from tests.web.hub.conftest import Hub
from web.hub import create_hub_app
from web.hub.feed import VenueFeed

pytestmark = pytest.mark.timeout(60)

API = {"X-Admin-PIN": PIN}






def test_organiser_wrong_pin_is_refused_then_rate_limited(hub: Hub) -> None:
    client = hub.app.test_client()
    token = _csrf(client.get("/organiser/login").get_data(as_text=True))
    for _ in range(5):
        wrong = client.post("/organiser/login", data={"pin": "0000", "csrf": token})
        assert wrong.status_code == 403
        assert "Wrong PIN" in wrong.get_data(as_text=True)
    assert client.get("/organiser").status_code == 302  # still not logged in
    # The sixth try is refused before the PIN is even checked, the right one too.
    limited = client.post("/organiser/login", data={"pin": PIN, "csrf": token})
    assert limited.status_code == 429
    assert client.post("/api/organiser/players", json={"name": "Ana"},
                       headers=API).status_code == 429
    assert hub.ledger.admin.players() == []


def test_organiser_api_needs_the_pin(hub: Hub) -> None:
    client = hub.app.test_client()
    assert client.post("/api/organiser/players", json={"name": "Ana"}).status_code == 401
    wrong = client.post("/api/organiser/players", json={"name": "Ana"},
                        headers={"X-Admin-PIN": "1357"})
    assert wrong.status_code == 403
    assert client.get("/api/organiser/audit").status_code == 401
    assert client.get("/api/organiser/exports/standings.csv").status_code == 401
    assert hub.ledger.admin.players() == []
    ok = client.post("/api/organiser/players", json={"name": "Ana", "rating": 1500},
                     headers=API)
    assert ok.status_code == 200, ok.get_json()
    assert [(p.name, p.rating) for p in hub.ledger.admin.players()] == [("Ana", 1500)]


def test_organiser_forms_need_the_session_csrf_token(hub: Hub) -> None:
    client = hub.app.test_client()
    token = _login(client)
    refused = client.post("/organiser/players", data={"name": "Ana"})
    assert refused.status_code == 400
    forged = client.post("/organiser/players", data={"name": "Ana", "csrf": "x" * 43})
    assert forged.status_code == 400
    # The API with a session (no PIN) wants the token in a header.
    api = client.post("/api/organiser/players", json={"name": "Ana"})
    assert api.status_code == 403
    assert hub.ledger.admin.players() == []
    done = client.post("/organiser/players", data={"name": "Ana", "csrf": token})
    assert done.status_code == 302
    api = client.post("/api/organiser/players", json={"name": "Ben"},
                      headers={"X-CSRF-Token": token})
    assert api.status_code == 200
    assert [p.name for p in hub.ledger.admin.players()] == ["Ana", "Ben"]


def test_organiser_logout_ends_the_session_even_for_a_copied_cookie(hub: Hub) -> None:
    client = hub.app.test_client()
    token = _login(client)
    cookie = client.get_cookie("gg_organiser")
    assert cookie is not None
    assert client.post("/organiser/logout", data={"csrf": token}).status_code == 302
    assert client.get("/organiser").status_code == 302
    thief = hub.app.test_client()
    thief.set_cookie("gg_organiser", cookie.value)
    assert thief.get("/organiser").status_code == 302
    assert thief.post("/organiser/players", data={"name": "Eve", "csrf": token}).status_code == 403
    assert hub.ledger.admin.players() == []


def test_organiser_runs_a_round_and_corrections_are_audited(hub: Hub) -> None:
    client = hub.app.test_client()
    roster = "name,rating\nAna,1900\nBen,1800\nCy,1700\nDi,1600\n"
    assert client.post("/api/organiser/players/import", json={"csv": roster},
                       headers=API).status_code == 200
    paired = client.post("/api/organiser/rounds", json={"system": "round-robin"}, headers=API)
    assert paired.status_code == 200, paired.get_json()
    boards = hub.ledger.admin.pairings(1)
    assert len(boards) == 2
    for b in boards:
        r = client.post("/api/organiser/assign", headers=API,
                        json={"round": 1, "board": b.pairing.board, "table": str(b.pairing.board)})
        assert r.status_code == 200, r.get_json()
    # Without a broker the assignment is stored, to be published when the hub serves.
    assert set(hub.ledger.admin.assignments(1)) == {"1", "2"}
    again = client.post("/api/organiser/assign", headers=API,
                        json={"round": 1, "board": 2, "table": "1"})
    assert again.status_code == 409  # table 1 already has board 1
    # Swiss refuses to pair while round 1 has no results.
    assert client.post("/api/organiser/rounds", json={"system": "swiss"},
                       headers=API).status_code == 409
    fixed = client.post("/api/organiser/result", headers=API,
                        json={"round": 1, "board": 1, "result": "1/2-1/2", "who": "chief"})
    assert fixed.status_code == 200
    assert client.post("/api/organiser/players/withdraw", json={"name": "Di"},
                       headers=API).status_code == 200
    audit = client.get("/api/organiser/audit", headers=API).get_json()
    assert [(a["who"], a["what"], a["before"], a["after"]) for a in audit] == [
        ("chief", "result", None, "1/2-1/2"), ("organiser", "withdraw", "active", "withdrawn")]
    page = client.get("/organiser")
    assert page.status_code == 302
    _login(client)
    html = client.get("/organiser").get_data(as_text=True)
    assert "chief" in html and "1/2-1/2" in html and "withdrawn" in html
    # Exports: the standings as CSV, with the draw counted.
    text = client.get("/api/organiser/exports/standings.csv", headers=API).get_data(as_text=True)
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(text))}
    white, black = boards[0].pairing.white, boards[0].pairing.black
    assert assert_half(rows[white]) and assert_half(rows[str(black)])
    archive = client.get("/organiser/export/archive.json")
    assert archive.status_code == 200 and archive.get_json()["event"] == hub.ledger.event


def assert_half(row: dict[str, str]) -> bool:
    return float(row["score"]) == 0.5 and row["draws"] == "1"


def test_organiser_bad_input_is_a_400_not_a_change(hub: Hub) -> None:
    client = hub.app.test_client()
    for path, body in [
        ("/api/organiser/players", {"name": ""}),
        ("/api/organiser/players", {"name": "Ana", "rating": "high"}),
        ("/api/organiser/rounds", {"system": "knockout"}),
        ("/api/organiser/result", {"round": 1, "board": 1, "result": "2-0"}),
        ("/api/organiser/assign", {"round": 1, "board": 1, "table": "a/b"}),
        ("/api/organiser/tiebreaks", {"tiebreaks": ["coin-toss"]}),
        ("/api/organiser/tiebreaks", {"tiebreaks": ["buchholz", "buchholz"]}),
        ("/api/organiser/assign/round", {"round": 1}),
        ("/api/organiser/publish", {"round": "x"}),
    ]:
        r = client.post(path, json=body, headers=API)
        assert r.status_code == 400, (path, r.get_json())
    assert hub.ledger.admin.players() == [] and hub.ledger.admin.audit() == []


def _flash(client: Any) -> str:
    """The message the organiser page shows after an action."""
    html = client.get("/organiser").get_data(as_text=True)
    match = re.search(r'<p class="flash flash-(\w+)">([^<]*)</p>', html)
    assert match, "no message shown"
    return f"{match.group(1)}: {html_text.unescape(match.group(2))}"


def _form(client: Any, token: str, action: str, **fields: Any) -> str:
    response = client.post(f"/organiser/{action}", data={"csrf": token, **fields})
    assert response.status_code == 302, (action, response.status_code)
    return _flash(client)


def test_organiser_page_bad_input_gives_a_message_not_an_error(hub: Hub) -> None:
    client = hub.app.test_client()
    token = _login(client)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("players", {"name": ""}, "a player's name is empty"),
        ("players", {"name": "Ana", "rating": "high"}, "'rating' must be a whole number"),
        ("players", {"name": "A" * 34}, "more than the 33 a TRF file holds"),
        ("players", {"name": "Ana\u200b"}, "U+200B (ZERO WIDTH SPACE) cannot be in"),
        ("players", {"name": "Ana\nBen"}, "U+000A"),
        ("import", {"csv": ""}, "paste the players' CSV or choose its file"),
        ("import", {"csv": "who,rating\nAna,1\n"}, "line 1: the header has no 'name' column"),
        ("import", {"file": (io.BytesIO(b"name\n\xff\xfe\n"), "latin.csv")}, "not UTF-8"),
        ("withdraw", {"name": "Nobody"}, "no player named 'Nobody'"),
        ("pair", {"system": "knockout"}, "'system' must be swiss or round-robin"),
        ("assign-round", {"round": "1"}, "there is no round 1"),
        ("assign-round", {"round": "x"}, "'round' must be a whole number"),
        ("result", {"round": "1", "board": "1", "result": "none"}, "no board 1 in round 1"),
        ("publish", {"round": "1"}, "round 1 has no board assigned"),
        ("tiebreaks", {}, "'tiebreaks' must list some of"),
        ("tiebreaks", {"tiebreak-1": "buchholz", "tiebreak-2": "buchholz"}, "chosen once"),
    ]
    for action, fields, says in cases:
        shown = _form(client, token, action, **fields)
        assert shown.startswith("error: ") and says in shown, (action, shown)
    assert hub.ledger.admin.players() == [] and hub.ledger.admin.audit() == []


def test_organiser_page_runs_players_pairing_and_tables(hub: Hub) -> None:
    client = hub.app.test_client()
    token = _login(client)
    assert _form(client, token, "players", name="Ana", rating="1900") == "ok: Ana added"
    upload = io.BytesIO("name,rating\nBen,1800\nCy,1700\nDi,1600\nÉva,1500\n".encode())
    assert _form(client, token, "import", file=(upload, "players.csv")) == "ok: 4 player(s) added"
    for table in ("2", "10", "1"):  # heard of: ordered by number, 1, 2, 10
        hub.ledger.tables.set_online(table, True)
    assert _form(client, token, "pair", system="swiss").startswith("ok: round 1 paired")
    rows = hub.ledger.admin.pairings(1)
    assert [r.pairing.is_bye for r in rows] == [False, False, True]
    html = client.get("/organiser").get_data(as_text=True)
    # Board n is offered the n-th table heard of; the bye has no table.
    offered = dict(re.findall(r'name="table-(\d+)" value="([^"]*)"', html))
    assert offered == {"1": "1", "2": "2"}
    done = _form(client, token, "assign-round", round="1", **{f"table-{b}": t
                                                                for b, t in offered.items()})
    assert done.startswith("ok: round 1: board 1 -> table 1")
    assert set(hub.ledger.admin.assignments(1)) == {"1", "2"}
    # Re-assigning board 2 to table 10 is a correction under the session's name.
    assert _form(client, token, "whoami", who="chief").startswith("ok: ")
    moved = _form(client, token, "assign-round", round="1", **{"table-1": "1", "table-2": "10"})
    assert moved == "ok: round 1: board 2 -> table 10 (published at next start)"
    refused = _form(client, token, "assign-round", round="1", **{"table-1": "10"})
    assert refused.startswith("error: ") and "already has board 2" in refused
    assert _form(client, token, "result", round="1", board="1", result="0-1").startswith("ok: ")
    assert [(a.who, a.what, a.before, a.after) for a in hub.ledger.admin.audit()] == [
        ("chief", "reassign", "2", "10"), ("chief", "result", None, "0-1")]
    assert _form(client, token, "withdraw", name="Éva") == "ok: Éva withdrawn"
    assert _form(client, token, "publish", round="1").startswith("ok: round 1: published")
    # Tie-breaks by place: 1st Buchholz, 2nd direct encounter, 3rd none.
    chosen = {"tiebreak-1": "buchholz", "tiebreak-2": "direct-encounter", "tiebreak-3": ""}
    assert _form(client, token, "tiebreaks", **chosen).startswith("ok: tie-breaks: buchholz")
    assert [t.value for t in hub.ledger.admin.tiebreaks()] == ["buchholz", "direct-encounter"]


def test_organiser_api_assigns_a_round_to_the_suggested_tables(hub: Hub) -> None:
    client = hub.app.test_client()
    roster = "name,rating\nAna,1900\nBen,1800\nCy,1700\nDi,1600\n"
    assert client.post("/api/organiser/players/import", json={"csv": roster},
                       headers=API).status_code == 200
    assert client.post("/api/organiser/rounds", json={"system": "round-robin"},
                       headers=API).status_code == 200
    hub.ledger.tables.set_online("B", True)  # only one table heard of: board 2 gets none
    done = client.post("/api/organiser/assign/round", json={"round": 1}, headers=API)
    assert done.status_code == 200, done.get_json()
    assert hub.ledger.admin.assignments(1).keys() == {"B"}
    # Named tables win over the suggestion; a table taken by another board is refused
    # (409) while the rest is done.
    both = client.post("/api/organiser/assign/round", headers=API,
                       json={"round": 1, "tables": {"1": "B", "2": "B"}})
    assert both.status_code == 409 and "already has board 1" in both.get_json()["error"]
    moved = client.post("/api/organiser/assign/round", headers=API,
                        json={"round": 1, "tables": {"1": "A", "2": "B"}})
    assert moved.status_code == 200, moved.get_json()
    assert {t: a["board"] for t, a in hub.ledger.admin.assignments(1).items()} == {"A": 1, "B": 2}
    again = client.post("/api/organiser/publish", json={"round": 1}, headers=API)
    assert again.status_code == 200 and "next start" in again.get_json()["done"]


def test_organiser_page_refreshing_itself_does_not_keep_the_session_alive(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    with Ledger(tmp_path / "hub.sqlite", "club") as led:
        app = create_hub_app(led, VenueFeed(led), tmp_path, test_config={
            "ADMIN_PIN": PIN, "TESTING": True, "ADMIN_IDLE_SECONDS": 600, "ADMIN_CLOCK": clock})
        client = app.test_client()
        _login(client)
        live = client.get("/organiser/live")
        assert live.status_code == 200 and 'id="rounds-live"' in live.get_data(as_text=True)
        clock.advance(400)
        assert client.get("/organiser/live").status_code == 200  # still within the idle time
        clock.advance(400)  # 800 s since the last real use, though 400 s since a live fetch
        ended = client.get("/organiser/live")
        assert ended.status_code == 302 and ended.headers["Location"].endswith("/organiser/login")
        assert client.get("/organiser").status_code == 302
        # A real use (the page itself) does restart the idle time.
        _login(client)
        clock.advance(400)
        assert client.get("/organiser").status_code == 200
        clock.advance(400)
        assert client.get("/organiser/live").status_code == 200


@pytest.mark.parametrize(("path", "body"), [
    ("/api/organiser/players", {"name": "Zed", "rating": 10**30}),
    ("/api/organiser/players", {"name": "Zed", "rating": "1" * 30}),
    ("/api/organiser/players", {"name": "Zed", "rating": 1e300}),
    ("/api/organiser/result", {"round": 10**30, "board": 1, "result": "1-0"}),
    ("/api/organiser/result", {"round": 1, "board": 10**30, "result": "1-0"}),
    ("/api/organiser/assign", {"round": 1, "board": 10**30, "table": "T1"}),
    ("/api/organiser/publish", {"round": 10**30}),
])
def test_organiser_huge_numbers_are_a_bad_request_not_a_crash(
    hub: Hub, path: str, body: dict[str, Any]
) -> None:
    # 10**30 does not fit SQLite's INTEGER: it answered 500 (OverflowError).
    client = hub.app.test_client()
    hub.ledger.admin.add_players([Player("Ana"), Player("Ben")])
    hub.ledger.admin.pair_round("round-robin")
    answer = client.post(path, json=body, headers=API)
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert "whole number from 0 to" in answer.get_json()["error"]


@pytest.mark.parametrize("number", ["Infinity", "NaN", "-Infinity", "1e300"])
def test_organiser_non_finite_numbers_are_a_bad_request(hub: Hub, number: str) -> None:
    client = hub.app.test_client()
    answer = client.post("/api/organiser/players", data=f'{{"name": "Zed", "rating": {number}}}',
                         headers={**API, "Content-Type": "application/json"})
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert hub.ledger.admin.players() == []


def test_organiser_page_imports_and_downloads_an_event_as_trf(hub: Hub) -> None:
    golden = (Path(__file__).resolve().parents[2] / "tournament" / "golden"
              / "dutch-009p-5r-seed3.trf")
    text = golden.read_text(encoding="utf-8")
    client = hub.app.test_client()
    token = _login(client)
    page = client.get("/organiser").get_data(as_text=True)
    assert "Import an event (FIDE TRF)" in page and 'data-busy="Pairing' in page
    bad = _form(client, token, "import-trf", file=(io.BytesIO(b"001 x\n"), "bad.trf"))
    assert bad.startswith("error: ") and "at least 84 characters" in bad
    done = _form(client, token, "import-trf", file=(io.BytesIO(text.encode()), "event.trf"))
    assert done == "ok: 9 player(s) and 5 round(s) of 5 imported"
    # The same event comes back out byte for byte, but for the event's name (line 012)
    # and the rank column (86-89), which is the hub's standings' rank (its tie-breaks).
    download = client.get("/organiser/export/event.trf")
    assert download.status_code == 200
    assert download.headers["Content-Disposition"].endswith('.trf"')
    out = download.get_data(as_text=True).splitlines()

    def unranked(line: str) -> str:
        return line[:85] + line[89:] if line.startswith("001") else line

    assert out[0] == f"012 {hub.ledger.event}"
    assert [unranked(x) for x in out[1:]] == [unranked(x) for x in text.splitlines()[1:]]
    ranks = {r["name"]: r["rank"] for r in client.get("/api/standings").get_json()["rows"]}
    assert {x[14:47].strip(): int(x[85:89]) for x in out if x.startswith("001")} == ranks
    # Once the event has players the import is no longer offered.
    assert "Import an event (FIDE TRF)" not in client.get("/organiser").get_data(as_text=True)


def test_organiser_api_says_when_no_legal_swiss_pairing_exists(hub: Hub) -> None:
    client = hub.app.test_client()
    roster = "name,rating\nAna,1900\nBen,1800\n"
    assert client.post("/api/organiser/players/import", json={"csv": roster},
                       headers=API).status_code == 200
    assert client.post("/api/organiser/rounds", json={"system": "swiss"},
                       headers=API).status_code == 200
    assert client.post("/api/organiser/result", headers=API,
                       json={"round": 1, "board": 1, "result": "1-0"}).status_code == 200
    # Round 2 could only be a rematch: refused, naming the round, nothing stored.
    refused = client.post("/api/organiser/rounds", json={"system": "swiss"}, headers=API)
    assert refused.status_code == 409
    assert refused.get_json()["error"].startswith("round 2: no legal pairing: ")
    assert "pair-manual" in refused.get_json()["error"]
    assert hub.ledger.admin.rounds() == [(1, "swiss")]


def test_organiser_table_list_shows_software_and_last_heard(tmp_path: Path) -> None:
    # A table's status as its link publishes it, through the hub's one wire check.
    import json

    from arbiter import __version__
    from arbiter.fleet.payloads import status_payload
    from arbiter.wire import Topic, parse

    clock = FakeClock(start=1_795_000_000.0)  # 2026-11-18 ... UTC
    with Ledger(tmp_path / "hub.sqlite", "open", clock=clock.wall) as ledger:
        raw = json.dumps(status_payload({"state": "idle"}, table="7", event_seq=0)).encode()
        status = parse(Topic.STATUS, raw, table="7")
        assert status is not None and status["software"] == __version__
        ledger.tables.set_online("7", True)
        clock.advance(42.0)
        ledger.tables.set_status("7", status)
        app = create_hub_app(ledger, VenueFeed(ledger), tmp_path,
                             test_config={"ADMIN_PIN": PIN, "TESTING": True})
        client = app.test_client()
        _login(client)
        page = client.get("/organiser").get_data(as_text=True)
    row = re.search(r'<tr data-table="7".*?</tr>', page, flags=re.S)
    assert row, page
    heard = clock.wall().strftime("%H:%M:%S")
    assert f'<td class="sm-hide software">{__version__}</td>' in row.group(0)
    assert f'<td class="sm-hide last-heard">{heard}</td>' in row.group(0)


def test_organiser_damaged_admin_file_names_this_hubs_data_directory(tmp_path: Path) -> None:
    # A damaged admin.json: the 503's repair command must mend this hub's, not the
    # default data directory's (issue 19, finding 15).
    data = tmp_path / "hub data"
    data.mkdir()
    (data / "admin.json").write_text('{"secret": "x", "pin":', encoding="utf-8")
    with Ledger(data / "hub.sqlite", "open-2026") as ledger:
        app = create_hub_app(ledger, VenueFeed(ledger), data, test_config={"TESTING": True})
        client = app.test_client()
        assert client.get("/").status_code == 200  # the public pages do not need it
        page = client.get("/organiser/login")
        api = client.get("/api/organiser/audit", headers=API)
    want = f"gg-arbiter hub --event open-2026 --data '{data}' set-pin"
    assert page.status_code == 503 and want in html_text.unescape(page.get_data(as_text=True))
    assert api.status_code == 503 and want in api.get_json()["error"]


def test_organiser_sees_a_flooding_tables_count_not_its_every_refusal(hub: Hub) -> None:
    """A table that sent 300 bad messages: the page lists the latest 50 refusals and says
    how many there were in all; the JSON has the count and the notes kept."""
    for seq in range(1, 301):
        hub.ledger.events.note_rejection("T1", seq, "events: not JSON: JSONDecodeError")
    hub.ledger.events.note_rejection("T2", 4, "status: 'state' must be one of ...")
    client = hub.app.test_client()
    _login(client)
    page = client.get("/organiser").get_data(as_text=True)
    assert page.count('class="rejection"') == 50
    assert "Table T1: 300 messages refused in all (the latest are listed)" in page
    assert "Table T2:" not in page  # its one refusal is listed: nothing more to say
    attention = client.get("/api/organiser/tables", headers=API).get_json()
    assert attention["refused"] == {"T1": 300, "T2": 1}
    assert len(attention["rejections"]) == 201  # T1's latest 200 and T2's one
