"""hardware/print/: every printed part is exported, current, fits a 180 mm bed, is manifold
and slices, and the slicer's figures in manifest.json are what PrusaSlicer says.

The cheap checks (hashes of the sources and files) always run. Slicing runs every
committed STL through Debian's PrusaSlicer (a few seconds each). Re-rendering every part
with OpenSCAD takes about half an hour on two cores: it runs when GG_SLOW_RENDER=1 and
compares the bytes with the committed STL. Under CI=true a missing
openscad or prusa-slicer fails instead of skipping.
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import sys
import zipfile
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.tools import require_tool

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"


def _load() -> ModuleType:
    if str(HARDWARE) not in sys.path:
        sys.path.insert(0, str(HARDWARE))
    spec = importlib.util.spec_from_file_location("hardware_print", HARDWARE / "print.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


pr = _load()


def _need(tool: str) -> None:
    require_tool(tool)  # fails under CI=true, else skips


def _stl(path: Path, triangles: list[tuple[tuple[float, float, float], ...]]) -> Path:
    data = bytearray(80) + struct.pack("<I", len(triangles))
    for tri in triangles:
        data += struct.pack("<3f", 0, 0, 0)
        for v in tri:
            data += struct.pack("<3f", *v)
        data += b"\0\0"
    path.write_bytes(bytes(data))
    return path


def _cuboid(path: Path, x: float, y: float, z: float) -> Path:
    p = [(i * x, j * y, k * z) for i in (0, 1) for j in (0, 1) for k in (0, 1)]
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    tris: list[tuple[tuple[float, float, float], ...]] = []
    for a, b, c, d in faces:
        tris += [(p[a], p[b], p[c]), (p[a], p[c], p[d])]
    return _stl(path, tris)


# ------------------------------------------------------------------ cheap, always


def test_every_print_file_is_current() -> None:
    assert pr.check() == [], "stale print files: run .venv/bin/python hardware/print.py"


def test_a_changed_part_is_named_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    first = pr.PARTS[0]
    monkeypatch.setattr(pr, "PARTS", (replace(first, defines=(*first.defines, "gap = 9")),
                                      *pr.PARTS[1:]))
    assert f"{first.name}: sources changed since it was exported (run hardware/print.py)" \
        in pr.check()


def test_every_variant_prints_its_slot_block_and_the_totals_add_up() -> None:
    data = json.loads(pr.MANIFEST.read_text(encoding="utf-8"))
    blocks = {"rc522": f"rc522_block_{pr.DEFAULT_LETTER}", "keys-gpio": "slot_block",
              "keys-mcp23017": "slot_block", "rdm6300": "rfid_block", "mcu": "rfid_block"}
    assert set(data["variants"]) == set(blocks)
    for variant, block in blocks.items():
        v = data["variants"][variant]
        assert block in v["files"]
        assert v["print_time_s"] == sum(data["parts"][n]["print_time_s"] * c
                                        for n, c in v["files"].items())
        assert v["filament_g"] == pytest.approx(sum(data["parts"][n]["filament_g"] * c
                                                    for n, c in v["files"].items()), abs=0.05)
    # 42 pieces: the RDM6300 variants print 42 tag shoes, the keys variants 42 keys; the
    # flagship none (its stickers go on the bases).
    per_plate = {p.name: p for p in pr.PARTS}
    for variant in ("rdm6300", "mcu"):
        assert data["variants"][variant]["files"]["tag_shoes"] * 14 == 42
        assert "count = 14" in per_plate["tag_shoes"].defines
    assert not any(n.startswith("tag_shoes") for n in data["variants"]["rc522"]["files"])


def test_the_flagship_prints_in_one_night_after_a_short_gauge() -> None:
    # Issue 25: every printed part of the flagship, all copies, in at most 8 hours with
    # slicer.ini as it is; the fit gauge, printed first, at most 20 minutes.
    data = json.loads(pr.MANIFEST.read_text(encoding="utf-8"))
    rc522 = data["variants"]["rc522"]
    assert rc522["print_time_s"] <= 8 * 3600, rc522["print_time"]
    assert rc522["files"]["gauge"] == 1
    assert data["parts"]["gauge"]["print_time_s"] <= 20 * 60
    # Whichever letter the gauge names, its lid keeps the night within 8 hours.
    counted = data["parts"][f"rc522_block_{pr.DEFAULT_LETTER}"]["print_time_s"]
    for letter in pr.LETTERS:
        lid = data["parts"][f"rc522_block_{letter}"]["print_time_s"]
        assert rc522["print_time_s"] - counted + lid <= 8 * 3600, letter
    # The profile is the yardstick: its Prusa MINI QUALITY speeds, not a faster one.
    ini = pr.SLICER_INI.read_text(encoding="utf-8")
    for line in ("layer_height = 0.2", "perimeters = 3", "fill_density = 15%",
                 "perimeter_speed = 45", "external_perimeter_speed = 25", "infill_speed = 80"):
        assert line in ini.splitlines(), line


def test_the_3mf_holds_the_stl_mesh() -> None:
    for part in pr.PARTS:
        triangles = len(pr.read_stl(part.stl))
        with zipfile.ZipFile(part.threemf) as z:
            model = z.read("3D/3dmodel.model").decode()
        # Triangles collapsed to a point or a line by the 3MF's shared vertices are dropped.
        assert 0.99 * triangles <= model.count("<triangle ") <= triangles, part.name


def test_bed_pictures_are_small_pngs() -> None:
    for part in pr.PARTS:
        head = part.png.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", part.name
        width, height = struct.unpack(">II", head[16:24])
        assert width <= 800 and height <= 600, part.name


def test_the_print_files_stay_small() -> None:
    total = sum(p.stl.stat().st_size + p.threemf.stat().st_size for p in pr.PARTS)
    assert total < 40_000_000


# ------------------------------------------------------------------- PrusaSlicer


def test_the_slicer_rejects_a_part_larger_than_the_bed(tmp_path: Path) -> None:
    _need("prusa-slicer")
    with pytest.raises(pr.PrintError, match="does not fit the 180 x 180 mm bed"):
        pr.slice_part(_cuboid(tmp_path / "big.stl", 178, 20, 5))


def test_the_slicer_rejects_an_open_mesh(tmp_path: Path) -> None:
    _need("prusa-slicer")
    cube = pr.read_stl(_cuboid(tmp_path / "cube.stl", 20, 20, 20))
    with pytest.raises(pr.PrintError, match="not manifold"):
        pr.slice_part(_stl(tmp_path / "open.stl", cube[:-2]))  # one face missing


def test_the_slicer_slices_a_plain_part(tmp_path: Path) -> None:
    _need("prusa-slicer")
    figures = pr.slice_part(_cuboid(tmp_path / "cube.stl", 20, 20, 10))
    assert figures["size_mm"] == [20, 20, 10]
    # 4 cm3 of PLA (1.24 g/cm3) at 15 % infill with 3 walls: between the shell and solid.
    assert 1.0 < figures["filament_g"] < 4 * 1.24
    assert figures["print_time_s"] > 0


@pytest.mark.parametrize("part", pr.PARTS, ids=lambda p: p.name)
def test_each_print_file_fits_is_manifold_and_slices_as_recorded(part: Any) -> None:
    _need("prusa-slicer")
    recorded = pr.manifest()["parts"][part.name]
    figures = pr.slice_part(part.stl)
    assert figures["size_mm"] == recorded["size_mm"], part.name
    # PrusaSlicer slices on several threads: its estimates wander by a few seconds
    # between runs of the same file (up to 11 s in 2 h, 4 s in a minute seen); a stale
    # figure is off by far more.
    for key, least in (("print_time_s", 10), ("filament_g", 0.1), ("filament_m", 0.05)):
        assert figures[key] == pytest.approx(recorded[key], rel=0.005, abs=least), (part.name, key)
    # The 3MF is the same part to the slicer.
    info = pr.slicer_info(part.threemf)
    assert info["manifold"] == "yes"
    assert [round(float(info[f"size_{a}"]), 2) for a in "xyz"] == figures["size_mm"]


# --------------------------------------------------------------------- OpenSCAD


@pytest.mark.skipif(os.environ.get("GG_SLOW_RENDER") != "1",
                    reason="re-renders every part (about half an hour): GG_SLOW_RENDER=1")
@pytest.mark.parametrize("part", pr.PARTS, ids=lambda p: p.name)
def test_each_print_file_is_what_openscad_renders(part: Any, tmp_path: Path) -> None:
    _need("openscad")
    out = tmp_path / f"{part.name}.stl"
    pr.export_stl(part, out)
    assert pr.file_hash(out) == pr.file_hash(part.stl), f"{part.name}: stale, run print.py"


def test_the_guide_shows_the_flagship_prints_and_the_exploded_assembly() -> None:
    guide_path = HARDWARE.parent / "docs" / "build" / "guide.md"
    guide = guide_path.read_text(encoding="utf-8")
    for part in pr.PARTS:
        if part.copies.get("rc522") and part.name != "zero_spacers":
            link = os.path.relpath(part.png, guide_path.parent)
            assert f"]({link})" in guide, part.name
    assert "](img/assembly_exploded.png)" in guide
    assert (guide_path.parent / "img" / "assembly_exploded.png").is_file()
