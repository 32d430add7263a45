"""Benchmark the venue broker's backlog: how fast ``broker-config``'s Mosquitto takes and
then hands over a backlog queued for a hub that is away.

Run: .venv/bin/python bench/bench_broker_backlog.py [--messages 1000] [--tables 200]

Writes the broker files with ``gg-arbiter broker-config`` (listening on 127.0.0.1, a free
port) and runs Mosquitto on its ``mosquitto.conf`` as written; then the same with the
persistence lines as they were before issue 19 (``autosave_on_changes true``: a save per
change). For each: the hub's session for table 1's events (its login ``hub-table-1``: the
hub keeps one a table, arbiter/hub/sessions.py) subscribes and goes away, table 1's login
publishes MESSAGES QoS 1 events (paho's window of 20 in flight, as a table; at most a
session's queue, ``QUEUE_PER_CLIENT``), then the session comes back and takes them all.
Prints the rate at which the broker acknowledged the table while the backlog grew
(overall and over the last thousand) and the rate at which the backlog drained to the hub,
in messages/s. Target: the drain beats the 134 messages/s into the hub
of the 200-table bench (bench/bench_hub_venue.py). Needs mosquitto.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support: the same Mosquitto runner the tests use

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from arbiter.app.cli import main as gg_arbiter  # noqa: E402
from arbiter.mqtt.address import table_session_login  # noqa: E402
from arbiter.venue.brokerconf import QUEUE_PER_CLIENT  # noqa: E402
from tests.support.mqtt import Mosquitto  # noqa: E402
from tests.support.spawn import free_port  # noqa: E402

EVENT = "bench"
TARGET = 134.0


def _client(port: int, user: str, password: str, clean: bool) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user, clean_session=clean)
    client.username_pw_set(user, password)
    up = threading.Event()
    client.on_connect = lambda _c, _u, _f, reason, _p: up.set()
    client.connect("127.0.0.1", port)
    client.loop_start()
    if not up.wait(10):
        raise SystemExit(f"{user} could not connect")
    return client


def run(workdir: Path, messages: int, tables: int, old_persistence: bool) -> tuple[float, float,
                                                                                    float]:
    """(acknowledged msg/s overall, over the last thousand, drained msg/s)."""
    out, port = workdir / "venue", free_port()
    with contextlib.redirect_stdout(io.StringIO()):
        code = gg_arbiter(["broker-config", "--tables", str(tables), "--event", EVENT,
                           "--out", str(out), "--listen", "127.0.0.1",
                           "--listen-port", str(port)])
    assert code == 0
    conf = (out / "mosquitto.conf").read_text()
    if old_persistence:
        conf = conf.replace("autosave_on_changes false", "autosave_on_changes true")
    broker = Mosquitto.with_config(workdir / "broker", conf, port).start()
    secret = {u: (out / "secrets" / f"{u}.password").read_text().strip()
              for u in ("hub", "table-1")}
    login = table_session_login("hub", "1")
    try:
        hub = _client(port, login, secret["hub"], clean=False)
        subscribed = threading.Event()
        hub.on_subscribe = lambda *_: subscribed.set()
        hub.subscribe(f"gg/{EVENT}/table/1/events", qos=1)
        if not subscribed.wait(10):  # then away, its session kept
            raise SystemExit("the hub's subscription was not acknowledged")
        hub.disconnect()
        hub.loop_stop()
        table = _client(port, "table-1", secret["table-1"], clean=True)
        topic = f"gg/{EVENT}/table/1/events"
        started = time.perf_counter()
        infos = [table.publish(topic, b'{"seq":%d,"pad":"%s"}' % (n, b"x" * 200), qos=1)
                 for n in range(1, messages + 1)]
        stamps = []
        for info in infos:
            info.wait_for_publish(600)
            stamps.append(time.perf_counter())
        taken = messages / (stamps[-1] - started)
        last = min(1000, messages - 1)
        tail = last / (stamps[-1] - stamps[-1 - last])
        table.disconnect()
        table.loop_stop()
        got = threading.Event()
        count = [0]

        def on_message(_c: mqtt.Client, _u: object, _m: mqtt.MQTTMessage) -> None:
            count[0] += 1
            if count[0] == messages:
                got.set()

        back = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=login, clean_session=False)
        back.username_pw_set(login, secret["hub"])
        back.on_message = on_message
        start = time.perf_counter()
        back.connect("127.0.0.1", port)
        back.loop_start()
        if not got.wait(600):
            raise SystemExit(f"the hub got {count[0]} of {messages}")
        drained = messages / (time.perf_counter() - start)
        back.disconnect()
        back.loop_stop()
        return taken, tail, drained
    finally:
        broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=QUEUE_PER_CLIENT)
    parser.add_argument("--tables", type=int, default=200)
    args = parser.parse_args()
    ok = True
    for old, label in ((True, "autosave_on_changes true (before)"),
                       (False, "broker-config as shipped")):
        with tempfile.TemporaryDirectory(prefix="gg-backlog-") as tmp:
            taken, tail, drained = run(Path(tmp), args.messages, args.tables, old)
        print(f"{label:36} backlog of {args.messages}: taken at {taken:7.0f} msg/s "
              f"(last 1000: {tail:7.0f}), drained to the hub at {drained:7.0f} msg/s")
        if not old:
            ok = drained > TARGET and tail > TARGET
    print(f"{'PASS' if ok else 'FAIL'}: the venue broker takes and drains a backlog faster "
          f"than {TARGET:.0f} msg/s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
