"""The organiser's actions, one ledger method each: the forms and the JSON API both run
them (:mod:`web.hub.organiser`) with a body of the API's shape.

Each checks its body (:class:`~arbiter.hub.errors.OrganiserInputError` for what it
refuses), calls the ledger, which audits what it changes, and returns the line the page
shows; :func:`run` logs it and tells the pages to refresh.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import current_app

from arbiter.errors import ArbiterError
from arbiter.hub.errors import AssignmentRefusedError, NotSentError, OrganiserInputError
from arbiter.hub.event_length import MAX_ROUNDS
from arbiter.hub.ledger import MAX_RATING, SYSTEMS
from arbiter.hub.unplayed import BYE_POINTS, FORFEIT_SIDES
from arbiter.tournament.errors import NoLegalPairingError, PlayerNameError
from arbiter.tournament.model import Result
from arbiter.tournament.names import check_name
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import import_trf
from arbiter.wire import MAX_BOARD, MAX_ROUND, AssignmentMessage
from web.hub import views
from web.hub.public import feed, ledger

log = logging.getLogger(__name__)

RESULTS = {r.value: r for r in Result} | {"none": None}


def _text(body: dict[str, Any], key: str, limit: int = 64) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise OrganiserInputError(f"{key!r} must be text of 1 to {limit} characters")
    return value.strip()


#: The range of each number an action takes.
LIMITS = {"round": MAX_ROUND, "board": MAX_BOARD, "rating": MAX_RATING, "rounds": MAX_ROUNDS}


def _number(body: dict[str, Any], key: str) -> int:
    """A whole number of 0 to :data:`LIMITS`, given as a number or in digits (a form)."""
    value = body.get(key)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip()) if len(value.strip()) <= 9 else -1
    high = LIMITS[key]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
        raise OrganiserInputError(f"{key!r} must be a whole number from 0 to {high}")
    return value


def _who(body: dict[str, Any]) -> str:
    who = body.get("who")
    return who.strip()[:64] if isinstance(who, str) and who.strip() else "organiser"


def add_player(body: dict[str, Any]) -> str:
    raw = body.get("name")
    if not isinstance(raw, str):
        raise OrganiserInputError("'name' must be text")
    try:  # the one rule of names (names.py), as the CSV and TRF imports keep it
        name = check_name(raw)
    except PlayerNameError as exc:
        raise OrganiserInputError(str(exc)) from None
    rating = _number(body, "rating") if body.get("rating") not in (None, "") else 0
    ledger().admin.add_player(name, rating)
    return f"{name} added"


def import_players(body: dict[str, Any]) -> str:
    text = body.get("csv")
    if not isinstance(text, str) or not text.strip():
        raise OrganiserInputError("paste the players' CSV or choose its file"
                                  " ('csv': a header line with name, and rating if any)")
    return f"{len(ledger().admin.import_players_csv(text))} player(s) added"


def withdraw(body: dict[str, Any]) -> str:
    name = _text(body, "name")
    ledger().admin.withdraw(name, _who(body))
    return f"{name} withdrawn"


def pair(body: dict[str, Any]) -> str:
    system = body.get("system", "swiss")
    if system not in SYSTEMS or system == "manual":
        raise OrganiserInputError("'system' must be swiss or round-robin")
    try:
        pairings = ledger().admin.pair_round(str(system))
    except NoLegalPairingError as exc:
        raise NoLegalPairingError(
            exc.round, f"{exc.reason}; pair it by hand: gg-arbiter hub pair-manual"
        ) from None
    return f"round {pairings[0].round} paired: {len(pairings)} board(s)" if pairings else "paired"


def set_length(body: dict[str, Any]) -> str:
    """Announce, or extend, the event's number of rounds (audited by the ledger)."""
    rounds = _number(body, "rounds")
    led = ledger()
    before = led.admin.total_rounds()
    led.admin.set_total_rounds(rounds, _who(body))
    paired = len(led.admin.rounds())
    return (f"the event has {rounds} round{'' if rounds == 1 else 's'}"
            + ("" if before in (None, rounds) else f" (was {before})")
            + f"; {paired} paired")


