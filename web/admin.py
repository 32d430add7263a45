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
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

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
from werkzeug.exceptions import ServiceUnavailable, TooManyRequests

from arbiter.device.errors import DeviceError, GameInProgressError, UnknownTuneError
from arbiter.errors import ArbiterError
from arbiter.rules.game import EndingError, EndingKind, WrongGameError
from arbiter.rules.pieces import PieceError, parse_side
from arbiter.rules.ranks import Side
from web import auth
from web.body import json_object
from web.public import get_device, load_game

log = logging.getLogger(__name__)

bp = Blueprint("admin", __name__)

F = TypeVar("F", bound=Callable[..., Any])

#: The endings players declare, as the API spells them.
DECLARABLE = {kind.value: kind for kind in EndingKind if kind.declarable}
_ADMIN_KEY = "admin"
_SESSION_KEY = "sid"


class AdminInputError(ArbiterError, ValueError):
    """A declared ending or enrollment request that does not make sense."""


def _data_dir() -> str:
    return str(current_app.config["DATA_DIR"])


def _limiter() -> auth.AttemptLimiter:
    return cast(auth.AttemptLimiter, current_app.extensions["arbiter_limiter"])


def _sessions() -> auth.SessionRegistry:
    return cast(auth.SessionRegistry, current_app.extensions["arbiter_sessions"])


def _gate() -> auth.PinGate:
    return cast(auth.PinGate, current_app.extensions["arbiter_pin_gate"])


def _client() -> str:
    return request.remote_addr or "unknown"


def _too_many() -> TooManyRequests:
    retry = _limiter().retry_after(_client())
    return TooManyRequests(
        description=f"too many wrong PINs: try again in {retry} s", retry_after=retry
    )


def _require_admin_file() -> None:
    """Abort 503 with the repair hint while admin.json is damaged (no PIN to check)."""
    problem = auth.admin_problem(_data_dir())
    if problem is not None:
        abort(503, description=problem)


def _logged_in() -> bool:
    """True for a live session (not logged out, idle or too old) made with the
    current PIN and session epoch; each such request restarts the idle time."""
    mark = session.get(_ADMIN_KEY)
    if not (isinstance(mark, str) and mark and mark == auth.pin_fingerprint(_data_dir())):
        return False
    return _sessions().touch(session.get(_SESSION_KEY))


def _pin_accepted(pin: str) -> bool:
    """Check a PIN, counting a failure.

    The attempt is taken from the client's budget before the hash runs, so
    checks in progress count too.

    :raises TooManyRequests: 429 while the client has no attempts left.
    :raises ServiceUnavailable: 503 when too many checks are queued already.
    """
    limiter, client = _limiter(), _client()
    if not limiter.reserve(client):
        raise _too_many()
    outcome: bool | None = None
    try:
        outcome = _gate().check(_data_dir(), pin)
    finally:
        limiter.settle(client, outcome)
    if outcome is None:
        raise ServiceUnavailable(
            description="too many PIN checks at once: try again shortly", retry_after=2
        )
    if not outcome:
        log.warning("wrong admin PIN from %s", client)
    return outcome


def require_admin_api() -> None:
    """Abort unless the request carries the PIN, or a session and its CSRF token.

    401 when neither is given, 403 for a wrong PIN or token, 429 when rate
    limited, 503 while admin.json is damaged.
    """
    _require_admin_file()
    pin = request.headers.get("X-Admin-PIN")
    if pin is None:
        if _logged_in():
            sent = request.headers.get("X-CSRF-Token")
            if request.method in ("GET", "HEAD") or auth.csrf_ok(session, sent):
                return
            abort(403, description="missing or wrong X-CSRF-Token for this session")
        abort(
            401,
            description="admin PIN required (header X-Admin-PIN)",
            www_authenticate='PIN realm="gg-arbiter"',
        )
    if not _pin_accepted(pin.strip()):
        abort(403, description="wrong admin PIN")


def admin_page(view: F) -> F:
    """Pages: log in first; every POST must carry the session's CSRF token."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _require_admin_file()
        if not _logged_in():
            if request.method == "POST":
                abort(403, description="Log in first.")
            return redirect(url_for("admin.login"))
        if request.method == "POST":
            sent = request.form.get("csrf") or request.headers.get("X-CSRF-Token")
            if not auth.csrf_ok(session, sent):
                abort(400, description="The form has expired: reload the page and try again.")
        return view(*args, **kwargs)

    return cast(F, wrapped)


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


def _device_failed(exc: DeviceError) -> tuple[Response, int]:
    """503 with the device's own words (busy, record unwritable, enrollment on)."""
    log.warning("admin command failed: %s", exc)
    return jsonify({"error": str(exc)}), 503


@bp.post("/api/games")
def api_new_game() -> tuple[Response, int]:
    require_admin_api()
    device = get_device()
    try:
        game_id = device.new_game()
    except DeviceError as exc:
        return _device_failed(exc)
    return jsonify({"game_id": game_id, "status": device.status()}), 201


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
        return _device_failed(exc)
    ending = device.game(game_id).ending
    assert ending is not None  # just declared
    return jsonify({"game_id": game_id, "ending": ending.to_dict()})


@bp.get("/api/admin/enrollment")
def api_enrollment() -> Response:
    require_admin_api()
    return jsonify(get_device().enrollment_status())


# Enrollment and the self-test for `gg-arbiter enroll` / `selftest` while the arbiter
# runs: it holds the readers, LEDs and buzzer, so the command asks it over this API.


