"""The organiser's pages and JSON API, behind the PIN: players, rounds, tables, results.

Same access design as the table's admin (:mod:`web.table.admin`): pages use a login
session (HttpOnly, SameSite=Strict, ended server-side at logout) and a CSRF
token in every form; API calls send the PIN in ``X-Admin-PIN``, or use a
logged-in session plus ``X-CSRF-Token``. Wrong PINs are counted per client
address and answer 429 past the limit. The forms and the API run the same actions
(:mod:`web.hub.actions`), each one ledger method, so it is audited where the ledger
audits it (withdrawals, re-assignments, results, forfeits, byes, tie-breaks), and the pages are told
to refresh.
"""

from __future__ import annotations

import shlex
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
from arbiter.hub.errors import OrganiserInputError
from arbiter.hub.event_length import MAX_ROUNDS
from arbiter.hub.exports import KINDS, export, trf
from arbiter.hub.ledger import MAX_GAMES_PER_ROUND
from arbiter.tournament.names import MAX_NAME_LENGTH
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import MAX_FILE_BYTES
from web.hub import actions, views
from web.hub.public import feed, ledger
from web.kit import sessions
from web.kit.body import json_object
from web.kit.pin_access import PinAccess

bp = Blueprint("organiser", __name__)

#: How many of the latest audit entries the page shows (the API has them all).
AUDIT_SHOWN = 200
#: Refused messages listed on the page, and in the attention JSON (the latest ones).
REJECTIONS_SHOWN = 50
REJECTIONS_LISTED = 500
#: Session key: the name the page's changes are audited under.
WHO_KEY = "organiser_who"
#: The most bytes an import takes (a form's upload or the API's JSON): the biggest TRF
#: file read (TRF's MAX_FILE_BYTES; a 1,000-player event's is about 0.4 MB) with room
#: for the form's or JSON's framing. Every other route keeps the kit's 64 KiB.
IMPORT_BODY_BYTES = MAX_FILE_BYTES + 256 * 1024
IMPORT_PATHS = ("/organiser/import-trf", "/api/organiser/import-trf", "/organiser/import",
                "/api/organiser/players/import")


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
    if sessions.csrf_ok(session, request.form.get("csrf")):
        ACCESS.log_out()
    return redirect(url_for("public.venue"))


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
        total_rounds=led.admin.total_rounds(),
        max_rounds=MAX_ROUNDS,
        max_name=MAX_NAME_LENGTH,
        known_tables=sorted(led.tables.names(), key=views.table_key),
        venue=views.venue(led, feed().silent(),
                          None if (link := feed().link()) is None else link.public()),
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
        byes=[g for g in led.unplayed.byes() if g.pairing.round > len(rounds)],
        all_tiebreaks=[t.value for t in TieBreak],
        results=sorted(actions.RESULTS),
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
    if action not in actions.ACTIONS:
        abort(404)
    try:
        body = _form_body(action)
        if not str(body.get("who") or "").strip():
            body["who"] = session.get(WHO_KEY)
        flash(actions.run(action, body), "ok")
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
        try:
            text = trf(ledger())
        except ArbiterError as exc:  # an event TRF cannot hold: said, never a 500
            abort(409, description=f"the event cannot be written as TRF: {exc}")
        response = Response(text, mimetype="text/plain")
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
    "/api/organiser/length": "length",
    "/api/organiser/assign": "assign",
    "/api/organiser/assign/round": "assign-round",
    "/api/organiser/publish": "publish",
    "/api/organiser/result": "result",
    "/api/organiser/forfeit": "forfeit",
    "/api/organiser/bye": "bye",
    "/api/organiser/tiebreaks": "tiebreaks",
    "/api/organiser/resend": "resend",
}


def _api_action() -> tuple[Response, int]:
    _require_api()
    action = _API_ACTIONS[str(request.url_rule)]
    body = json_object("a JSON object")
    try:
        return jsonify({"ok": True, "done": actions.run(action, body)}), 200
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
        "resends": {t: {"id": a.id, "ranges": a.ranges, "asked_at": a.asked_at,
                        "records": list(a.records)}
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
