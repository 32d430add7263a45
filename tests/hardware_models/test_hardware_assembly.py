"""hardware/assembly.py: the flagship's housing holds every board, plug and header without
two solids meeting, and every outside port stays reachable.

The what-if cases rebuild the defects the assembly must not have (a plug meeting a board
5 mm past the Pi's USB end, a power plug against a wall without a window, a plug that
ends inside the housing) and expect the check to name them.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.tools import require_tool

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"


def _load(name: str) -> ModuleType:
    if str(HARDWARE) not in sys.path:
        sys.path.insert(0, str(HARDWARE))
    spec = importlib.util.spec_from_file_location(name, HARDWARE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


asm = _load("assembly")
geo = _load("geometry")


@pytest.mark.parametrize("pi", asm.PIS)
def test_the_flagship_fits_with_each_pi(pi: str) -> None:
    assert asm.problems(asm.layout(pi)) == []


def test_boxes_that_only_touch_do_not_collide() -> None:
    a = asm.box(0, 0, 0, 10, 10, 10)
    assert a.overlap(asm.box(10, 0, 0, 20, 10, 10)) is None
    assert a.overlap(asm.box(9, 9, 9, 20, 20, 20)) == asm.box(9, 9, 9, 10, 10, 10)


def test_a_board_5_mm_past_the_pi_usb_end_meets_the_plug() -> None:
    layout = asm.layout("pi4")
    jacks = layout.named("Pi USB/Ethernet jacks").box
    pico = layout.named("Pico board").box
    # The old base plate's defect: the next board 5 mm past the USB/Ethernet end.
    # Move the Pico with its headers and standoffs there, the tray's walls aside.
    dx, dy = jacks.lo[0] - 5 - pico.hi[0], jacks.lo[1] + 10 - pico.lo[1]
    moved = layout
    for solid in layout.solids:
        if solid.name.startswith("Pico"):
            moved = moved.with_solid(replace(solid, box=solid.box.moved(dx, dy)))
    found = [p for p in asm.problems(moved) if "wall" not in p]
    assert any(("USB-A plug (Pico cable) in the Pi" in p and "Pico" in p.split(" intersects ")[1])
               or (p.startswith("Pico") and "USB-A plug" in p) for p in found), found


def test_a_power_plug_against_a_wall_without_its_window_is_blocked() -> None:
    layout = asm.layout("pi4")
    wall = replace(layout.named("tray back wall"), openings=())
    found = asm.problems(layout.with_solid(wall))
    assert any("USB-C power plug" in p and "tray back wall" in p for p in found), found


def test_a_plug_that_ends_inside_the_housing_is_not_reachable() -> None:
    layout = asm.layout("pi4")
    plug = layout.named("USB-C power plug")
    short = replace(plug, box=asm.box(plug.box.lo[0], plug.box.lo[1] - 40, plug.box.lo[2],
                                      plug.box.hi[0], plug.box.lo[1] - 30, plug.box.hi[2]))
    found = asm.problems(layout.with_solid(short))
    assert "USB-C power plug: the plug does not reach out of the housing" in found


def test_the_layout_places_what_the_build_needs() -> None:
    for pi in asm.PIS:
        names = {s.name for s in asm.layout(pi).solids}
        assert {"Pico board", "Pico micro-USB plug", "ATTACKER RC522 board",
                "DEFENDER RC522 board", "ATTACKER RC522 header + Dupont",
                "DEFENDER RC522 header + Dupont", "ATTACKER LED", "DEFENDER LED", "status LED",
                "NEW GAME button body and nut", "piezo", "tray back wall", "block slab"} <= names
        assert any(s.kind is asm.Kind.PLUG_OUT and "power" in s.name
                   for s in asm.layout(pi).solids)


def test_antennas_sit_under_the_slots_at_the_derived_pitch() -> None:
    g = geo.load()
    layout = asm.layout("pi4")
    f = layout.figures
    assert f["slot_xc"][1] - f["slot_xc"][0] == pytest.approx(g.value("rc_pitch"))
    parts = geo.load_parts()
    rc = parts["rc522_board"]
    for s, side in enumerate(("ATTACKER", "DEFENDER")):
        board = layout.named(f"{side} RC522 board").box
        # The antenna loop's centre (rc.antenna_centre from the board's front end) is
        # the slot's centre, where the shoe centres its sticker.
        assert board.lo[1] + rc["antenna_centre"] == pytest.approx(f["slot_yc"])
        assert (board.lo[0] + board.hi[0]) / 2 == pytest.approx(f["slot_xc"][s])
    # A sticker at the far edge of one slot stays read range + margin from the other loop.
    tag = parts["tag"]
    shift = (f["slot_x"] - g.value("shoe_l")) / 2 + tag["placement_tol"]  # shoe play + hand
    edge = f["slot_xc"][0] + shift + tag["d"] / 2
    loop = f["slot_xc"][1] - rc["antenna_w"] / 2
    assert loop - edge >= rc["read_range"] + rc["cross_read_margin"]


def test_the_generated_scad_carries_the_checked_layout() -> None:
    text = (HARDWARE / "gg_assembly.scad").read_text(encoding="utf-8")
    assert text == asm.scad()
    f = asm.layout("pi4").figures
    assert re.search(rf"^asm_width = {f['width']:g};$", text, re.MULTILINE)
    for pi in asm.PIS:
        for solid in asm.layout(pi).solids:
            if not solid.group:
                assert f'["{solid.name}",' in text


# ------------------------------------------------------ OpenSCAD: the printed parts


def _csg(tmp_path: Path, pi: str, part: str, extra: str = "") -> str:
    """openscad's report on the printed ``part`` intersected with every placed solid."""
    require_tool("openscad")  # fails under CI=true, else skips
    scad = tmp_path / "check.scad"
    # Each solid shrunk by 0.01 mm: a board resting on its standoffs touches, not collides.
    scad.write_text(f'GG_CHECK = true;\ninclude <{HARDWARE / "assembly.scad"}>\npi = "{pi}";\n'
                    f"intersection() {{\n    {part};\n"
                    f"    union() {{ for (s = solids) asm_solid(s, 0.01); {extra} }}\n}}\n",
                    encoding="utf-8")
    result = subprocess.run(["nice", "openscad", "-o", str(tmp_path / "common.stl"), str(scad)],
                            capture_output=True, text=True, timeout=600, check=False)
    return result.stderr


PRINTED = {"housing": "housing()", "rc522_block": "translate([0, 0, asm_rim]) rc522_block()"}


@pytest.mark.parametrize("pi", asm.PIS)
@pytest.mark.parametrize("part", sorted(PRINTED))
def test_the_printed_part_meets_no_placed_solid(tmp_path: Path, part: str, pi: str) -> None:
    # The same check as problems(), on the real printed geometry: what OpenSCAD makes of
    # housing.scad and rc522_block.scad, intersected with every board, plug and header.
    assert "Current top level object is empty." in _csg(tmp_path, pi, PRINTED[part])


def test_the_openscad_check_sees_a_plug_in_a_wall(tmp_path: Path) -> None:
    plug = asm.layout("pi4").named("USB-C power plug").box
    # The power plug 25 mm to the side of its window: it goes through the back wall.
    lo = [round(v, 3) for v in plug.moved(dx=-25).lo]
    size = [round(h - low, 3) for low, h in zip(plug.lo, plug.hi, strict=True)]
    report = _csg(tmp_path, "pi4", PRINTED["housing"], f"translate({lo}) cube({size});")
    assert "Current top level object is empty." not in report
    assert (tmp_path / "common.stl").exists()
