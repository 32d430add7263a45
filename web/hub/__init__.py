"""The hub's web app: the venue's public pages, the organiser's pages, and their JSON API.

``create_hub_app(ledger, feed, publish)`` builds it;
:func:`web.kit.aserve.make_async_server` serves it (its event stream on asyncio, no
thread per viewer: a venue's every phone). Views read the ledger (through
:mod:`web.hub.views`); only the organiser's actions, behind the PIN,
change it. ``publish(table, payload)`` sends a table its assignment (the
serving hub's MQTT client); without it, assignments are stored and published
at the hub's next start. ``resend(table)`` asks a table to publish its
missing events again (the organiser's "ask again"). The PIN, sessions, CSRF
and the attempt limiter are the kit's (:mod:`web.kit.pin_access`), as on a table, with
``admin.json`` in the hub's data directory.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.wire import AssignmentMessage
from web.hub.feed import VenueFeed
from web.kit.aserve import DEFAULT_STREAMS
from web.kit.body import install_body_limits
from web.kit.events import KEEPALIVE_SECONDS, StreamHub
from web.kit.hooks import install_hooks
from web.kit.pin_access import install_pin_access, pin_access_config

Publish = Callable[[str, AssignmentMessage | None], None]
#: Ask a table to publish its missing events again; None when nothing is missing.
Resend = Callable[[str], ResendAsk | None]


def create_hub_app(
    ledger: Ledger,
    feed: VenueFeed,
    data_dir: str | Path,
    *,
    publish: Publish | None = None,
    resend: Resend | None = None,
    test_config: Mapping[str, Any] | None = None,
) -> Flask:
    """The hub's Flask app over ``ledger``; ``feed`` drives ``/api/events``.

    ``test_config`` overrides settings: ``ADMIN_PIN`` (else the stored one, or
    one generated and printed once), ``SSE_KEEPALIVE``, ``STREAM_CAPACITY``,
    ``ORGANISER_POLL_SECONDS`` (how often the organiser page also looks for what the
    public stream does not announce), ``TESTING``, and the PIN and session settings of
    :func:`web.kit.pin_access.pin_access_config`.
    """
    app = Flask(__name__)
    app.config.from_mapping(_settings(data_dir))
    if test_config:
        app.config.update(test_config)
    # The repair names this hub's event and data directory: set-pin on the default one
    # would mend another hub's PIN (issue 19, finding 15).
    install_pin_access(
        app, repair=f"gg-arbiter hub --event {shlex.quote(ledger.event)} "
                    f"--data {shlex.quote(str(data_dir))} set-pin",
        shown_once="gg-arbiter hub: organiser PIN (shown once)")

    app.extensions["hub_ledger"] = ledger
    app.extensions["hub_feed"] = feed
    app.extensions["hub_publish"] = publish
    app.extensions["hub_resend"] = resend
    # The keys web.kit.aserve.make_async_server looks for: it serves the stream's path
    # itself, sizes and stops the streams, which the feed's sender writes (the kit's one
    # mechanism, as on a table).
    feed.keepalive = float(app.config["SSE_KEEPALIVE"])
    app.extensions["arbiter_streams"] = StreamHub(
        feed, feed.keepalive, int(app.config["STREAM_CAPACITY"])
    )

    from web.hub.organiser import IMPORT_BODY_BYTES, IMPORT_PATHS
    from web.hub.organiser import bp as organiser_bp
    from web.hub.public import STREAM
    from web.hub.public import bp as public_bp

    app.extensions["arbiter_stream_route"] = STREAM

    app.register_blueprint(public_bp)
    app.register_blueprint(organiser_bp)
    # An event's files are bigger than any other body (waitress and Flask both read this).
    install_body_limits(app, dict.fromkeys(IMPORT_PATHS, IMPORT_BODY_BYTES))
    install_hooks(
        app,
        private_prefixes=("/organiser",),
        error_template="hub_error.html",
        page_globals=lambda: {"event": ledger.event, "broker": _link(feed)},
    )
    return app


def _settings(data_dir: str | Path) -> dict[str, Any]:
    """The hub app's settings with their defaults (``test_config`` overrides them)."""
    return {
        "DATA_DIR": str(data_dir),
        "ADMIN_PIN": None,
        "SSE_KEEPALIVE": KEEPALIVE_SECONDS,
        "STREAM_CAPACITY": DEFAULT_STREAMS,
        **pin_access_config(cookie="gg_organiser", idle_seconds=60 * 60),
        # The cookie is sent only when the session changes: the organiser page's live
        # fetches, answered while a form's action is under way, would otherwise send
        # back the session they read, bringing back a message the page already showed.
        # (The idle time is kept server-side, so a fixed cookie lifetime loses nothing.)
        "SESSION_REFRESH_EACH_REQUEST": False,
        "ORGANISER_POLL_SECONDS": 15,
    }


def _link(feed: VenueFeed) -> dict[str, Any] | None:
    """The hub's broker link for every page (None where the hub has no broker)."""
    link = feed.link()
    return None if link is None else link.public()
