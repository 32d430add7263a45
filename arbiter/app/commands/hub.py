"""``gg-arbiter hub ...``: run an event's hub, and script its ledger.

``gg-arbiter hub --event SLUG --broker URL`` serves (MQTT ingest into the
ledger) until stopped; with a subcommand (:mod:`arbiter.app.commands.hub_ledger`,
:mod:`arbiter.app.commands.hub_reports`) it acts on the ledger and exits: players,
pairing, assignments, corrections, standings, exports, archives. The ledger is
``DIR/hub.sqlite`` (``--data DIR``).
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from arbiter.app.commands import hub_ledger, hub_reports
from arbiter.app.commands.common import BrokerHelp, Serving, add_broker_options
from arbiter.app.commands.hub_common import BrokerLink, broker_link, open_ledger, span
from arbiter.app.errors import HubCliError
from arbiter.app.stopping import StopRequests
from arbiter.app.watchdog import Watchdog, systemd_notify
from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from arbiter.hub.resend import GRACE, Resender
from arbiter.threads import BackgroundThread, declare
from web.hub import create_hub_app
from web.hub.feed import VenueFeed
from web.kit.aserve import DEFAULT_STREAMS, AsyncWebServer, make_async_server
from web.kit.errors import WebServerError

log = logging.getLogger(__name__)

WEB = declare("hub-web", __name__,
              "serves the venue and organiser pages (the asynchronous server's event loop)")
WATCHDOG = declare("hub-watchdog", __name__,
                   "tells systemd the hub is alive (its web loop turns, its ledger writer "
                   "keeps up), so a hung hub is restarted")

DEFAULT_WEB_PORT = 8088
#: Seconds the web server may take to answer once its thread runs (else the hub stops:
#: systemd, never told READY=1, restarts it).
WEB_START_SECONDS = 30.0
#: Seconds one batch of the ledger writer may take before the hub counts as hung (its
#: systemd watchdog is no longer fed); a Pi's SD card writes a full batch in well under.
WRITER_STUCK_SECONDS = 60.0

HUB_BROKER_HELP = BrokerHelp(
    broker="MQTT broker, mqtt://[USER[:PASSWORD]@]HOST[:1883] or, with TLS, "
           "mqtts://[USER[:PASSWORD]@]HOST[:8883]",
    ca_file="for mqtts://: the CA certificate that signed the broker's "
            "(default: the system's trust store)",
    password_file="the broker password of the URL's user (e.g. secrets/hub.password)",
)


def register(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``hub`` and its subcommands to the ``gg-arbiter`` subparsers ``sub``."""
    hub = sub.add_parser("hub", help="the tournament hub: serve an event, or script its ledger")
    hub.add_argument("--event", required=True, metavar="SLUG", help="the event's short name")
    hub.add_argument("--data", metavar="DIR", help="directory of the ledger (hub.sqlite)")
    add_broker_options(hub, HUB_BROKER_HELP, connect_timeout=3.0)
    hub.add_argument("--host", default="0.0.0.0", help="web address to serve on (default all)")
    hub.add_argument("--port", type=int, default=DEFAULT_WEB_PORT,
                     help=f"web port (default {DEFAULT_WEB_PORT}; 0 picks a free one)")
    hub.add_argument("--viewers", type=_viewers, default=DEFAULT_STREAMS, metavar="N",
                     help="live viewers the pages serve at once (default "
                          f"{DEFAULT_STREAMS}; each costs the hub about 25 KB; one more is "
                          "refused at once and its page reloads every 10 s instead)")
    hub.add_argument("--resend-after", type=span, default=GRACE, metavar="SECONDS",
                     help="ask a table to resend events missing for this long "
                          f"(default {GRACE:g})")
    hub.add_argument("--silent-after", type=span, default=10.0, metavar="MINUTES",
                     help="flag a table of the round with no event for this long (default 10)")
    hub.set_defaults(func=Serving(_serve))
    cmds = hub.add_subparsers(dest="hub_command", metavar="SUBCOMMAND", parser_class=parser_class)
    hub_ledger.register(cmds, parser_class)
    hub_reports.register(cmds)


