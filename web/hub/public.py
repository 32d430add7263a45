"""The venue's public pages and JSON: tables, rounds, standings, games; live over SSE.

No rank while a game is on: the views hold counts, players and results only,
and a game's reveal appears once the game is over (see :mod:`web.hub.views`).
"""

from __future__ import annotations

from typing import cast

from flask import Blueprint, Response, abort, current_app, jsonify, render_template, request

from arbiter.hub.ledger import Ledger
from web.hub import views
from web.hub.feed import VenueFeed
from web.kit.broadcast import Encoding, negotiate
from web.kit.errors import StreamsFullError
from web.kit.events import DIRECT_WRITE, StreamHub, StreamRoute

bp = Blueprint("public", __name__)

#: Seconds a page refused a stream waits before it tries again (it polls meanwhile).
STREAM_RETRY_SECONDS = 30
#: The venue's event stream, which every public page follows (static/hub.js), and where
#: a refused page polls: served by the asynchronous server itself (web.kit.aserve), or
#: by :func:`api_events` under a WSGI server (tests, Flask's test client).
STREAM = StreamRoute("/api/events", "/api/venue", STREAM_RETRY_SECONDS)


def ledger() -> Ledger:
    return cast(Ledger, current_app.extensions["hub_ledger"])


def feed() -> VenueFeed:
    return cast(VenueFeed, current_app.extensions["hub_feed"])


@bp.get("/")
def venue() -> str:
    return render_template("hub_venue.html", venue=_venue(), screen=False)


@bp.get("/screen")
def screen() -> str:
    """The venue for a big screen (1920 x 1080 read from 5 m): up to 50 tables a page,
    in a grid sized to their number (:func:`views.screen_grid`)."""
    shown = _venue()
    return render_template("hub_venue.html", venue=shown, screen=True,
                           grid=views.screen_grid(len(cast(list[object], shown["tables"]))),
                           standings_stand=views.standings_stand(ledger()))


def _venue() -> dict[str, object]:
    link = feed().link()
    return views.venue(ledger(), feed().silent(), None if link is None else link.public())


@bp.get("/rounds")
def rounds() -> str:
    return render_template("hub_rounds.html", rounds=list(reversed(views.rounds(ledger()))),
                           total=ledger().admin.total_rounds())


@bp.get("/standings")
def standings() -> str:
    return render_template("hub_standings.html", standings=views.standings(ledger()))


@bp.get("/games")
def games() -> str:
    return render_template("hub_games.html", games=views.games(ledger()))


@bp.get("/games/<table>/<game_id>")
def game(table: str, game_id: str) -> str:
    found = views.game(ledger(), table, game_id)
    if found is None:
        abort(404, description=f"no game {game_id} at table {table}")
    return render_template("hub_game.html", game=found)


@bp.get("/api/venue")
def api_venue() -> Response:
    return jsonify(_venue())


@bp.get("/api/rounds")
def api_rounds() -> Response:
    return jsonify(views.rounds(ledger()))


@bp.get("/api/standings")
def api_standings() -> Response:
    return jsonify(views.standings(ledger()))


@bp.get("/api/games")
def api_games() -> Response:
    return jsonify(views.games(ledger()))


@bp.get("/api/games/<table>/<game_id>")
def api_game(table: str, game_id: str) -> Response:
    found = views.game(ledger(), table, game_id)
    if found is None:
        abort(404, description=f"no game {game_id} at table {table}")
    return jsonify(found)


@bp.get(STREAM.path)
def api_events() -> Response:
    """The venue's event stream: a snapshot (or what a reconnecting browser missed, by
    ``Last-Event-ID``), then patches; compressed as ``Accept-Encoding`` allows."""
    hub = cast(StreamHub, current_app.extensions["arbiter_streams"])
    encoding = negotiate(request.headers.get("Accept-Encoding"))
    try:
        stream = hub.open(encoding, request.headers.get("Last-Event-ID"),
                               request.environ.get(DIRECT_WRITE))
    except StreamsFullError as exc:
        response = jsonify({"error": STREAM.refusal(exc)})
        response.status_code = 503
        response.headers["Retry-After"] = str(STREAM_RETRY_SECONDS)
        return response
    headers = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no",
               "Vary": "Accept-Encoding"}
    if encoding is not Encoding.IDENTITY:
        headers["Content-Encoding"] = encoding.value
    return Response(stream, mimetype="text/event-stream", headers=headers)
