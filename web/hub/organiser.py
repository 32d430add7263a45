"""The organiser's pages and JSON API, behind the PIN: players, rounds, tables, results.

Same access design as the table's admin (:mod:`web.table.admin`): pages use a login
session (HttpOnly, SameSite=Strict, ended server-side at logout) and a CSRF
token in every form; API calls send the PIN in ``X-Admin-PIN``, or use a
logged-in session plus ``X-CSRF-Token``. Wrong PINs are counted per client
address and answer 429 past the limit. Every action is one ledger method, so
it is audited where the ledger audits it (withdrawals, re-assignments,
results, tie-breaks), and the pages are told to refresh.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue

from arbiter.errors import ArbiterError
from arbiter.hub.errors import AssignmentRefusedError, NotSentError, OrganiserInputError
from arbiter.hub.exports import KINDS, export, trf
from arbiter.hub.ledger import MAX_GAMES_PER_ROUND, MAX_RATING, SYSTEMS
from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.model import Result
from arbiter.tournament.players_csv import MAX_NAME
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import import_trf
from arbiter.wire import MAX_BOARD, MAX_ROUND, AssignmentMessage
from web.hub import views
from web.hub.public import feed, ledger
from web.kit import auth
from web.kit.body import json_object
from web.kit.pin_access import PinAccess

log = logging.getLogger(__name__)

bp = Blueprint("organiser", __name__)

RESULTS = {r.value: r for r in Result} | {"none": None}
#: How many of the latest audit entries the page shows (the API has them all).
AUDIT_SHOWN = 200
#: Refused messages listed on the page, and in the attention JSON (the latest ones).
REJECTIONS_SHOWN = 50
REJECTIONS_LISTED = 500
#: Session key: the name the page's changes are audited under.
WHO_KEY = "organiser_who"


# --- access -------------------------------------------------------------------


ACCESS = PinAccess(
    role="organiser",
    realm="gg-arbiter hub",
    login_endpoint="organiser.login",
    repair="gg-arbiter hub set-pin",
)
_require_api = ACCESS.require_api
organiser_page = ACCESS.page


def _refused_more(
    totals: dict[str, int], shown: list[tuple[str, str, int | None, str]]
) -> dict[str, int]:
    """Tables with more refused messages than the page lists: their count in all."""
    listed: dict[str, int] = {}
    for _at, table, _seq, _why in shown:
        listed[table] = listed.get(table, 0) + 1
    return {t: n for t, n in totals.items() if n > listed.get(t, 0)}


@bp.route("/organiser/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    ACCESS.require_file()
    error = None
    if request.method == "POST":
        if ACCESS.log_in(request.form.get("pin", "")):
            return redirect(url_for("organiser.dashboard"))
        error = "Wrong PIN."
    return (render_template("hub_login.html", error=error, set_pin=set_pin_command()),
            403 if error else 200)


def set_pin_command() -> str:
    """The command that sets this hub's PIN: its event and its real data directory (the
    default one would set another hub's PIN and end no session here)."""
    return (f"gg-arbiter hub --event {shlex.quote(ledger().event)} "
            f"--data {shlex.quote(str(current_app.config['DATA_DIR']))} set-pin")


@bp.post("/organiser/logout")
def logout() -> ResponseReturnValue:
    if auth.csrf_ok(session, request.form.get("csrf")):
        ACCESS.log_out()
    return redirect(url_for("public.venue"))


# --- the actions (one ledger method each) --------------------------------------


def _text(body: dict[str, Any], key: str, limit: int = 64) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise OrganiserInputError(f"{key!r} must be text of 1 to {limit} characters")
    return value.strip()


#: The range of each number an action takes.
LIMITS = {"round": MAX_ROUND, "board": MAX_BOARD, "rating": MAX_RATING}


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
    name = _text(body, "name", MAX_NAME)
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


def import_trf_event(body: dict[str, Any]) -> str:
    text = body.get("trf")
    if not isinstance(text, str) or not text.strip():
        raise OrganiserInputError("paste the TRF file or choose it ('trf': its text)")
    event = import_trf(text)
    ledger().admin.import_event(event.players, event.games, event.total_rounds)
    return (f"{len(event.players)} player(s) and {len(ledger().admin.rounds())} round(s) of"
            f" {event.total_rounds} imported")


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
    "assign": assign,
    "assign-round": assign_round,
    "publish": publish_round,
    "result": correct,
    "tiebreaks": tiebreaks,
    "resend": resend,
}


