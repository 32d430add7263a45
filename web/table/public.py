"""Public views: the status page, its event stream, the games list and the reveal.

Nothing here names a rank while a game is on: the status comes from the
device's rank-free ``status()``, and a game's full record is served only
once that game is over and not sealed (an abandoned game's once the next game has begun).
"""

from __future__ import annotations

import logging
from typing import Any, cast

from flask import Blueprint, Response, abort, current_app, jsonify, render_template

from arbiter.device.protocol import DeviceView
from arbiter.rules.errors import RecordSealedError
from arbiter.rules.game import Game
from arbiter.storage.journal import CorruptDataError, StoreError, UnknownGameError
from web.kit import present
from web.kit.events import stream_response

log = logging.getLogger(__name__)

bp = Blueprint("public", __name__)

STILL_ON = "game {id} is still on: its record is revealed when it is over"
ABANDONED = ("game {id} was abandoned (NEW GAME): its record is revealed once the next game"
             " has begun")
DAMAGED = (
    "the record file of game {id} is damaged (it failed its check), so the game cannot be shown"
)
UNREADABLE = "the record file of game {id} cannot be read just now"
PARTLY_DAMAGED = (
    "Part of the record file of game {id} is damaged; shown is its intact part, "
    "which ends with the game's ending."
)


def get_device() -> DeviceView:
    """The running device this app serves."""
    return cast(DeviceView, current_app.extensions["arbiter"])


def read_game(game_id: int) -> tuple[Game, str | None]:
    """A game from the device's record, and a notice when only its intact part is given.

    A damaged record file is logged as one warning line. Its intact part is
    given only when that part holds the game's ending (so nothing of a game
    still on, or cut short, is revealed); otherwise 503. Aborts 404 for an
    unknown game, 503 for one that cannot be read; neither names a server path.
    """
    try:
        return get_device().game(game_id), None
    except UnknownGameError:
        abort(404, description=f"no game {game_id}")
    except CorruptDataError as exc:
        log.warning("the record of game %d is damaged: %s", game_id, exc)
        if exc.valid is not None and exc.valid.over:
            return exc.valid, PARTLY_DAMAGED.format(id=game_id)
        abort(503, description=DAMAGED.format(id=game_id))
    except (StoreError, OSError) as exc:
        log.warning("the record of game %d cannot be read: %s", game_id, exc)
        abort(503, description=UNREADABLE.format(id=game_id))


def load_game(game_id: int) -> Game:
    """A whole, intact game; aborts 404 (unknown) or 503 (damaged, unreadable)."""
    game, notice = read_game(game_id)
    if notice is not None:
        abort(503, description=DAMAGED.format(id=game_id))
    return game


@bp.get("/")
def index() -> str:
    return render_template("index.html", status=get_device().status())


@bp.get("/api/status")
def api_status() -> Response:
    return jsonify(get_device().status())


@bp.get("/api/events")
def api_events() -> Response:
    # The page polls /api/status while refused, and tries the stream again after Retry-After.
    return stream_response(current_app.extensions["arbiter_streams"], "/api/status",
                           int(current_app.config["STREAM_RETRY_SECONDS"]))


def _summaries() -> list[dict[str, Any]]:
    device = get_device()
    out = []
    for game_id in reversed(device.game_ids()):
        try:
            out.append(present.summary(device.game(game_id)))
        except CorruptDataError as exc:
            if exc.valid is not None and exc.valid.over:  # its intact part can be shown
                out.append({**present.summary(exc.valid), "damaged": True})
            else:
                out.append({"id": game_id, "damaged": True})
        except (StoreError, OSError):
            out.append({"id": game_id, "damaged": True})
    return out


@bp.get("/api/games")
def api_games() -> Response:
    return jsonify({"current": get_device().current_game_id, "games": _summaries()})


@bp.get("/api/games/<int:game_id>")
def api_game(game_id: int) -> Response | tuple[Response, int]:
    game, notice = read_game(game_id)
    try:
        record = game.full_record()
    except RecordSealedError:
        words = ABANDONED if game.over else STILL_ON
        return jsonify({"error": words.format(id=game_id)}), 403
    if notice is not None:
        record = {**record, "damaged": True, "notice": notice}
    return jsonify(record)


@bp.get("/games")
def games() -> str:
    rows = _summaries()
    for row in rows:
        row["started"] = present.clock(row.get("started_at"))
        row["ending_text"] = present.ending_text(row.get("ending"))
    return render_template("games.html", games=rows)


@bp.get("/games/<int:game_id>")
def game_page(game_id: int) -> str | tuple[str, int]:
    game, notice = read_game(game_id)
    if game.sealed:
        view = game.public_view()
        return render_template("still_on.html", game=view), 403
    return render_template("reveal.html", game=present.reveal(game.full_record()), notice=notice)
