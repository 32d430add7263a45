"""Admin actions behind the PIN: the /admin page and the JSON API's POST calls.

Pages use a login session (cookie: HttpOnly, SameSite=Strict) and a CSRF
token in every form. API calls send the PIN in ``X-Admin-PIN``, or use a
logged-in session plus the token in ``X-CSRF-Token``. Wrong PINs are counted
per client address; too many within the window answer 429. A check takes
its attempt before the (slow, memory-hungry) hash runs, and at most a few
hashes run at once: concurrent guesses cannot get past the limit or exhaust
the Pi's memory.

A device command that fails (busy, record unwritable, refused) answers 503
with the device's message on the API and shows it on the admin page.

NEW GAME over a game with challenges played abandons it: the page asks to
confirm first, and the API wants ``{"abandon": <that game's id>}`` (409
otherwise), so one click or one request by mistake changes nothing, and a
confirmation never abandons a game started meanwhile.

Enrolling tags and the self-test, behind the same PIN, are :mod:`web.table.bench`'s.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from arbiter.device.errors import DeviceError
from arbiter.rules.errors import EndingError, PieceError, WrongGameError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import parse_side
from arbiter.rules.ranks import Side
from web.kit.body import json_object
from web.kit.pin_access import PinAccess
from web.table.errors import AdminInputError
from web.table.public import get_device, load_game

log = logging.getLogger(__name__)

bp = Blueprint("admin", __name__)


#: The endings players declare, as the API spells them.
DECLARABLE = {kind.value: kind for kind in EndingKind if kind.declarable}


ACCESS = PinAccess(
    role="admin", realm="gg-arbiter", login_endpoint="admin.login", repair="gg-arbiter set-pin"
)
require_admin_api = ACCESS.require_api
admin_page = ACCESS.page


def parse_ending(reason: Any, winner: Any) -> tuple[EndingKind, Side | None]:
    """Read a declared ending: reason and winner as the API spells them.

    :raises AdminInputError: unknown reason, a winner missing or where none belongs.
    """
    if not isinstance(reason, str) or reason not in DECLARABLE:
        raise AdminInputError(f"reason must be one of {', '.join(sorted(DECLARABLE))}")
    kind = DECLARABLE[reason]
    side: Side | None
    if winner in (None, ""):
        side = None
    elif isinstance(winner, str) and winner.strip().upper() in ("W", "B"):
        try:
            side = parse_side(winner)
        except PieceError as exc:  # pragma: no cover - guarded above
            raise AdminInputError(str(exc)) from None
    else:
        raise AdminInputError('winner must be "W", "B" or null')
    if kind.has_winner and side is None:
        raise AdminInputError(f"a {reason} ending needs a winner (W or B)")
    if not kind.has_winner and side is not None:
        raise AdminInputError(f"a {reason} ending has no winner")
    return kind, side


# -- JSON API ----------------------------------------------------------------


def device_failed(exc: DeviceError) -> tuple[Response, int]:
    """503 with the device's own words (busy, record unwritable, enrollment on)."""
    log.warning("admin command failed: %s", exc)
    return jsonify({"error": str(exc)}), 503


def game_to_abandon() -> tuple[int, int] | None:
    """(id, challenges) of the current game when NEW GAME would abandon it (it is on and
    a challenge was played), else None."""
    status = get_device().status()
    count = int(status.get("challenge_count") or 0)
    if status.get("ending") is None and count > 0:
        return int(status["game_id"]), count
    return None