def _run(action: str, body: dict[str, Any]) -> str:
    """Do one action; the pages are told to refresh. ArbiterError: refused as asked."""
    done = ACTIONS[action](body)
    log.info("organiser: %s", done)
    feed().refresh()
    return done


# --- pages ----------------------------------------------------------------------


@bp.get("/organiser")
@organiser_page
def dashboard() -> str:
    return _dashboard(live_parts=False)


@bp.get("/organiser/live")
def live_parts() -> ResponseReturnValue:
    """The page again, for hub.js to swap its live parts in. Not a use of the session:
    a page left open still ends its session after the idle time."""
    ACCESS.require_file()
    if not ACCESS.logged_in(renew=False):
        return redirect(url_for(ACCESS.login_endpoint))
    return _dashboard(live_parts=True)


def _dashboard(*, live_parts: bool) -> str:
    led = ledger()
    audit = list(reversed(led.admin.audit()))
    rounds = list(reversed(views.rounds(led)))
    for r in rounds:
        suggested = views.suggested_tables(led, r["round"])
        for b in r["boards"]:
            b["suggest"] = suggested.get(b["board"])
    return render_template(
        "hub_organiser.html",
        players=led.admin.seeded(),
        rounds=rounds,
        system=rounds[0]["system"] if rounds else "swiss",
        known_tables=sorted(led.tables.names(), key=views.table_key),
        venue=views.venue(led, feed().silent()),
        audit=audit[:AUDIT_SHOWN],
        audit_total=len(audit),
        rejections=(rejections := list(reversed(led.events.rejections()))[:REJECTIONS_SHOWN]),
        refused_more=_refused_more(led.events.refused(), rejections),
        unscored=led.events.unscored_games(),
        over_limit=led.events.over_limit(),
        max_games=MAX_GAMES_PER_ROUND,
        gaps={t: g for t in led.tables.names() if (g := led.tables.missing(t))},
        resends=led.events.resends(),
        tiebreaks=[t.value for t in led.admin.tiebreaks()],
        all_tiebreaks=[t.value for t in TieBreak],
        results=sorted(RESULTS),
        kinds=KINDS,
        who=session.get(WHO_KEY, ""),
        # hub.js fetching the live parts: the action's message is the page's, not this fetch's.
        live_parts=live_parts,
        poll=float(current_app.config["ORGANISER_POLL_SECONDS"]),
    )


