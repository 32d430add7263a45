"""Public views: the status page, its event stream, the games list and the reveal.

Nothing here names a rank while a game is on: the status comes from the
device's rank-free ``status()``, and a game's full record is served only
once that game is over.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, render_template

from arbiter.game import Game, GameInProgressError
from arbiter.journal import StoreError, UnknownGameError
from web import present
from web.events import StreamHub

log = logging.getLogger(__name__)

bp = Blueprint("public", __name__)

STILL_ON = "game {id} is still on: its record is revealed when it is over"


def get_device() -> Any:
    """The running device this app serves."""
    return current_app.extensions["arbiter"]


def load_game(game_id: int) -> Game:
    """A game from the device's store; aborts 404 (unknown) or 503 (unreadable)."""
    try:
        return get_device().store.get(game_id)  # type: ignore[no-any-return]
    except UnknownGameError:
        abort(404, description=f"no game {game_id}")
    except StoreError:
        log.exception("game %s could not be read", game_id)
        abort(503, description=f"the record of game {game_id} is damaged; see the log")


@bp.get("/")
def index() -> str:
    return render_template("index.html", status=get_device().status())


@bp.get("/api/status")
def api_status() -> Response:
    return jsonify(get_device().status())


@bp.get("/api/events")
def api_events() -> Response:
    hub: StreamHub = current_app.extensions["arbiter_streams"]
    return Response(
        hub.stream(),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _summaries() -> list[dict[str, Any]]:
    store = get_device().store
    out = []
    for game_id in reversed(store.game_ids()):
        try:
            out.append(present.summary(store.get(game_id)))
        except StoreError:
            out.append({"id": game_id, "damaged": True})
    return out


@bp.get("/api/games")
def api_games() -> Response:
    return jsonify({"current": get_device().store.current.id, "games": _summaries()})


@bp.get("/api/games/<int:game_id>")
def api_game(game_id: int) -> Response | tuple[Response, int]:
    game = load_game(game_id)
    try:
        return jsonify(game.full_record())
    except GameInProgressError:
        return jsonify({"error": STILL_ON.format(id=game_id)}), 403


@bp.get("/games")
def games() -> str:
    rows = _summaries()
    for row in rows:
        row["started"] = present.clock(row.get("started_at"))
        row["ending_text"] = present.ending_text(row.get("ending"))
    return render_template("games.html", games=rows)


@bp.get("/games/<int:game_id>")
def game_page(game_id: int) -> str | tuple[str, int]:
    game = load_game(game_id)
    if not game.over:
        view = game.public_view()
        return render_template("still_on.html", game=view), 403
    return render_template("reveal.html", game=present.reveal(game.full_record()))
