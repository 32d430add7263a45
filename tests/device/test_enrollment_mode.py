"""Enrollment mode as the device runs it: fake readings and signals, a real tag registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.device.enrollment import EnrollmentMode
from arbiter.device.errors import DeviceError
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.errors import PieceError
from arbiter.rules.verdict import Role
from arbiter.storage.registry import TagRegistry


class Beeps:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def ready(self) -> None:
        self.calls.append("ready")

    def error(self) -> None:
        self.calls.append("error")


def _slots(attacker: SlotReading) -> dict[Role, SlotReading]:
    return {Role.ATTACKER: attacker, Role.DEFENDER: SlotReading(Role.DEFENDER, SlotState.EMPTY)}


def _tag(token: str) -> dict[Role, SlotReading]:
    return _slots(SlotReading(Role.ATTACKER, SlotState.PRESENT, token=token))


def test_enrollment_mode_needs_a_registry() -> None:
    mode = EnrollmentMode(None, Beeps())
    assert not mode.available
    with pytest.raises(DeviceError, match="RFID"):
        mode.target(None)


def test_enrollment_mode_enrolls_tags_in_its_slot(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path)
    beeps = Beeps()
    mode = EnrollmentMode(registry, beeps)
    assert mode.status() == {"active": False, "prompt": "", "progress": [0, 0], "last": ""}
    mode.begin(mode.target(None))
    assert mode.active
    first = all_physical_pieces()[0]
    assert str(first) in mode.status()["prompt"]
    mode.step(_slots(SlotReading(Role.ATTACKER, SlotState.EMPTY)))  # nothing seated
    assert beeps.calls == []
    mode.step(_tag("1F00644BB6"))
    assert beeps.calls == ["ready"]
    assert registry.lookup_physical("1F00644BB6") == first
    assert mode.status()["progress"] == [1, len(all_physical_pieces())]
    mode.step(_tag("1F00644BB6"))  # the same tag for the next piece: refused
    assert beeps.calls == ["ready", "error"]
    assert str(first) in mode.status()["last"]
    mode.end()
    assert not mode.active
    assert "already belongs to" in mode.status()["last"]  # the last message stays shown


def test_enrollment_mode_reenrolling_one_piece_ends_by_itself(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path)
    mode = EnrollmentMode(registry, Beeps())
    with pytest.raises(PieceError):
        mode.target("not a piece")
    mode.begin(mode.target("W:PVT#3"))
    mode.step(_tag("1F00644BB6"))
    assert registry.lookup_physical("1F00644BB6") == PhysicalPiece.parse("W:PVT#3")
    assert not mode.active  # done: the device judges again


def test_enrollment_mode_with_every_piece_enrolled_does_not_begin(tmp_path: Path) -> None:
    # Else `gg-arbiter enroll` beside the arbiter would wait for a tag nobody needs.
    registry = TagRegistry.in_directory(tmp_path)
    for n, piece in enumerate(all_physical_pieces()):
        registry.enroll(f"04{n:012X}", piece)
    mode = EnrollmentMode(registry, Beeps())
    mode.begin(None)
    assert not mode.active
    assert mode.status()["last"] == "Done: 42 of 42 pieces have a tag"