def _form_body(action: str) -> dict[str, Any]:
    """A form's fields as the action's body (the JSON API's shape)."""
    body: dict[str, Any] = dict(request.form)
    if action == "tiebreaks":
        # One select per place (tiebreak-1, -2, ...); "none" leaves a place out.
        places = sorted((k for k in request.form if k.startswith("tiebreak-")),
                        key=lambda k: int(k[9:]) if k[9:].isdigit() else 1 << 30)
        chosen = [v for k in places if (v := request.form.get(k, ""))]
        body["tiebreaks"] = chosen or request.form.getlist("tiebreaks")
    elif action == "assign-round":
        body["tables"] = {k.removeprefix("table-"): v for k, v in request.form.items()
                          if k.startswith("table-")}
    elif action == "import-trf" and not str(body.get("trf", "")).strip():
        upload = request.files.get("file")
        if upload is not None and upload.filename:
            try:
                body["trf"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise OrganiserInputError(f"{upload.filename}: not UTF-8 text") from None
    elif action == "import" and not str(body.get("csv", "")).strip():
        upload = request.files.get("file")
        if upload is not None and upload.filename:
            try:
                body["csv"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise OrganiserInputError(
                    f"{upload.filename}: not UTF-8 text (save it as CSV UTF-8)") from None
    return body


@bp.post("/organiser/whoami")
@organiser_page
def whoami() -> ResponseReturnValue:
    """The name this session's changes are logged under in the audit log."""
    who = request.form.get("who", "").strip()[:64]
    session[WHO_KEY] = who
    flash(f"changes from this page are logged as {who or 'organiser'}", "ok")
    return redirect(url_for("organiser.dashboard"))


@bp.post("/organiser/<action>")
@organiser_page
def act(action: str) -> ResponseReturnValue:
    if action not in ACTIONS:
        abort(404)
    try:
        body = _form_body(action)
        if not str(body.get("who") or "").strip():
            body["who"] = session.get(WHO_KEY)
        flash(_run(action, body), "ok")
    except ArbiterError as exc:
        flash(str(exc), "error")
    return redirect(url_for("organiser.dashboard"))


@bp.get("/organiser/export/<kind>.<fmt>")
@organiser_page
def download(kind: str, fmt: str) -> Response:
    return _export(kind, fmt)


def _export(kind: str, fmt: str) -> Response:
    if kind == "archive" and fmt == "json":
        response = jsonify(ledger().archive.export())
    elif kind == "event" and fmt == "trf":
        response = Response(trf(ledger()), mimetype="text/plain")
    elif kind in KINDS and fmt in ("csv", "json"):
        response = Response(export(ledger(), kind, fmt),
                            mimetype="text/csv" if fmt == "csv" else "application/json")
    else:
        abort(404, description="exports: standings, pairings, games as csv or json;"
              " archive.json; event.trf")
    name = f"{ledger().event}-{kind}.{fmt}"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- JSON API ---------------------------------------------------------------------

_API_ACTIONS = {
    "/api/organiser/players": "players",
    "/api/organiser/players/import": "import",
    "/api/organiser/import-trf": "import-trf",
    "/api/organiser/players/withdraw": "withdraw",
    "/api/organiser/rounds": "pair",
    "/api/organiser/assign": "assign",
    "/api/organiser/assign/round": "assign-round",
    "/api/organiser/publish": "publish",
    "/api/organiser/result": "result",
    "/api/organiser/tiebreaks": "tiebreaks",
    "/api/organiser/resend": "resend",
}


def _api_action() -> tuple[Response, int]:
    _require_api()
    action = _API_ACTIONS[str(request.url_rule)]
    body = json_object("a JSON object")
    try:
        return jsonify({"ok": True, "done": _run(action, body)}), 200
    except OrganiserInputError as exc:
        return jsonify({"error": str(exc)}), 400
    except ArbiterError as exc:  # refused by the ledger: a conflict with what it holds
        return jsonify({"error": str(exc)}), 409


for _path in _API_ACTIONS:
    bp.add_url_rule(_path, endpoint=_path.replace("/", "_"), view_func=_api_action,
                    methods=["POST"])


@bp.get("/api/organiser/audit")
def api_audit() -> Response:
    _require_api()
    return jsonify([
        {"id": c.id, "at": c.at, "who": c.who, "what": c.what, "target": c.target,
         "before": c.before, "after": c.after}
        for c in ledger().admin.audit()
    ])


@bp.get("/api/organiser/tables")
def api_tables() -> Response:
    """Silent tables, missing events (gaps and tails), the last resend request of each
    table, and refused messages: what needs the organiser."""
    _require_api()
    led = ledger()
    return jsonify({
        "silent": feed().silent(),
        "gaps": {t: g for t in led.tables.names() if (g := led.tables.missing(t))},
        "resends": {t: {"id": a.id, "ranges": a.ranges, "asked_at": a.asked_at}
                    for t, a in led.events.resends().items()},
        "rejections": [{"at": a, "table": t, "seq": s, "reason": r}
                       for a, t, s, r in led.events.rejections()[-REJECTIONS_LISTED:]],
        "refused": led.events.refused(),
        "unscored": [{"table": t, "game": g, "why": why}
                     for t, g, why in led.events.unscored_games()],
        "over_limit": [{"table": t, "round": r, "games": n}
                       for t, r, n in led.events.over_limit()],
    })


@bp.get("/api/organiser/players")
def api_players() -> Response:
    _require_api()
    return jsonify([{"name": p.name, "rating": p.rating, "withdrawn": p.withdrawn}
                    for p in ledger().admin.seeded()])


@bp.get("/api/organiser/exports/<kind>.<fmt>")
def api_export(kind: str, fmt: str) -> Response:
    _require_api()
    return _export(kind, fmt)
