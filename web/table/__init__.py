"""The table's app: its status page, admin pages, simulator panel and JSON API.

``create_app(device)`` builds it; :func:`web.kit.serve.make_server` serves it
with waitress. Views use the device only through
:class:`arbiter.device.protocol.DeviceView` (its status, its games, its
commands); they never touch hardware or the record directly, and nothing
public names a rank while a game is on.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

from flask import Flask

from arbiter.device.protocol import DeviceView
from web.kit.events import KEEPALIVE_SECONDS, STREAM_CAPACITY, StatusFeed, StreamHub
from web.kit.hooks import install_hooks
from web.kit.pin_access import install_pin_access, pin_access_config


def create_app(device: DeviceView, test_config: dict[str, Any] | None = None) -> Flask:
    """Build the web app for ``device`` (an :class:`arbiter.device.arbiter.Arbiter`);
    the app uses only what :class:`~arbiter.device.protocol.DeviceView` offers.

    ``test_config`` overrides settings: ``ADMIN_PIN`` (else the config file's
    ``web.admin_pin``), ``DATA_DIR`` (else the device's), ``SSE_KEEPALIVE``
    seconds, ``STREAM_CAPACITY`` event streams open at once (more get 503;
    :func:`web.kit.serve.make_server` sets it to its ``streams``), ``STREAM_RETRY_SECONDS``
    before a refused page tries its stream again (it polls meanwhile), ``TESTING``, and
    the PIN and session settings of :func:`web.kit.pin_access.pin_access_config`. A PIN
    generated on first run is printed once to standard error (and kept in
    ``app.config["NEW_ADMIN_PIN"]`` for the caller).

    A damaged admin.json does not stop the app: the public pages work, and
    admin pages and API answer 503 saying how to repair it (``set-pin``).

    :raises web.kit.auth.PinFormatError: a configured ``ADMIN_PIN`` that breaks the PIN rule
        (:mod:`arbiter.pinrule`).
    """
    app = Flask(__name__)
    app.config.from_mapping(_settings(device))
    if test_config:
        app.config.update(test_config)

    # The repair names this arbiter's data directory: set-pin on the default one would
    # mend another directory's PIN.
    install_pin_access(
        app, repair=f"gg-arbiter set-pin --data {shlex.quote(str(app.config['DATA_DIR']))}",
        shown_once="gg-arbiter: admin PIN for the web page (shown once)")
    app.extensions["arbiter"] = device
    keepalive = float(app.config["SSE_KEEPALIVE"])
    app.extensions["arbiter_streams"] = StreamHub(
        StatusFeed(device, keepalive), keepalive, int(app.config["STREAM_CAPACITY"])
    )

    from web.table.admin import bp as admin_bp
    from web.table.bench import bp as bench_bp
    from web.table.public import bp as public_bp
    from web.table.sim import bp as sim_bp

    app.register_blueprint(public_bp)
    app.register_blueprint(admin_bp)
    app.register_blueprint(bench_bp)
    app.register_blueprint(sim_bp)

    def page_globals() -> dict[str, Any]:
        return {
            "sim_mode": device.is_simulator,
            "server_now": time.time(),
            "stream_retry": app.config["STREAM_RETRY_SECONDS"],
        }

    install_hooks(
        app, private_prefixes=("/admin",), error_template="error.html", page_globals=page_globals
    )
    return app


def _settings(device: DeviceView) -> dict[str, Any]:
    """The table app's settings with their defaults (``test_config`` overrides them)."""
    return {
        "DATA_DIR": str(device.data_dir),
        "ADMIN_PIN": device.admin_pin,
        "SSE_KEEPALIVE": KEEPALIVE_SECONDS,
        "STREAM_CAPACITY": STREAM_CAPACITY,
        "STREAM_RETRY_SECONDS": 30,
        **pin_access_config(cookie="gg_admin", idle_seconds=20 * 60),
    }
