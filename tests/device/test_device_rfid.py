"""The device with RDM6300 readers over pyserial loop:// ports and an enrolled registry."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import serial

from arbiter.app.assembly import build_signals
from arbiter.app.config import load_config
from arbiter.device.arbiter import Arbiter
from arbiter.drivers.identify import TagIdentifier
from arbiter.drivers.readers.rdm6300 import Rdm6300Reader, encode_frame
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from arbiter.storage.registry import TagRegistry
from arbiter.tunes.defaults import load_tunes
from tests.support.clock import FakeClock
from tests.support.rig import write_config
from tests.support.waiting import wait_until

TAGS = {"W:SPY": "62E3086CED", "B:5*G": "100086F444", "B:PVT": "01000734E0"}


class TagInField:
    """Repeats a tag's frame every 50 ms, like an RDM6300 with a tag above it."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.tag: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            if self.tag:
                self.port.write(encode_frame(self.tag))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


class Rfid(NamedTuple):
    """The device on two RDM6300 readers, the tags above them, and the readers' clock."""

    arbiter: Arbiter
    fields: dict[Role, TagInField]
    clock: FakeClock

    def remove_tags(self) -> None:
        """Take both tags away and wait until the device sees the slots empty.

        The readers' clock moves on until the removal timeout has passed since
        the last frame each read (frames already sent still arrive after the
        tags are gone, so it may take more than one step).
        """
        for field in self.fields.values():
            field.tag = None
        both_empty = {"attacker": "empty", "defender": "empty"}

        def emptied() -> bool:
            self.clock.advance(REMOVAL)
            return bool(self.arbiter.status()["slots"] == both_empty)

        wait_until(emptied, what="both slots empty")


REMOVAL = 0.2


@pytest.fixture
def rfid(tmp_path: Path, mock_factory: Any) -> Iterator[Rfid]:
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    registry = TagRegistry.in_directory(config.data_dir)
    for piece, tag in TAGS.items():
        registry.enroll(tag, Piece.parse(piece))
    clock = FakeClock()  # a tag stays read however long a frame takes on a busy machine
    ports = {role: serial.serial_for_url("loop://", timeout=0.05) for role in Role}
    fields = {role: TagInField(ports[role]) for role in Role}
    readers = [
        Rdm6300Reader(
            role,
            serial_factory=lambda role=role: ports[role],  # type: ignore[misc]
            removal_timeout=REMOVAL,
            clock=clock,
        )
        for role in Role
    ]
    arbiter = Arbiter(
        GameStore(config.data_dir),
        readers,
        TagIdentifier(registry),
        build_signals(config, mock_factory),
        tunes=load_tunes(config.tunes),
        config=config,
        registry=registry,
    )
    arbiter.start()
    try:
        yield Rfid(arbiter, fields, clock)
    finally:
        for field in fields.values():
            field.close()
        arbiter.close()


def test_device_rfid_challenge_and_tag_eliminated(
    rfid: Rfid,
) -> None:
    arbiter, fields, _ = rfid
    fields[Role.ATTACKER].tag = TAGS["B:PVT"]
    fields[Role.DEFENDER].tag = TAGS["W:SPY"]
    wait_until(lambda: arbiter.status()["challenge_count"] == 1)
    assert arbiter.status()["last_verdict"] == "attacker"  # the Private takes the Spy
    challenge = arbiter.store.current.challenges[0]
    assert (challenge.attacker_tag, challenge.defender_tag) == (TAGS["B:PVT"], TAGS["W:SPY"])
    rfid.remove_tags()  # removal: no frame for removal_timeout
    # the eliminated spy's tag comes back: refused, nothing recorded
    fields[Role.ATTACKER].tag = TAGS["W:SPY"]
    fields[Role.DEFENDER].tag = TAGS["B:5*G"]
    wait_until(lambda: "already eliminated" in arbiter.status()["message"])
    assert arbiter.status()["challenge_count"] == 1


def test_device_rfid_unknown_tag_and_same_tag(rfid: Rfid) -> None:
    arbiter, fields, _ = rfid
    fields[Role.ATTACKER].tag = "1F00644BB6"  # a valid frame, never enrolled
    fields[Role.DEFENDER].tag = TAGS["B:5*G"]
    wait_until(lambda: "not known" in arbiter.status()["message"])
    fields[Role.ATTACKER].tag = TAGS["B:5*G"]  # both antennas read one tag: a misread
    wait_until(lambda: "misread" in arbiter.status()["message"])
    assert arbiter.status()["challenge_count"] == 0


def test_device_rfid_enrollment_walk(rfid: Rfid) -> None:
    arbiter, fields, _ = rfid
    status = arbiter.start_enrollment()
    assert status["active"] and status["progress"] == [3, 42]
    assert "W:5*G" in status["prompt"] and "ATTACKER" in status["prompt"].upper()
    assert arbiter.status()["enrolling"] is True
    fields[Role.ATTACKER].tag = "1F00644BB6"
    wait_until(lambda: arbiter.enrollment_status()["progress"] == [4, 42])
    assert arbiter.registry is not None
    assert arbiter.registry.lookup("1F00644BB6") == Piece.parse("W:5*G")
    assert arbiter.status()["challenge_count"] == 0  # enrolling never judges
    fields[Role.ATTACKER].tag = TAGS["B:5*G"]  # a tag enrolled to another piece
    wait_until(lambda: "B:5*G" in arbiter.enrollment_status()["last"])
    assert arbiter.enrollment_status()["progress"] == [4, 42]
    arbiter.stop_enrollment()
    assert arbiter.status()["enrolling"] is False