def _abandon_field(value: Any) -> int | None:
    """The ``abandon`` game id as sent, or None. :raises AdminInputError: not an id."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise AdminInputError("abandon must be the id of the game NEW GAME abandons")
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise AdminInputError("abandon must be the id of the game NEW GAME abandons")
    return int(text)


@bp.post("/api/games")
def api_new_game() -> tuple[Response, int]:
    """Start a new game. Over a game still on with challenges played, the body must be
    ``{"abandon": <its id>}``: 409 (nothing changed) otherwise."""
    require_admin_api()
    body = json_object('{"abandon": <the id of the game still on>}') if request.get_data() else {}
    try:
        abandon = _abandon_field(body.get("abandon"))
    except AdminInputError as exc:
        abort(400, description=str(exc))
    device = get_device()
    on = game_to_abandon()
    if on is not None and abandon != on[0]:
        return jsonify({
            "error": f"game {on[0]} is on ({on[1]} challenge(s)): NEW GAME abandons it, its"
                     " record kept secret until the next game has begun; send"
                     f' {{"abandon": {on[0]}}} to confirm',
            "abandon": on[0],
        }), 409
    try:
        game_id = device.new_game(abandon=abandon)
    except WrongGameError as exc:
        return jsonify({"error": str(exc)}), 409
    except DeviceError as exc:
        return device_failed(exc)
    return jsonify({"game_id": game_id, "status": device.status()}), 201


@bp.post("/api/games/reveal")
def api_reveal_abandoned() -> tuple[Response, int]:
    """The next game has begun by the players' word (no challenge yet): reveal the
    abandoned games kept secret. ``{"revealed": [ids]}``."""
    require_admin_api()
    device = get_device()
    try:
        revealed = device.reveal_abandoned()
    except DeviceError as exc:
        return device_failed(exc)
    return jsonify({"revealed": revealed}), 200


@bp.post("/api/games/<int:game_id>/end")
def api_end_game(game_id: int) -> Response | tuple[Response, int]:
    require_admin_api()
    body = json_object('{"reason": ..., "winner": ...}')
    try:
        kind, winner = parse_ending(body.get("reason"), body.get("winner"))
    except AdminInputError as exc:
        abort(400, description=str(exc))
    device = get_device()
    game = load_game(game_id)
    if game.id != device.current_game_id:
        return jsonify({"error": f"game {game_id} is not the current game"}), 409
    if game.over:
        return jsonify({"error": f"game {game_id} is already over"}), 409
    try:
        # The worker checks the id again: a new game started meanwhile is never ended.
        device.declare_end(kind, winner, game_id=game_id)
    except EndingError as exc:  # WrongGameError included: the game changed meanwhile
        return jsonify({"error": str(exc)}), 409
    except DeviceError as exc:
        return device_failed(exc)
    ending = device.game(game_id).ending
    assert ending is not None  # just declared
    return jsonify({"game_id": game_id, "ending": ending.to_dict()})


# -- pages -------------------------------------------------------------------


@bp.route("/admin/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    if request.method == "GET":
        ACCESS.require_file()
        if ACCESS.logged_in():
            return redirect(url_for("admin.dashboard"))
        return render_template("login.html")
    if not ACCESS.log_in(request.form.get("pin", "")):
        return render_template("login.html", error="Wrong PIN."), 403
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/logout")
@admin_page
def logout() -> ResponseReturnValue:
    ACCESS.log_out()
    return redirect(url_for("public.index"))


@bp.get("/admin")
@admin_page
def dashboard() -> str:
    return render_dashboard(None)


def render_dashboard(report: list[str] | None) -> str:
    """The admin page, with the self-test's report when one was just run."""
    device = get_device()
    return render_template(
        "admin.html",
        status=device.status(),
        enrollment=device.enrollment_status(),
        can_enroll=device.can_enroll,
        sealed=device.sealed_games,
        report=report,
    )


@bp.post("/admin/new-game")
@admin_page
def new_game() -> ResponseReturnValue:
    """Start a new game; over a game with challenges played, first a page that asks to
    confirm its abandonment (its form sends ``abandon``, the game it was shown for)."""
    try:
        abandon = _abandon_field(request.form.get("abandon"))
    except AdminInputError as exc:
        flash(str(exc), "error")
        return redirect(url_for("admin.dashboard"))
    on = game_to_abandon()
    if on is not None and abandon != on[0]:
        return render_template("confirm_new_game.html", game_id=on[0], challenges=on[1])
    try:
        game_id = get_device().new_game(abandon=abandon)
    except WrongGameError:
        flash(f"Game {abandon} is no longer the current game: no new game was started. "
              "Look at the game below and start again.", "error")
    except DeviceError as exc:
        flash(str(exc), "error")
    else:
        flash(f"Game {game_id} started.", "ok")
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/reveal")
@admin_page
def reveal_abandoned() -> ResponseReturnValue:
    try:
        revealed = get_device().reveal_abandoned()
    except DeviceError as exc:
        flash(str(exc), "error")
    else:
        ids = ", ".join(map(str, revealed))
        flash(f"Game {ids} revealed." if revealed else "No abandoned game was kept secret.",
              "ok")
    return redirect(url_for("admin.dashboard"))


def _form_game_id() -> int:
    """The game the form was shown for (its hidden ``game_id`` field)."""
    text = request.form.get("game_id", "").strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise AdminInputError("The form has expired: reload the page and try again.")
    return int(text)


@bp.post("/admin/end")
@admin_page
def end_game() -> ResponseReturnValue:
    device = get_device()
    try:
        game_id = _form_game_id()
        reason = request.form.get("reason")
        # The form always sends a winner; a draw simply has none.
        winner_text = None if reason == "draw" else request.form.get("winner")
        kind, winner = parse_ending(reason, winner_text)
        device.declare_end(kind, winner, game_id=game_id)
    except WrongGameError:
        flash(
            f"Game {game_id} is no longer the current game: nothing was declared. "
            "Check the game below and declare again.",
            "error",
        )
    except (AdminInputError, EndingError, DeviceError) as exc:
        flash(str(exc), "error")
    else:
        flash(f"Game {game_id} ended.", "ok")
    return redirect(url_for("admin.dashboard"))
