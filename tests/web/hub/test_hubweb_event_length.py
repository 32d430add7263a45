"""The event's length on the organiser page and the public pages, pairing past it refused
until the organiser extends it; standings that say after which round they stand, and
that they are provisional while a round is in play; the TRF's rank and XXR."""

from __future__ import annotations

import html as html_text
import re
from typing import Any

import pytest

from arbiter.tournament.model import Result
from tests.support.organiser import login
from tests.support.web import PIN
from tests.web.hub.conftest import Hub

pytestmark = pytest.mark.timeout(60)

API = {"X-Admin-PIN": PIN}
FOUR = "name,rating\nAna,1900\nBen,1800\nCid,1700\nDee,1600\n"


def _flash(client: Any) -> str:
    page = client.get("/organiser").get_data(as_text=True)
    match = re.search(r'<p class="flash flash-(\w+)">([^<]*)</p>', page)
    assert match, "no message shown"
    return f"{match.group(1)}: {html_text.unescape(match.group(2))}"


def _text(client: Any, path: str) -> str:
    """A page's text, its tags dropped and its spaces run together."""
    page = client.get(path).get_data(as_text=True)
    return " ".join(html_text.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_length_is_set_on_the_page_shown_everywhere_and_pairing_past_it_waits(
    hub: Hub,
) -> None:
    client = hub.app.test_client()
    token = login(client)
    assert "The event's length is not set" in _text(client, "/organiser")
    assert client.post("/organiser/length", data={"csrf": token, "rounds": "2"}).status_code == 302
    assert _flash(client) == "ok: the event has 2 rounds; 0 paired"
    assert "2 rounds; none paired yet." in _text(client, "/organiser")
    assert client.post("/api/organiser/players/import", json={"csv": FOUR},
                       headers=API).status_code == 200
    for number in (1, 2):
        page = _text(client, "/organiser")
        assert f"Pair round {number} of 2" in page
        assert client.post("/api/organiser/rounds", json={"system": "round-robin"},
                           headers=API).status_code == 200
    # Round 2 of 2: the public pages say so, and the page offers no round 3.
    assert "Round 2 of 2" in _text(client, "/")
    assert "Round 2 of 2" in _text(client, "/rounds")
    organiser = _text(client, "/organiser")
    assert "Round 2 of 2 paired." in organiser
    assert "All 2 rounds are paired: no further round." in organiser
    assert "Pair round 3" not in organiser
    # Pairing past it is refused, by the API, the form and the command line's ledger call,
    # naming the way to extend the event; nothing is stored.
    refused = client.post("/api/organiser/rounds", json={"system": "round-robin"}, headers=API)
    assert refused.status_code == 409
    says = refused.get_json()["error"]
    assert says.startswith("round 3: the event has 2 rounds, all paired; to play more,"
                           " extend the event first")
    assert "gg-arbiter hub rounds 3" in says
    assert client.post("/organiser/pair", data={"csrf": token, "system": "swiss"}
                       ).status_code == 302
    assert _flash(client) == "error: " + says
    assert [n for n, _ in hub.ledger.admin.rounds()] == [1, 2]
    # Impossible lengths are refused: shorter than the rounds paired, none, too many.
    for rounds, status, words in ((1, 409, "already has 2 paired"),
                                  (0, 409, "from 1 to 1000 rounds"),
                                  (1001, 400, "'rounds' must be a whole number from 0 to 1000"),
                                  ("x", 400, "'rounds' must be a whole number")):
        answer = client.post("/api/organiser/length", json={"rounds": rounds}, headers=API)
        assert answer.status_code == status and words in answer.get_json()["error"], rounds
    # Extending is the organiser's decision, kept in the audit trail; then round 3 pairs.
    extended = client.post("/api/organiser/length", json={"rounds": 3, "who": "chief"},
                           headers=API)
    assert extended.get_json() == {"ok": True, "done": "the event has 3 rounds (was 2);"
                                                       " 2 paired"}
    audit = [(c.who, c.what, c.target, c.before, c.after) for c in hub.ledger.admin.audit()]
    assert audit == [("organiser", "rounds", "event", None, "2"),
                     ("chief", "rounds", "event", "2", "3")]
    assert client.post("/api/organiser/rounds", json={"system": "round-robin"},
                       headers=API).status_code == 200
    assert "Round 3 of 3" in _text(client, "/")
    # The TRF's XXR is the announced length.
    trf = client.get("/api/organiser/exports/event.trf", headers=API).get_data(as_text=True)
    assert trf.splitlines()[1] == "XXR 3"


def test_without_a_length_the_trf_says_the_rounds_paired(hub: Hub) -> None:
    client = hub.app.test_client()
    assert client.post("/api/organiser/players/import", json={"csv": FOUR},
                       headers=API).status_code == 200
    trf = client.get("/api/organiser/exports/event.trf", headers=API).get_data(as_text=True)
    assert trf.splitlines()[1] == "XXR 1"  # no round yet: the least a TRF file may say
    for _ in range(2):
        client.post("/api/organiser/rounds", json={"system": "round-robin"}, headers=API)
    trf = client.get("/api/organiser/exports/event.trf", headers=API).get_data(as_text=True)
    assert trf.splitlines()[1] == "XXR 2"


#: Six players by rating (their start ranks), three rounds paired by hand, with results:
#: round 3's first board still on when the standings are first read.
SIX = "name,rating\nAna,1900\nBen,1800\nCid,1700\nDee,1600\nEve,1500\nFay,1400\n"
W, B = Result.WHITE_WIN, Result.BLACK_WIN
ROUNDS: list[list[tuple[str, str, Result | None]]] = [
    [("Ana", "Ben", W), ("Cid", "Dee", W), ("Eve", "Fay", B)],
    [("Ana", "Cid", W), ("Fay", "Ben", W), ("Dee", "Eve", B)],
    [("Ana", "Fay", None), ("Cid", "Eve", W), ("Ben", "Dee", W)],
]


def _standings_after(hub: Hub, rounds: int) -> list[dict[str, Any]]:
    """The standings page's rows once only the first ``rounds`` rounds have results."""
    from arbiter.tournament.standings import standings

    games = [g for g in hub.ledger.admin.games_for_pairing() if g.pairing.round <= rounds]
    return [{"name": s.name, "rank": s.rank}
            for s in standings(hub.ledger.admin.seeded(), games, hub.ledger.admin.tiebreaks())]


def _play(hub: Hub) -> None:
    admin = hub.ledger.admin
    for number, games in enumerate(ROUNDS, start=1):
        admin.pair_manual([(w, b) for w, b, _ in games], "chief")
        for board, (_, _, result) in enumerate(games, start=1):
            if result is not None:
                admin.correct_result(number, board, result, "chief")


def test_standings_mid_round_say_they_are_provisional_and_which_games_are_on(
    hub: Hub,
) -> None:
    client = hub.app.test_client()
    assert client.post("/api/organiser/players/import", json={"csv": SIX},
                       headers=API).status_code == 200
    assert client.post("/api/organiser/length", json={"rounds": 5}, headers=API).status_code == 200
    _play(hub)
    # Mid-round 3 Cid (2 from 3 games) stands above Fay (2 from 2, her game still on):
    # on 2 points, Ana first by direct encounter (she beat Cid), then Cid by Buchholz
    # (Dee 0 + Ana 2 + Eve 1 = 3) above Fay (Eve 1 + Ben 1 = 2).
    shown = client.get("/api/standings").get_json()
    assert [(r["name"], r["rank"], r["score"], r["played"]) for r in shown["rows"][:3]] == [
        ("Ana", 1, 2.0, 2), ("Cid", 2, 2.0, 3), ("Fay", 3, 2.0, 2)]
    # ...and the standings say so: after round 2, round 3 in play, its game still on.
    assert (shown["after_round"], shown["round"], shown["rounds_total"],
            shown["provisional"]) == (2, 3, 5, True)
    assert shown["still_on"] == [
        {"round": 3, "board": 1, "white": "Ana", "black": "Fay", "table": None}]
    page = _text(client, "/standings")
    assert "Standings after round 2 of 5" in page
    assert ("Provisional: round 3 is in play; its results so far are counted, so a player"
            " whose game is still on may stand below one who has finished.") in page
    assert "Still on (1): board 1 Ana – Fay." in page
    # The last result in: no longer provisional, after round 3.
    hub.ledger.admin.correct_result(3, 1, W, "chief")
    shown = client.get("/api/standings").get_json()
    assert (shown["after_round"], shown["provisional"], shown["still_on"]) == (3, False, [])
    page = _text(client, "/standings")
    assert "Standings after round 3 of 5" in page and "Provisional" not in page
    # Final ranks by hand: Ana 3; Fay and Cid 2 (never met; Buchholz Fay: Eve 1 + Ben 1 +
    # Ana 3 = 5, Cid: Dee 0 + Ana 3 + Eve 1 = 4); Ben and Eve 1 (Buchholz Ben: Ana 3 +
    # Fay 2 + Dee 0 = 5, Eve: Fay 2 + Dee 0 + Cid 2 = 4); Dee 0.
    expected = {"Ana": 1, "Fay": 2, "Cid": 3, "Ben": 4, "Eve": 5, "Dee": 6}
    assert {r["name"]: r["rank"] for r in shown["rows"]} == expected
    # The TRF's rank column (86-89) is the standings' rank, not score then start rank
    # (which would put Cid, start rank 3, above Fay, 6).
    trf = client.get("/api/organiser/exports/event.trf", headers=API).get_data(as_text=True)
    ranks = {x[14:47].strip(): int(x[85:89]) for x in trf.splitlines() if x.startswith("001")}
    assert ranks == expected


def test_mid_round_the_trf_ranks_as_the_standings_after_the_last_round_finished(
    hub: Hub,
) -> None:
    client = hub.app.test_client()
    assert client.post("/api/organiser/players/import", json={"csv": SIX},
                       headers=API).status_code == 200
    _play(hub)
    # The file holds rounds 1 and 2 (round 3 is not over). After them, by hand: Ana 2 and
    # Fay 2 (never met; Buchholz Ana: Ben 0 + Cid 1, Fay: Eve 1 + Ben 0; Sonneborn-Berger
    # the same: they share rank 1), Cid 1 and Eve 1 (Buchholz Cid: Dee 0 + Ana 2, Eve:
    # Fay 2 + Dee 0; Sonneborn-Berger 0 each: rank 3 shared), Ben 0 and Dee 0 (Buchholz
    # Ben: Ana 2 + Fay 2 = 4, Dee: Cid 1 + Eve 1 = 2).
    trf = client.get("/api/organiser/exports/event.trf", headers=API).get_data(as_text=True)
    ranks = {x[14:47].strip(): int(x[85:89]) for x in trf.splitlines() if x.startswith("001")}
    assert ranks == {"Ana": 1, "Fay": 1, "Cid": 3, "Eve": 3, "Ben": 5, "Dee": 6}
    assert ranks == {r["name"]: r["rank"] for r in _standings_after(hub, 2)}


def test_the_venue_screen_says_after_which_round_the_standings_stand(hub: Hub) -> None:
    client = hub.app.test_client()
    assert client.post("/api/organiser/players/import", json={"csv": SIX},
                       headers=API).status_code == 200
    assert client.post("/api/organiser/length", json={"rounds": 4}, headers=API).status_code == 200
    assert "standings after" not in _text(client, "/screen")  # no round over yet
    _play(hub)
    screen = _text(client, "/screen")
    assert "Round 3 of 4" in screen
    assert "standings after round 2 (provisional while round 3 is played)" in screen
    hub.ledger.admin.correct_result(3, 1, W, "chief")
    screen = _text(client, "/screen")
    assert "standings after round 3" in screen and "provisional" not in screen
