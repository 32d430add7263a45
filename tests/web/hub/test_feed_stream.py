"""The venue stream as a browser receives it from the hub's server: a snapshot then patches,
compressed as Accept-Encoding asks, decoding to exactly what /api/venue says; a
stream joining later (its own opening, then the shared compressed messages) decodes
too; a reconnection with Last-Event-ID gets only what it missed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from arbiter.hub.ledger import Ledger
from arbiter.wire import Topic
from tests.support.contract import challenge, new_game
from tests.support.sse import StreamDecoder, open_stream
from tests.support.web import http_json, live_hub_server, venue_states
from tests.web.hub.conftest import EVENT, _app
from web.hub.feed import STREAM_FIELDS, VenueFeed, apply_patch, diff_rows
from web.kit.broadcast import Encoding, negotiate

pytestmark = pytest.mark.timeout(60)


def test_negotiate_follows_accept_encoding() -> None:
    assert negotiate("gzip, deflate, br") is Encoding.GZIP
    assert negotiate("deflate") is Encoding.DEFLATE
    assert negotiate("gzip;q=0, deflate") is Encoding.DEFLATE
    assert negotiate("br") is Encoding.IDENTITY
    assert negotiate(None) is Encoding.IDENTITY
    assert negotiate("*") is Encoding.GZIP


def test_a_patch_holds_only_what_changed_and_applies_back() -> None:
    before = {"1": {"table": "1", "challenges": 3, "lost": {"W": 1, "B": 2}, "state": "idle"},
              "2": {"table": "2", "challenges": 0, "lost": {"W": 0, "B": 0}, "state": None}}
    after = {"1": {"table": "1", "challenges": 4, "lost": {"W": 1, "B": 3}, "state": "idle"},
             "3": {"table": "3", "challenges": 0, "lost": {"W": 0, "B": 0}, "state": None}}
    patch = diff_rows(before, after, {"1", "2", "3"})
    assert patch == {"1": {"challenges": 4, "lost": {"W": 1, "B": 3}},  # state unchanged
                     "2": None,  # gone
                     "3": after["3"]}  # new: whole
    assert apply_patch(before, patch) == after
    assert diff_rows(after, after, set(after)) == {}


class Reader:
    """One stream read on the test's thread until a predicate holds."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.sock = open_stream(port, headers)
        self.decoder = StreamDecoder()
        self.events: list[dict[str, Any]] = []
        self.wire = 0

    def until(self, done: Any, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not done(self):
            if time.monotonic() > deadline:
                raise AssertionError(f"stream never got there: {self.events[-3:]}")
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            assert chunk, "the server closed the stream"
            self.wire += len(chunk)
            self.events += self.decoder.feed(chunk)

    def rows(self) -> dict[str, dict[str, Any]]:
        states = list(venue_states(self.events))
        return states[-1] if states else {}

    def last_seq(self) -> int:
        return int(self.events[-1]["seq"])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Ledger, VenueFeed, Any]]:
    data = tmp_path / "hub"
    data.mkdir()
    with Ledger(data / "hub.sqlite", EVENT) as ledger:
        # Not started: each change is sent from the test's thread as it is made (the
        # writer is whichever thread sends), so every play is one message.
        feed = VenueFeed(ledger, timedelta(minutes=10))
        with live_hub_server(_app(ledger, feed, data), streams=8) as server:
            yield ledger, feed, server


def _api_rows(server: Any) -> dict[str, dict[str, Any]]:
    _status, venue = http_json(server, "GET", "/api/venue")
    return {r["table"]: {k: r[k] for k in STREAM_FIELDS} for r in venue["tables"]}


