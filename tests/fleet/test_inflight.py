"""The link's window of sent messages: the cursor moves only over an acknowledged head.

The rule (docs/develop/fleet.md, the journal as outbox): the durable cursor says every
event before it reached the broker, so it may pass a message only once that message and
every one sent before it are acknowledged; a refusal holds back the whole window.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arbiter import wire
from arbiter.fleet.inflight import InFlight
from arbiter.fleet.outbox import Cursor, Pending
from arbiter.fleet.payloads import OutboxItem
from arbiter.fleet.resend_service import ResendService


@dataclass
class Sent:
    """What paho returns for a publish: the message id is all the window reads."""

    mid: int


def _pending(seq: int) -> Pending:
    item = OutboxItem(game=1, index=seq, kind=wire.EventType.CHALLENGE,
                      body=wire.challenge(seq, "W", "attacker", {"W": 0, "B": 1}, None))
    return Pending(item, seq, Cursor(game=1, index=seq + 1, seq=seq))


def _window(count: int) -> InFlight:
    inflight = InFlight()
    for seq in range(1, count + 1):
        inflight.add(Sent(mid=100 + seq), _pending(seq))  # type: ignore[arg-type]
    return inflight


def test_the_cursor_passes_only_the_acknowledged_head(tmp_path: Path) -> None:
    resend = ResendService(tmp_path, "7", 10)
    inflight = _window(3)
    inflight.answered(102, None)  # the second, before the first: nothing can move yet
    assert inflight.advance(Cursor(), resend) == Cursor()
    assert len(inflight) == 3
    inflight.answered(101, None)
    assert inflight.advance(Cursor(), resend) == Cursor(game=1, index=3, seq=2)
    assert len(inflight) == 1
    inflight.answered(103, None)
    assert inflight.advance(Cursor(game=1, index=3, seq=2), resend).seq == 3
    assert not inflight


def test_an_acknowledgement_of_another_message_is_forgotten(tmp_path: Path) -> None:
    resend = ResendService(tmp_path, "7", 10)
    inflight = _window(1)
    inflight.answered(5, None)  # a status or an online message: not in the window
    inflight.advance(Cursor(), resend)
    # Had the id been kept, a later message reusing it would pass unacknowledged.
    inflight.add(Sent(mid=5), _pending(2))  # type: ignore[arg-type]
    inflight.answered(101, None)
    assert inflight.advance(Cursor(), resend).seq == 1


def test_a_refusal_names_the_oldest_refused_message_once(tmp_path: Path) -> None:
    inflight = _window(3)
    inflight.answered(103, "Not authorized")
    inflight.answered(102, "Not authorized")
    refusals = inflight.take_refusals()
    assert refusals == {102: "Not authorized", 103: "Not authorized"}
    first = inflight.first_refused(refusals)
    assert first is not None and first[0] == 102 and first[1].seq == 2
    assert inflight.take_refusals() == {}  # taken once


def test_dropping_the_window_forgets_its_acknowledgements(tmp_path: Path) -> None:
    resend = ResendService(tmp_path, "7", 10)
    inflight = _window(2)
    inflight.answered(102, None)
    inflight.drop()
    assert not inflight
    # Sent again from the cursor with new ids; the old id's acknowledgement must not
    # let the new first message pass.
    inflight.add(Sent(mid=102), _pending(1))  # type: ignore[arg-type]
    assert inflight.advance(Cursor(), resend) == Cursor()
