"""The simulator panel and its API: virtual slots, LEDs and buzzer.

Present only in simulator mode; everything here answers 404 otherwise. The
API seats and removes pieces but never says which piece is seated: the
status stays rank-free, and the picker's choice lives only in the browser
that made it. ``/api/sim/ranks`` is the picker's list of ranks (the rule
table, not anything about the game).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, abort, jsonify, render_template

from arbiter.device.protocol import SimulatedSlots
from arbiter.rules.errors import PieceError
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import Role
from web.kit.body import json_object
from web.table.public import get_device

bp = Blueprint("sim", __name__)

SLOT_NAMES = {role.value: role for role in Role}


def _slots() -> SimulatedSlots:
    """The simulator's slots; 404 when the device is not the simulator."""
    slots = get_device().sim
    if slots is None:
        abort(404, description="the simulator is not running (start with gg-arbiter run --sim)")
    return slots


@bp.before_request
def sim_only() -> None:
    _slots()


def _role(slot: str) -> Role:
    role = SLOT_NAMES.get(slot)
    if role is None:
        abort(400, description=f"unknown slot {slot!r}: use attacker or defender")
    return role


@bp.get("/sim")
def panel() -> str:
    return render_template("sim.html", status=get_device().status(), holding=_holding())


@bp.put("/api/sim/slots/<slot>")
def seat(slot: str) -> tuple[Response, int]:
    role = _role(slot)
    body = json_object('a JSON object like {"piece": "W:PVT"}')
    piece = body.get("piece")
    if not isinstance(piece, str) or not piece.strip() or len(piece) > 64:
        abort(400, description='"piece" must be a piece in text, SIDE:RANK')
    try:
        _slots().seat(role, piece)
    except PieceError as exc:
        abort(400, description=f"not a piece: {exc}")
    return jsonify({"slot": role.value, "seated": True}), 200


@bp.delete("/api/sim/slots/<slot>")
def remove(slot: str) -> Response:
    role = _role(slot)
    _slots().clear(role)
    return jsonify({"slot": role.value, "seated": False})


def _holding() -> dict[str, str]:
    return {role.value: state.value for role, state in _slots().holding().items()}


@bp.get("/api/sim/slots")
def slots() -> Response:
    """What each slot holds (``empty`` or ``present``), whoever seated the piece (this
    panel, another browser or the terminal); never which piece. Read from the simulated
    slots, not the device's status, so a seat's answer and the next poll agree: the status
    takes the reading a moment later, and a poll in between would unsay the seat."""
    return jsonify(_holding())


@bp.get("/api/sim/outputs")
def outputs() -> Response:
    return jsonify(get_device().outputs())


@bp.get("/api/sim/tunes")
def tunes() -> Response:
    return jsonify(get_device().tunes_json())


@bp.get("/api/sim/ranks")
def ranks() -> Response:
    """The picker's choices: both sides and all fifteen ranks, strongest first."""
    data: dict[str, Any] = {
        "sides": [{"letter": s.letter, "name": s.title} for s in Side],
        "ranks": [{"code": r.code, "name": r.full_name, "count": r.count} for r in Rank],
    }
    return jsonify(data)