def _viewers(text: str) -> int:
    """``--viewers``: a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 viewer, not {value}")
    return value


def _serve(args: argparse.Namespace, requests: StopRequests) -> int:
    """Serve the event until a stop request (a signal, however many, at any moment)."""
    if not args.broker:
        raise HubCliError("gg-arbiter hub: give --broker URL to serve (or a subcommand)")
    link = broker_link(args)
    notify = systemd_notify()
    systemd = SystemdStatus(notify, str(link.address))
    with open_ledger(args) as ledger:
        feed = VenueFeed(ledger, timedelta(minutes=args.silent_after))
        ingest = Ingest(ledger, args.event, link.address.host, link.address.port,
                        username=link.username,
                        password=link.password, tls=link.tls)
        resender = Resender(ledger, ingest.publish_resend, grace=args.resend_after)
        ingest.changes.follow(feed)
        ingest.changes.follow_link(feed)
        ingest.changes.follow_link(systemd)
        ingest.changes.follow(resender)
        # A broker that refuses the hub's login, or TLS that cannot work (BrokerTlsError,
        # at once), stops the hub in one line (said by main) before it shows a PIN or opens
        # its web port. A broker that is down or slow does not: the hub serves, its pages
        # say the link is down and since when, and it tries again with a backoff.
        ingest.start(timeout=args.connect_timeout)
        try:
            server = _web_server(args, ledger, feed, ingest, resender)
        except BaseException:
            ingest.stop()
            raise
        web = BackgroundThread(lambda _stopping: server.run(), WEB, wake=server.close)
        watchdog = _watchdog(notify, server, ingest)
        try:
            feed.start()
            resender.start()
            web.start()
            if not server.wait_serving(WEB_START_SECONDS):
                raise HubCliError(f"gg-arbiter hub: the web pages on {server.url} did not "
                                  f"start within {WEB_START_SECONDS:g} s")
            _announce(args, link, ledger, ingest, server)
            # The pages answer (the broker link may still be coming: they say so).
            systemd.ready(server.url)
            if watchdog is not None:
                watchdog.start()
            requests.wait()
            systemd.stopping()
        finally:
            if watchdog is not None:
                watchdog.stop()
            web.stop()
            server.close()  # also when its thread never started
            resender.stop()
            feed.stop()
            ingest.stop()
    return 0


def _watchdog(notify: Callable[[str], object], server: AsyncWebServer,
              ingest: Ingest) -> BackgroundThread | None:
    """With the unit's WatchdogSec (systemd's ``WATCHDOG_USEC``), the thread that feeds it
    (WATCHDOG=1) each half of it while the hub's web loop turns and its ledger writer
    keeps up: a hub hung in either is killed and started again. None without it."""
    dog = Watchdog(notify, what="the hub (its web loop or its ledger writer)")
    if not dog.interval:
        return None
    wait = min(5.0, dog.interval / 2)

    def alive() -> bool:
        return server.turns(wait) and ingest.writer.progress.keeps_up(WRITER_STUCK_SECONDS)

    return BackgroundThread(lambda stopping: dog.run(alive, stopping), WATCHDOG)


def _web_server(args: argparse.Namespace, ledger: Ledger, feed: VenueFeed, ingest: Ingest,
                resender: Resender) -> AsyncWebServer:
    app = create_hub_app(ledger, feed, ledger.path.parent,
                         publish=ingest.publish_assignment, resend=resender.ask)
    # The venue's streams on asyncio: a thousand phones, no thread each (web.kit.aserve).
    try:
        return make_async_server(app, args.host, args.port, streams=args.viewers)
    except WebServerError as exc:
        raise HubCliError(str(exc)) from None


def _announce(args: argparse.Namespace, link: BrokerLink, ledger: Ledger, ingest: Ingest,
              server: AsyncWebServer) -> None:
    """Republish the current round, log the gaps, and say what the hub serves."""
    rounds = ledger.admin.rounds()
    if rounds:  # a broker slow to take them is logged, never fatal
        ingest.republish_round(rounds[-1][0])
    for table in ledger.tables.names():
        for first, last in ledger.events.gaps(table):
            log.warning("table %s: events %d to %d missing", table, first, last)
    print(f"hub serving event {args.event} from {link.address} into {ledger.path}",
          flush=True)
    print(serving_line(server.host, server.port, server.url), flush=True)


class SystemdStatus:
    """What the hub tells systemd (``Type=notify``): READY=1 once its pages answer, a
    STATUS= line whenever its broker link goes up or down (``systemctl status gg-hub``
    shows it), STOPPING=1 when it is asked to stop. A :class:`LinkFollower` of the
    ingest: it sends one datagram on paho's thread, never waits."""

    def __init__(self, notify: Callable[[str], object], broker: str) -> None:
        self._notify = notify
        self._broker = broker
        self._lock = threading.Lock()  # paho's thread against the main one
        self._up: bool | None = None  # not yet known
        self._pages = ""  # where the pages answer, once they do

    def link_changed(self, up: bool) -> None:
        with self._lock:
            self._up = up
            self._notify(self._status())

    def ready(self, url: str) -> None:
        with self._lock:
            self._pages = url
            self._notify(f"READY=1\n{self._status()}")

    def stopping(self) -> None:
        with self._lock:
            self._notify("STOPPING=1\nSTATUS=stopping")

    def _status(self) -> str:
        link = {None: "connecting to the broker", True: "connected to the broker",
                False: "no connection to the broker, trying again"}[self._up]
        pages = f"pages on {self._pages}; " if self._pages else ""
        return f"STATUS={pages}{link} {self._broker}"


def serving_line(host: str, port: int, url: str) -> str:
    """What the hub says it serves on: ``url`` (for this machine), and, when it listens
    on every address, that it does (issue 19, finding 16: "http://127.0.0.1:8088/"
    alone would say only this machine can reach it)."""
    if host in ("0.0.0.0", "::", ""):
        return (f"hub web on {url} (listening on every address of this machine, port {port}:"
                f" from another machine use its name or address)")
    return f"hub web on {url}"
