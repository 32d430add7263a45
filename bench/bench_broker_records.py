"""Benchmark one table login flooding the broker's retained store (issue 27, item 5): how
much does the broker keep, and is anything of another table's refused?

Run: .venv/bin/python bench/bench_broker_records.py [--topics 5000] [--old-acl]

Writes the broker files with ``gg-arbiter broker-config`` for 2 tables and runs Mosquitto
on its ``mosquitto.conf``. Table 1's login (MQTT 5: each PUBACK says whether the broker
took the message) publishes TOPICS retained records of the wire's largest size (64 KiB),
each on a topic of its own (``record/<n>``: one topic a game, as before issue 27), then
20 such messages on each topic it may write; table 2 then publishes a record. Printed:
how many the broker refused and took, how long it took, whether table 2's record was
taken, the broker's resident memory, and the size of the store it saves on a clean stop.
``--old-acl`` grants table 1 ``record/#`` as before (one retained topic a game). Needs
mosquitto.
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
from paho.mqtt.reasoncodes import ReasonCode  # noqa: E402

from arbiter import wire  # noqa: E402
from arbiter.app.cli import main as gg_arbiter  # noqa: E402
from tests.support.mqtt import Mosquitto  # noqa: E402
from tests.support.spawn import free_port  # noqa: E402

EVENT = "bench"
#: Seconds to wait for the broker's answer to each publish.
ANSWER = 10.0


class _Login:
    """A table's login over MQTT 5, counting the broker's answers."""

    def __init__(self, port: int, out: Path, table: str) -> None:
        self.refused = self.taken = 0
        self.answers = threading.Semaphore(0)
        self.dropped = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="",
                                  protocol=mqtt.MQTTv5)
        secret = (out / "secrets" / f"table-{table}.password").read_text().strip()
        self.client.username_pw_set(f"table-{table}", secret)
        self.client.max_inflight_messages_set(200)
        self.client.on_publish = self._answered
        self.client.on_disconnect = lambda *_a: self.dropped.set()
        self.client.connect("127.0.0.1", port, keepalive=60)
        self.client.loop_start()

    def _answered(self, _c: object, _u: object, _m: int, reason: ReasonCode,
                  _p: object) -> None:
        if reason.is_failure:
            self.refused += 1
        else:
            self.taken += 1
        self.answers.release()

    def wait(self, count: int) -> int:
        """Wait for ``count`` answers (or the broker dropping the login); how many came."""
        for n in range(count):
            if not self.answers.acquire(timeout=0 if self.dropped.is_set() else ANSWER):
                return n
        return count

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def run(topics: int, old_acl: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work, port = Path(tmp), free_port()
        out = work / "venue"
        with contextlib.redirect_stdout(io.StringIO()):
            assert gg_arbiter(["broker-config", "--tables", "2", "--event", EVENT, "--out",
                               str(out), "--listen", "127.0.0.1", "--listen-port",
                               str(port)]) == 0
        if old_acl:
            acl = out / "acl"
            acl.write_text(acl.read_text().replace(
                f"topic write {wire.topic(EVENT, '1', wire.Topic.RECORD)}\n",
                f"topic write {wire.table_pattern(EVENT, '1', wire.Topic.RECORD)}\n"))
        broker = Mosquitto.with_config(work / "broker", (out / "mosquitto.conf").read_text(),
                                       port).start()
        assert broker.proc is not None
        one, two = _Login(port, out, "1"), _Login(port, out, "2")
        big = b"r" * wire.MAX_BYTES[wire.Topic.RECORD]
        began = time.monotonic()
        sent = 0
        for n in range(topics):
            if one.dropped.is_set():
                break
            one.client.publish(wire.legacy_record_topic(EVENT, "1", n), big, qos=1,
                               retain=True)
            sent += 1
        for kind in wire.TABLE_WRITES:
            for _ in range(20):
                if not one.dropped.is_set():
                    one.client.publish(wire.topic(EVENT, "1", kind), big, qos=1, retain=True)
                    sent += 1
        answered = one.wait(sent)
        took = time.monotonic() - began
        two.client.publish(wire.topic(EVENT, "2", wire.Topic.RECORD), b'{"game": 1}', qos=1,
                           retain=True)
        two.wait(1)
        rss = _rss(broker.proc.pid)
        dropped = one.dropped.is_set()
        one.close()
        two.close()
        broker.stop()
        store = sum(p.stat().st_size for p in (out / "db").glob("*.db"))
        print(f"{'old ACL (record/#)' if old_acl else 'ACL as shipped'}: table 1 sent {sent}"
              f" in {took:.1f} s, {answered} answered: {one.refused} refused,"
              f" {one.taken} taken{', then dropped' if dropped else ''};"
              f" table 2's record {'taken' if two.taken else 'REFUSED'};"
              f" broker RSS {rss / 2**20:.1f} MiB; store saved {store / 1024:.0f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=5000)
    parser.add_argument("--old-acl", action="store_true")
    args = parser.parse_args()
    run(args.topics, args.old_acl)


if __name__ == "__main__":
    main()
