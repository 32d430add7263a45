"""Benchmark one table's flood while the hub is away (issue 27, item 6): does any other
table's game go missing, and how soon is it in the ledger once the hub returns?

Run: .venv/bin/python bench/bench_broker_flood.py [--flood 20000] [--tables 20]

Writes the broker files with ``gg-arbiter broker-config`` for TABLES tables and runs
Mosquitto on its ``mosquitto.conf`` as written. The hub's real ingest (its ledger in a
temporary directory) meets every table (each publishes ``online``) and goes away; table 7
publishes FLOOD junk messages on its ``events`` topic as fast as the broker takes them;
then every other table publishes a whole game (12 events); then the hub returns. Printed:
how long the flood took to publish, how long after its return the hub's ledger held every
other table's game (no resend asked: none runs here), how many of the flood reached it,
and the broker's resident memory after the flood. Twice: with the hub's per-table
sessions (as shipped, arbiter/hub/sessions.py) and with its one main session only (as
before: one queue shared by all tables). Target: no game lost with per-table sessions.
Needs mosquitto.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support: the same Mosquitto runner the tests use

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from arbiter.app.cli import main as gg_arbiter  # noqa: E402
from arbiter.hub.broker_link import Ingest  # noqa: E402
from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.hub.sessions import TableSessions  # noqa: E402
from tests.support.contract import challenge, game_over, new_game  # noqa: E402
from tests.support.mqtt import Mosquitto  # noqa: E402
from tests.support.spawn import free_port  # noqa: E402

EVENT = "bench"
FLOODER = "7"
GAME_EVENTS = 12


def _table(port: int, out: Path, table: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="")
    client.username_pw_set(f"table-{table}", _secret(out, f"table-{table}"))
    client.max_inflight_messages_set(200)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port, keepalive=60)
    client.loop_start()
    return client


def _secret(out: Path, user: str) -> str:
    return (out / "secrets" / f"{user}.password").read_text().strip()


def _game(table: str) -> list[bytes]:
    events = [new_game(table, 1, "g1")]
    events += [challenge(table, n + 1, "g1", n, n % 2, 1 - n % 2) for n in range(1, 11)]
    events.append(game_over(table, GAME_EVENTS, "g1", "flag_captured", "W"))
    return [json.dumps(e).encode() for e in events]


def _publish_all(client: mqtt.Client, topic: str, payloads: list[bytes]) -> None:
    infos = [client.publish(topic, p, qos=1) for p in payloads]
    for info in infos:
        info.wait_for_publish(600)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _wait(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def run(workdir: Path, flood: int, tables: int, per_table: bool) -> str:
    out, port = workdir / "venue", free_port()
    with contextlib.redirect_stdout(io.StringIO()):
        assert gg_arbiter(["broker-config", "--tables", str(tables), "--event", EVENT,
                           "--out", str(out), "--listen", "127.0.0.1",
                           "--listen-port", str(port)]) == 0
    broker = Mosquitto.with_config(workdir / "broker", (out / "mosquitto.conf").read_text(),
                                   port).start()
    assert broker.proc is not None
    names = [str(n) for n in range(1, tables + 1)]
    others = [t for t in names if t != FLOODER]
    real_open = TableSessions.open
    if not per_table:  # as before: the main session alone
        TableSessions.open = lambda self, table: None  # type: ignore[method-assign]
    clients: dict[str, mqtt.Client] = {}
    try:
        with Ledger(workdir / "hub.sqlite", EVENT) as ledger:
            hub = Ingest(ledger, EVENT, "127.0.0.1", port, username="hub",
                         password=_secret(out, "hub"))
            hub.start()
            clients = {t: _table(port, out, t) for t in names}
            for t, client in clients.items():
                client.publish(f"gg/{EVENT}/table/{t}/online", b"true", qos=1,
                               retain=True).wait_for_publish(10)
            if per_table and not _wait(lambda: hub.sessions.subscribed() == sorted(names), 60):
                raise SystemExit("the hub's per-table sessions did not all subscribe")
            time.sleep(0.5 if not per_table else 0)  # the main session's retained round
            hub.stop()
            began = time.monotonic()
            _publish_all(clients[FLOODER], f"gg/{EVENT}/table/{FLOODER}/events",
                         [b'{"junk": %d}' % n for n in range(flood)])
            flooded = time.monotonic() - began
            for t in others:
                _publish_all(clients[t], f"gg/{EVENT}/table/{t}/events", _game(t))
            rss = _rss_kib(broker.proc.pid)
            back = Ingest(ledger, EVENT, "127.0.0.1", port, username="hub",
                          password=_secret(out, "hub"))
            returned = time.monotonic()
            back.start()

            def complete() -> int:
                return sum(len(ledger.events.of_table(t)) == GAME_EVENTS for t in others)

            whole = _wait(lambda: complete() == len(others), 30)
            arrived = time.monotonic() - returned
            back.stop()
            held = sum(len(ledger.events.of_table(t)) for t in others)
            refused = ledger.events.refused().get(FLOODER, 0)
    finally:
        TableSessions.open = real_open  # type: ignore[method-assign]
        for client in clients.values():
            client.disconnect()
            client.loop_stop()
        broker.stop()
    label = "per-table sessions" if per_table else "one shared session"
    when = f"all in the ledger {arrived:.2f} s after the hub returned" if whole else (
        f"{len(others) * GAME_EVENTS - held} events lost (waited {arrived:.0f} s)")
    return (f"{label:19}: flood of {flood} published in {flooded:.1f} s; "
            f"{len(others)} other tables' games ({len(others) * GAME_EVENTS} events): {when};"
            f" {refused} of the flood reached the hub; broker RSS {rss // 1024} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=20_000)
    parser.add_argument("--tables", type=int, default=20)
    args = parser.parse_args()
    lines = []
    for per_table in (False, True):
        with tempfile.TemporaryDirectory(prefix="gg-flood-") as tmp:
            lines.append(run(Path(tmp), args.flood, args.tables, per_table))
            print(lines[-1], flush=True)
    ok = "lost" not in lines[-1]
    print(f"{'PASS' if ok else 'FAIL'}: with per-table sessions no other table's game is "
          "lost to one table's flood")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
