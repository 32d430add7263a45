"""hardware/steps.py: a picture for every physical step of the build guide, the part that
step adds highlighted, each picture what a fresh render gives and sized for a phone."""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.tools import require_tool

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"
GUIDE = ROOT / "docs" / "build" / "guide.md"
STEP = re.compile(r"^### (\d+)\. (.+)$", re.M)
#: Steps done with the hands: printing and trying the gauge, the prints, the card and the
#: supply, the Pico's cable, every part put in, the stickers, the pieces in the slots.
#: Each needs its picture. The rest are ordering (1), writing the card on a computer (4)
#: and installing over ssh (6).
PHYSICAL = re.compile(r"^Print |^First boot|^Flash the Pico|into the housing|into the lid|"
                      r"^Leads:|^Close the housing|^Stickers|^Enroll|^Range check|"
                      r"^The first game")
#: The steps the test knows are not done with the hands.
NOT_PHYSICAL = {"Order the parts", "Write the SD card", "Install the arbiter"}


def _load() -> ModuleType:
    if str(HARDWARE) not in sys.path:
        sys.path.insert(0, str(HARDWARE))
    spec = importlib.util.spec_from_file_location("hardware_steps", HARDWARE / "steps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


steps = _load()


def _guide_steps() -> dict[int, tuple[str, str]]:
    text = GUIDE.read_text(encoding="utf-8")
    found = list(STEP.finditer(text))
    out = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out[int(match.group(1))] = (match.group(2), text[match.end():end])
    return out


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_every_physical_step_shows_its_picture_and_only_its_own() -> None:
    guide = _guide_steps()
    physical = {n for n, (title, _) in guide.items() if PHYSICAL.search(title)}
    # a new step is classed one way or the other, never left out by the pattern
    assert {title for n, (title, _) in guide.items() if n not in physical} == NOT_PHYSICAL
    assert len(physical) >= 14
    assert {s.number for s in steps.STEPS} == physical
    for step in steps.STEPS:
        title, body = guide[step.number]
        link = f"](img/steps/{step.png.name})"
        assert link in body, f"step {step.number} ({title}) does not show {step.png.name}"
        # its caption, one source: steps.py's, as the guide's alt text
        assert f"![Step {step.number}: {step.caption}]({link[2:]}" in body, step.number
        assert "**Take:**" in body, f"step {step.number} says what to take"
        assert step.png.is_file(), step.png


def test_pictures_are_sized_for_a_phone() -> None:
    for step in steps.STEPS:
        width, height = _png_size(step.png)
        assert 480 <= width <= 1080 and height <= width, (step.name, width, height)


def test_every_bought_part_of_the_model_is_put_in_at_some_step() -> None:
    assert steps.unplaced() == []
    # a part the rules do not know is named, not drawn silently at the first step
    assert steps.step_of("Mystery board") is None
    # the first matching rule wins: plugs go on at the lead steps, joints come with the board
    assert steps.step_of("Pico front pins + Dupont") == 11
    assert steps.step_of("ATTACKER RC522 header + Dupont") == 11
    assert steps.step_of("ATTACKER RC522 header joints") == 9
    assert steps.step_of("Pico board") == 8


def test_every_lead_the_pictures_draw_joins_two_solids_of_the_model() -> None:
    """build_steps.scad draws nothing for a lead whose end it cannot find: a renamed
    solid would drop the lead from its step's picture without a warning."""
    text = (steps.HERE / steps.SCAD).read_text(encoding="utf-8")
    leads = re.findall(r'\["([^"]+)", "([^"]+)", (\d+)\]', text.split("leads = [", 1)[1])
    assert leads
    names = {s.name for pi in steps.assembly.PIS for s in steps.assembly.layout(pi).solids}
    for a, b, step in leads:
        assert a in names and b in names, (a, b)
        assert int(step) in {s.number for s in steps.STEPS}


def test_record_names_current_sources() -> None:
    recorded = steps.manifest()
    assert sorted(recorded) == sorted(s.name for s in steps.STEPS)
    for step in steps.STEPS:
        assert recorded[step.name]["sources"] == steps.source_hash(step), (
            f"{step.name}: stale, run .venv/bin/python hardware/steps.py")


def test_the_record_catches_a_changed_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    step = steps.STEPS[0]
    before = steps.source_hash(step)
    monkeypatch.setattr(steps, "RULES", (("Pi", 9), *steps.RULES))
    assert steps.source_hash(step) != before


@pytest.mark.parametrize("step", steps.STEPS, ids=lambda s: s.name)
def test_each_picture_is_what_a_fresh_render_gives(step: Any, tmp_path: Path) -> None:
    require_tool("openscad")
    require_tool("xvfb-run")
    out = tmp_path / "fresh.png"
    assert steps.render(step, out) == []
    assert steps.file_hash(out) == steps.file_hash(step.png), (
        "stale step picture: run .venv/bin/python hardware/steps.py")
