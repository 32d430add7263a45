"""The organiser's imports: sized for a 1,000-player event on their own routes (the server
and Flask alike), every other route still at 64 KiB; the one names rule on the API and
the page; a name TRF cannot hold answered as such, never a 500."""

from __future__ import annotations

import http.client
import io
import json

import pytest

from tests.support.organiser import login
from tests.support.web import PIN
from tests.web.hub.conftest import Hub
from web.hub.organiser import IMPORT_BODY_BYTES
from web.kit.body import MAX_BODY_BYTES

pytestmark = pytest.mark.timeout(60)

API = {"X-Admin-PIN": PIN}


def _event_trf(players: int, rounds: int = 9) -> str:
    """A TRF file of ``players`` entrants and no round played yet."""
    lines = ["012 Big open", f"XXR {rounds}"]
    for rank in range(1, players + 1):
        name = f"Player {rank:04d}, Firstname"
        lines.append(f"001 {rank:>4}      {name:<33} {2400 - rank:>4}{'':27}  0.0 {rank:>4}")
    return "\n".join(lines) + "\n"


def _post(hub: Hub, path: str, body: bytes | int) -> tuple[int, dict[str, object]]:
    """POST ``body`` as JSON to the hub as it serves (uvicorn); a number: only the headers of
    a body that long (a refusal comes before any of it is sent)."""
    conn = http.client.HTTPConnection("127.0.0.1", hub.server.port, timeout=30)
    try:
        if isinstance(body, int):
            conn.putrequest("POST", path)
            for key, value in {**API, "Content-Type": "application/json",
                               "Content-Length": str(body)}.items():
                conn.putheader(key, value)
            conn.endheaders()
        else:
            conn.request("POST", path, body=body,
                         headers={**API, "Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def test_a_thousand_player_trf_imports_through_the_api_other_routes_stay_small(
    hub: Hub,
) -> None:
    text = _event_trf(1000)
    body = json.dumps({"trf": text}).encode()
    assert MAX_BODY_BYTES < len(body) < IMPORT_BODY_BYTES  # 64 KiB would have refused it
    status, answer = _post(hub, "/api/organiser/import-trf", body)
    assert (status, answer) == (200, {"ok": True, "done": "1000 player(s) and 0 round(s) of 9"
                                                          " imported"})
    assert len(hub.ledger.admin.players()) == 1000
    # Every other route keeps the 64 KiB limit: refused before it is read.
    status, answer = _post(hub, "/api/organiser/players", MAX_BODY_BYTES + 1)
    assert status == 413 and "request entity too large" in str(answer["error"])
    # And the import's own limit holds.
    status, answer = _post(hub, "/api/organiser/import-trf", IMPORT_BODY_BYTES + 1)
    assert status == 413 and "request entity too large" in str(answer["error"])
    assert len(hub.ledger.admin.players()) == 1000


def test_the_page_imports_a_thousand_player_trf_file(hub: Hub) -> None:
    client = hub.app.test_client()
    token = login(client)
    text = _event_trf(1000, rounds=11)
    assert len(text.encode()) > MAX_BODY_BYTES
    response = client.post("/organiser/import-trf", data={
        "csrf": token, "file": (io.BytesIO(text.encode()), "open.trf")})
    assert response.status_code == 302
    assert len(hub.ledger.admin.players()) == 1000 and hub.ledger.admin.total_rounds() == 11
    # Another form is refused past 64 KiB (Flask's limit where no waitress is in front).
    big = client.post("/organiser/players", data={"csrf": token, "name": "x" * MAX_BODY_BYTES})
    assert big.status_code == 413


@pytest.mark.parametrize(
    ("name", "says"),
    [("Ana\nBen", "U+000A"), ("Ana\u200b", "U+200B (ZERO WIDTH SPACE)"),
     ("\u202eanA", "U+202E (RIGHT-TO-LEFT OVERRIDE)"), ("Ana\x1b[2J", "U+001B"),
     ("Ana\u2028", "U+2028 (LINE SEPARATOR)"), ("x" * 34, "more than the 33")],
)
def test_the_api_refuses_a_name_as_the_csv_and_trf_imports_do(
    hub: Hub, name: str, says: str
) -> None:
    client = hub.app.test_client()
    added = client.post("/api/organiser/players", json={"name": name}, headers=API)
    assert added.status_code == 400 and says in added.get_json()["error"]
    imported = client.post("/api/organiser/players/import",
                           json={"csv": 'name\n"' + name + '"\n'}, headers=API)
    assert imported.status_code == 409 and says in imported.get_json()["error"]
    line = f"001    1      {name:<33} 2000{'':27}  0.0    1"
    trf = client.post("/api/organiser/import-trf", json={"trf": f"012 X\nXXR 5\n{line}\n"},
                      headers=API)
    # (A newline ends a TRF line: that file's line is too short, said as such.)
    trf_says = "at least 84 characters" if "\n" in name else (
        "past column 47" if len(name) > 33 else says)
    assert trf.status_code == 409 and trf_says in trf.get_json()["error"]
    assert hub.ledger.admin.players() == []


def test_a_name_kept_before_the_rule_is_said_not_a_500_in_the_trf_export(hub: Hub) -> None:
    # A ledger written before the rule (or by hand) may hold a name TRF cannot hold.
    with hub.ledger.store.write() as db:
        db.execute("INSERT INTO players VALUES (?, 0, 0, 1)", ("Ana\nBen",))
    client = hub.app.test_client()
    answer = client.get("/api/organiser/exports/event.trf", headers=API)
    assert answer.status_code == 409
    assert "cannot be written as TRF" in answer.get_data(as_text=True)
    assert "U+000A" in answer.get_data(as_text=True)
