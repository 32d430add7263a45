"""The bench behind the admin PIN: enrolling the pieces' tags and the self-test.

`gg-arbiter enroll` / `selftest` ask a running arbiter over this JSON API (it holds
the readers, LEDs and buzzer); the admin page's enrollment and self-test forms post
here too. Access is the admin's (:mod:`web.table.admin`); the game's own actions
(NEW GAME, reveal, declared endings) stay there.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, Response, abort, flash, jsonify, redirect, request, url_for
from flask.typing import ResponseReturnValue

from arbiter.device.errors import DeviceError, SelfTestInGameError, SelfTestTuneError
from arbiter.rules.errors import PieceError
from web.kit.body import json_object
from web.table.admin import admin_page, device_failed, render_dashboard, require_admin_api
from web.table.public import get_device

bp = Blueprint("bench", __name__)


# -- JSON API ----------------------------------------------------------------


@bp.get("/api/admin/enrollment")
def api_enrollment() -> Response:
    require_admin_api()
    return jsonify(get_device().enrollment_status())


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
        return device_failed(exc)
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
        return device_failed(exc)
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
        return device_failed(exc)


@bp.post("/api/admin/enrollment/next")
def api_enrollment_next() -> Response | tuple[Response, int]:
    """Order-free enrollment: ``{"piece": "B:SPY"}`` is the piece to enroll next."""
    require_admin_api()
    body = json_object('{"piece": "B:SPY"}')
    piece = body.get("piece")
    if not (isinstance(piece, str) and 0 < len(piece.strip()) <= 16):
        abort(400, description='piece must be a piece such as "B:SPY" or "W:PVT#3"')
    device = get_device()
    if not device.can_enroll:
        return _no_rfid()
    if not device.enrollment_status().get("active"):
        return jsonify({"error": "enrollment is not on"}), 409
    try:
        return jsonify(device.choose_enrollment(piece.strip()))
    except PieceError as exc:
        abort(400, description=str(exc))
    except DeviceError as exc:
        return jsonify({"error": str(exc)}), 409


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
    except SelfTestTuneError as exc:
        abort(400, description=str(exc))
    except SelfTestInGameError as exc:
        return jsonify({"error": str(exc)}), 409
    except DeviceError as exc:
        return device_failed(exc)
    faults = device.reader_faults()
    return jsonify({"lines": lines, "faults": faults, "passed": not faults})


# -- pages -------------------------------------------------------------------


def _to_dashboard(action: Callable[[], object], done: str = "") -> ResponseReturnValue:
    """Ask the device for ``action``; its refusal flashed as an error (else ``done``, if
    any), then back to the dashboard."""
    try:
        action()
    except (PieceError, DeviceError) as exc:
        flash(str(exc), "error")
    else:
        if done:
            flash(done, "ok")
    return redirect(url_for("admin.dashboard"))


@bp.post("/admin/enroll/start")
@admin_page
def enroll_start() -> ResponseReturnValue:
    only = request.form.get("only", "").strip() or None
    return _to_dashboard(lambda: get_device().start_enrollment(only))


@bp.post("/admin/enroll/next")
@admin_page
def enroll_next() -> ResponseReturnValue:
    piece = request.form.get("piece", "").strip()
    return _to_dashboard(lambda: get_device().choose_enrollment(piece))


@bp.post("/admin/enroll/stop")
@admin_page
def enroll_stop() -> ResponseReturnValue:
    return _to_dashboard(get_device().stop_enrollment, "Enrollment stopped.")


@bp.post("/admin/selftest")
@admin_page
def selftest() -> ResponseReturnValue:
    try:
        report = get_device().selftest()
    except DeviceError as exc:  # a game in progress, the device busy or shut down
        flash(f"Self-test not run: {exc}", "error")
        return redirect(url_for("admin.dashboard"))
    return render_dashboard(report)