def _play(ledger: Ledger, feed: VenueFeed, table: str, seq: int, n: int) -> None:
    ledger.events.record(table, challenge(table, seq, "g1", n, n // 2, (n + 1) // 2))
    feed.changed(table, Topic.EVENTS)


def test_compressed_streams_decode_to_the_venue(
    served: tuple[Ledger, VenueFeed, Any],
) -> None:
    ledger, feed, server = served
    for t in ("1", "2", "3"):
        ledger.events.record(t, new_game(t, 1, "g1"))
        feed.changed(t, Topic.EVENTS)
    readers = {name: Reader(server.port, headers) for name, headers in (
        ("gzip", {"Accept-Encoding": "gzip, deflate"}),
        ("deflate", {"Accept-Encoding": "deflate"}),
        ("identity", {}),
    )}
    late: Reader | None = None
    try:
        for r in readers.values():
            r.until(lambda r: any(e["type"] == "snapshot" for e in r.events))
        assert readers["gzip"].decoder.headers["content-encoding"] == "gzip"
        assert readers["deflate"].decoder.headers["content-encoding"] == "deflate"
        assert "content-encoding" not in readers["identity"].decoder.headers
        seq = 1
        for n in range(1, 41):
            table = str(1 + n % 3)
            seq = 1 + (n + 2) // 3
            _play(ledger, feed, table, seq, n)
            if n == 20:  # a viewer arriving mid-way shares the compressed messages after
                late = Reader(server.port, {"Accept-Encoding": "gzip"})
                late.until(lambda r: any(e["type"] == "snapshot" for e in r.events))
        want = _api_rows(server)
        assert want["1"]["challenges"] > 10  # the play reached every table
        assert late is not None
        for r in [*readers.values(), late]:
            r.until(lambda r: r.rows() == want)
            # Patches after the opening: never a whole row again for a table it knows.
            known = {row["table"] for row in r.events[0]["tables"]}
            patches = [p for e in r.events if e["type"] == "tables"
                       for t, p in e["patch"].items() if t in known]
            assert patches and all(p is not None and "white" not in p for p in patches)
        for name in ("gzip", "deflate"):  # compressed on the wire: well under what it says
            wire, said = readers[name].wire, len(readers[name].decoder.body)
            assert wire < 0.6 * said, (name, wire, said)
        identity = readers["identity"]
        assert identity.wire > len(identity.decoder.body)  # headers and chunk sizes only
    finally:
        for each in [*readers.values(), late]:
            if each is not None:
                each.close()


def test_reconnection_with_last_event_id_gets_only_what_it_missed(
    served: tuple[Ledger, VenueFeed, Any],
) -> None:
    ledger, feed, server = served
    ledger.events.record("1", new_game("1", 1, "g1"))
    feed.changed("1", Topic.EVENTS)
    first = Reader(server.port, {"Accept-Encoding": "gzip"})
    first.until(lambda r: any(e["type"] == "snapshot" for e in r.events))
    _play(ledger, feed, "1", 2, 1)
    first.until(lambda r: r.rows().get("1", {}).get("challenges") == 1)
    seen_rows, seen_seq = first.rows(), first.last_seq()
    first.close()  # the page lost its connection
    for seq, n in ((3, 2), (4, 3)):
        _play(ledger, feed, "1", seq, n)
    again = Reader(server.port, {"Accept-Encoding": "gzip",
                                 "Last-Event-ID": f"{feed.epoch}.{seen_seq}"})
    again.until(lambda r: bool(r.events) and r.events[-1]["seq"] >= seen_seq + 2)
    assert [e["type"] for e in again.events] == ["tables", "tables"]
    assert [e["seq"] for e in again.events] == [seen_seq + 1, seen_seq + 2]
    rows = seen_rows
    for e in again.events:
        rows = apply_patch(rows, e["patch"])
    assert rows == _api_rows(server)
    again.close()
    # An id of another hub run (or one too old) gets a whole snapshot instead.
    other = Reader(server.port, {"Last-Event-ID": f"beef.{seen_seq}"})
    other.until(lambda r: bool(r.events))
    assert other.events[0]["type"] == "snapshot"
    assert other.rows() == _api_rows(server)
    other.close()


def test_a_slow_or_gone_viewer_is_closed_and_the_others_still_served(tmp_path: Path) -> None:
    from web.kit.broadcast import Member
    from web.kit.errors import StreamBacklogError

    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        feed = VenueFeed(ledger, timedelta(minutes=10))
        got: dict[str, list[bytes]] = {"ok": [], "slow": []}

        def gone(_data: bytes) -> None:
            raise ConnectionResetError("client left")

        def stalled(_data: bytes) -> None:  # as web.kit.serve's writer past its limit
            raise StreamBacklogError("the client stopped reading")

        ok = Member(Encoding.IDENTITY, got["ok"].append)
        slow = Member(Encoding.IDENTITY, got["slow"].append)
        left = Member(Encoding.IDENTITY, got["ok"].append)
        for member in (ok, slow, left):
            feed.join(member)
        left.write = gone  # its client goes after the opening
        slow.write = stalled  # and this one stops reading
        ledger.events.record("1", new_game("1", 1, "g1"))
        feed.changed("1", Topic.EVENTS)
        assert left.done.is_set() and slow.done.is_set() and not ok.done.is_set()
        assert len(got["slow"]) == 1  # its opening only: nothing piled up for it
        assert b'"patch"' in got["ok"][-1]
        assert feed.subscribers == 1