def import_trf_event(body: dict[str, Any]) -> str:
    text = body.get("trf")
    if not isinstance(text, str) or not text.strip():
        raise OrganiserInputError("paste the TRF file or choose it ('trf': its text)")
    event = import_trf(text)
    ledger().unplayed.import_event(event.players, event.games,
                                event.total_rounds if event.announced else None)
    of = (f"of {event.total_rounds}" if event.announced else
          "(the file gives no number of rounds: set the event's length)")
    rounds = len(ledger().admin.rounds())
    return f"{len(event.players)} player(s) and {rounds} round(s) {of} imported"


def _table_name(value: object, what: str = "table") -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 32:
        raise OrganiserInputError(f"{what} must be a table name of 1 to 32 characters")
    table = value.strip()
    if "/" in table or "+" in table or "#" in table:
        raise OrganiserInputError("a table name cannot hold / + or #")
    return table


def _send(table: str, payload: AssignmentMessage | None) -> bool:
    """Publish a table's assignment; False when the hub has no broker link to send it."""
    publish = current_app.extensions["hub_publish"]
    if publish is None:
        return False
    try:
        publish(table, payload)
    except ArbiterError as exc:  # the broker did not take it: stored, to be sent again
        raise NotSentError(f"stored but not sent to table {table}: {exc}; send again") from None
    return True


def assign(body: dict[str, Any]) -> str:
    round_number, board = _number(body, "round"), _number(body, "board")
    table = _table_name(body.get("table"), "'table'")
    payload = ledger().admin.assign_table(round_number, board, table, _who(body))
    if not _send(table, payload):
        return f"round {round_number} board {board} -> table {table} (published at next start)"
    return f"round {round_number} board {board} -> table {table}, sent"


def assign_round(body: dict[str, Any]) -> str:
    """Assign a round's boards at once: ``tables`` maps board to table; boards left out
    (or no ``tables`` at all) take the suggested table (board n: the n-th table heard of)."""
    round_number = _number(body, "round")
    led = ledger()
    if round_number not in {n for n, _s in led.admin.rounds()}:
        raise OrganiserInputError(f"there is no round {round_number}")
    current = {r.pairing.board: r.table for r in led.admin.pairings(round_number)
               if not r.pairing.is_bye}
    given = body.get("tables") or {}
    if not isinstance(given, dict):
        raise OrganiserInputError("'tables' must map board numbers to table names")
    wanted: dict[int, str] = {}
    suggested = views.suggested_tables(led, round_number)
    for board in current:
        value = given.get(str(board), given.get(board)) if given else suggested[board]
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        wanted[board] = _table_name(value, f"board {board}'s table")
    if not wanted:
        raise OrganiserInputError(f"round {round_number}: no table named for any board"
                                  " (no table has been heard of yet)")
    done, refused, unsent = [], [], []
    for board, table in wanted.items():
        if current[board] == table:
            continue
        try:
            payload = led.admin.assign_table(round_number, board, table, _who(body))
        except ArbiterError as exc:
            refused.append(f"board {board}: {exc}")
            continue
        try:
            sent = _send(table, payload)
        except NotSentError as exc:
            unsent.append(f"board {board}: {exc}")
            continue
        done.append(f"board {board} -> table {table}"
                    + (", sent" if sent else " (published at next start)"))
    text = f"round {round_number}: " + ("; ".join(done) if done else "nothing changed")
    if refused or unsent:
        raise AssignmentRefusedError("; ".join([text, *refused, *unsent]))
    return text


def publish_round(body: dict[str, Any]) -> str:
    """Send every assignment of a round again (a table replaced, or the broker restarted)."""
    round_number = _number(body, "round")
    assignments = ledger().admin.assignments(round_number)
    if not assignments:
        raise OrganiserInputError(f"round {round_number} has no board assigned to a table")
    for table, payload in assignments.items():
        if not _send(table, payload):
            return f"round {round_number}: published at next start (no broker link)"
    return f"round {round_number}: {len(assignments)} assignment(s) sent again"