def _no_rfid() -> tuple[Response, int]:
    return jsonify({"error": "enrollment needs an RFID reader (reader.kind rdm6300 or mcu)"}), 409


@bp.post("/api/admin/enrollment")
def api_enrollment_start() -> tuple[Response, int]:
    """Start enrollment: ``{"only": "W:PVT#3"}`` re-enrolls one piece, else every missing one."""
    require_admin_api()
    body = json_object('{"only": "W:PVT#3" or null}')
    only = body.get("only")
    if only is not None and not (isinstance(only, str) and 0 < len(only.strip()) <= 16):
        abort(400, description='only must be a piece such as "W:PVT#3", or null')
    device = get_device()
    if not device.can_enroll:
        return _no_rfid()
    try:
        status = device.start_enrollment(only.strip() if only else None)
    except PieceError as exc:
        abort(400, description=str(exc))
    except DeviceError as exc:
        return _device_failed(exc)
    return jsonify(status), 201


@bp.delete("/api/admin/enrollment")
def api_enrollment_stop() -> Response | tuple[Response, int]:
    require_admin_api()
    device = get_device()
    if not device.can_enroll:
        return _no_rfid()
    try:
        device.stop_enrollment()
    except DeviceError as exc:
        return _device_failed(exc)
    return jsonify(device.enrollment_status())


@bp.post("/api/admin/enrollment/skip")
def api_enrollment_skip() -> Response | tuple[Response, int]:
    require_admin_api()
    device = get_device()
    if not device.can_enroll:
        return _no_rfid()
    if not device.enrollment_status().get("active"):
        return jsonify({"error": "enrollment is not on"}), 409
    try:
        return jsonify(device.skip_enrollment())
    except DeviceError as exc:
        return _device_failed(exc)


@bp.post("/api/admin/selftest")
def api_selftest() -> Response | tuple[Response, int]:
    """Run the self-test: ``{"tunes": ["ready"]}`` plays only those (all when absent).

    Refused (409) once a game has begun: it would flash and play Taps at the table.
    The report names slot states, never a piece.
    """
    require_admin_api()
    body = json_object('{"tunes": ["ready", ...] or null}')
    tunes = body.get("tunes")
    if tunes is not None and not (
        isinstance(tunes, list) and all(isinstance(t, str) for t in tunes) and len(tunes) <= 16
    ):
        abort(400, description='tunes must be a list of tune names, or null')
    device = get_device()
    try:
        lines = device.selftest(tunes=tunes)
    except UnknownTuneError as exc:
        abort(400, description=str(exc))
    except GameInProgressError as exc:
        return jsonify({"error": str(exc)}), 409
    except DeviceError as exc:
        return _device_failed(exc)
    faults = device.reader_faults()
    return jsonify({"lines": lines, "faults": faults, "passed": not faults})


# -- pages -------------------------------------------------------------------


@bp.route("/admin/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    _require_admin_file()
    if request.method == "GET":
        if _logged_in():
            return redirect(url_for("admin.dashboard"))
        return render_template("login.html")
    if not auth.csrf_ok(session, request.form.get("csrf")):
        abort(400, description="The form has expired: reload the page and try again.")
    pin = request.form.get("pin", "").strip()
    if not _pin_accepted(pin):
        return render_template("login.html", error="Wrong PIN."), 403
    session.clear()
    session.permanent = True
    session[_ADMIN_KEY] = auth.pin_fingerprint(_data_dir())
    session[_SESSION_KEY] = _sessions().open()
    auth.csrf_token(session)  # a fresh token for the logged-in session
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/logout")
@admin_page
def logout() -> ResponseReturnValue:
    # Ends the session on the server: a copy of the cookie is refused from now on.
    _sessions().close(session.get(_SESSION_KEY))
    session.clear()
    return redirect(url_for("public.index"))


@bp.get("/admin")
@admin_page
def dashboard() -> str:
    device = get_device()
    return render_template(
        "admin.html",
        status=device.status(),
        enrollment=device.enrollment_status(),
        can_enroll=device.can_enroll,
        report=None,
    )


@bp.post("/admin/new-game")
@admin_page
def new_game() -> ResponseReturnValue:
    try:
        game_id = get_device().new_game()
    except DeviceError as exc:
        flash(str(exc), "error")
    else:
        flash(f"Game {game_id} started.", "ok")
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


@bp.post("/admin/enroll/start")
@admin_page
def enroll_start() -> ResponseReturnValue:
    only = request.form.get("only", "").strip() or None
    try:
        get_device().start_enrollment(only)
    except (PieceError, DeviceError) as exc:
        flash(str(exc), "error")
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/enroll/stop")
@admin_page
def enroll_stop() -> ResponseReturnValue:
    try:
        get_device().stop_enrollment()
    except DeviceError as exc:
        flash(str(exc), "error")
    else:
        flash("Enrollment stopped.", "ok")
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/selftest")
@admin_page
def selftest() -> ResponseReturnValue:
    device = get_device()
    try:
        report = device.selftest()
    except DeviceError as exc:  # a game in progress, the device busy or shut down
        flash(f"Self-test not run: {exc}", "error")
        return redirect(url_for("admin.dashboard"))
    return render_template(
        "admin.html",
        status=device.status(),
        enrollment=device.enrollment_status(),
        can_enroll=device.can_enroll,
        report=report,
    )