def correct(body: dict[str, Any]) -> str:
    round_number, board = _number(body, "round"), _number(body, "board")
    text = body.get("result")
    if text not in RESULTS:
        raise OrganiserInputError(f"'result' must be one of {', '.join(sorted(RESULTS))}")
    ledger().admin.correct_result(round_number, board, RESULTS[str(text)], _who(body))
    return f"round {round_number} board {board}: {text}"


def forfeit(body: dict[str, Any]) -> str:
    """A board's game not played: ``came`` white or black (wins by forfeit), or none."""
    round_number, board = _number(body, "round"), _number(body, "board")
    came = body.get("came")
    if not isinstance(came, str) or came not in FORFEIT_SIDES:
        raise OrganiserInputError("'came' must be white, black or none: who came to the board")
    ledger().unplayed.forfeit(round_number, board, FORFEIT_SIDES[came], _who(body))
    said = "neither came, both lose" if came == "none" else f"{came} wins by forfeit"
    return f"round {round_number} board {board}: {said}"


def bye(body: dict[str, Any]) -> str:
    """A bye for a coming round (``round``, default the next to pair) of ``points`` 0.5
    (the default), 0 or 1; with ``cancel``, the bye taken back."""
    name = _text(body, "name")
    led = ledger()
    if body.get("round") in (None, ""):
        round_number = len(led.admin.rounds()) + 1
    else:
        round_number = _number(body, "round")
    if body.get("cancel") in (True, "1", "on", "yes", "true"):
        led.unplayed.cancel_bye(name, round_number, _who(body))
        return f"{name}: the bye in round {round_number} taken back"
    points = str(body.get("points", "0.5")).strip() or "0.5"
    if points not in BYE_POINTS:
        raise OrganiserInputError("'points' must be 0.5, 0 or 1")
    led.unplayed.request_bye(name, round_number, _who(body), BYE_POINTS[points])
    return f"{name}: a {points}-point bye in round {round_number}, not paired in it"


def tiebreaks(body: dict[str, Any]) -> str:
    names = body.get("tiebreaks")
    if isinstance(names, str):
        names = names.split()
    known = [t.value for t in TieBreak]
    if not isinstance(names, list) or not names or any(n not in known for n in names):
        raise OrganiserInputError(f"'tiebreaks' must list some of {', '.join(known)}")
    if len(set(names)) != len(names):
        raise OrganiserInputError("each tie-break may be chosen once")
    ledger().admin.set_tiebreaks([TieBreak(n) for n in names], _who(body))
    return "tie-breaks: " + ", ".join(names)


def resend(body: dict[str, Any]) -> str:
    """Ask one table (``table``), or every table missing events, to publish them again."""
    ask = current_app.extensions["hub_resend"]
    if ask is None:
        raise OrganiserInputError("resend requests need the serving hub (gg-arbiter hub "
                                  "--broker URL), or gg-arbiter hub gaps --resend")
    led = ledger()
    tables = [_text(body, "table", 32)] if body.get("table") else led.tables.names()
    asked = [f"table {a.table} (request {a.id})" for t in tables if (a := ask(t)) is not None]
    if not asked:
        raise OrganiserInputError("no event is missing" + (f" at table {tables[0]}"
                                                           if body.get("table") else ""))
    return "resend asked: " + ", ".join(asked)


ACTIONS: dict[str, Callable[[dict[str, Any]], str]] = {
    "players": add_player,
    "import": import_players,
    "import-trf": import_trf_event,
    "withdraw": withdraw,
    "pair": pair,
    "length": set_length,
    "assign": assign,
    "assign-round": assign_round,
    "publish": publish_round,
    "result": correct,
    "forfeit": forfeit,
    "bye": bye,
    "tiebreaks": tiebreaks,
    "resend": resend,
}


def run(action: str, body: dict[str, Any]) -> str:
    """Do one action; the pages are told to refresh. ArbiterError: refused as asked."""
    done = ACTIONS[action](body)
    log.info("organiser: %s", done)
    feed().refresh()
    return done
