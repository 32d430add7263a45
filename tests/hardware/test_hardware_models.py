"""Every OpenSCAD model renders with Debian's openscad without warnings, and its
committed PNG preview in hardware/img/ is what a fresh render gives."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.tools import require_tool

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hardware_models", HARDWARE / "models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


models = _load()


@pytest.mark.parametrize("model", models.MODELS, ids=lambda m: m.name)
def test_model_renders_clean_and_matches_its_preview(model: Any, tmp_path: Path) -> None:
    require_tool("openscad")
    require_tool("xvfb-run")
    out = tmp_path / "fresh.png"
    warnings = models.render(model, out)
    assert warnings == []
    assert models.file_hash(out) == models.file_hash(model.png), (
        "stale preview: run .venv/bin/python hardware/models.py")


def test_manifest_records_current_sources() -> None:
    recorded = models.manifest()
    assert sorted(recorded) == sorted(m.name for m in models.MODELS)
    for model in models.MODELS:
        assert recorded[model.name]["sources"] == models.source_hash(model), model.name


def test_sources_follow_includes_and_uses() -> None:
    names = {p.name for p in models.sources(HARDWARE / "slot_block.scad")}
    assert {"slot_block.scad", "key_base.scad", "switch_carrier.scad", "gg_lib.scad",
            "gg_params.scad"} <= names


def test_a_warning_is_reported(tmp_path: Path) -> None:
    scad = tmp_path / "bad.scad"
    scad.write_text("cube(size_not_defined);\n", encoding="utf-8")
    warnings = models.render(models.Model("bad", str(scad), "bad"), tmp_path / "bad.png")
    assert any("size_not_defined" in w for w in warnings)


def test_every_scad_file_has_a_preview_and_a_readme_embeds_them() -> None:
    rendered = {m.scad for m in models.MODELS}
    assert {p.name for p in HARDWARE.glob("*.scad")} - rendered == {
        "gg_params.scad", "gg_lib.scad", "gg_assembly.scad",
        "build_steps.scad"}  # the guide's step pictures: hardware/steps.py
    readme = (HARDWARE / "README.md").read_text(encoding="utf-8")
    prints = (HARDWARE / "print" / "README.md").read_text(encoding="utf-8")
    for model in models.MODELS:
        from_prints = os.path.relpath(model.png, HARDWARE / "print")
        assert (f"](img/{model.name}.png)" in readme
                or f"]({from_prints})" in prints), model.name


def test_slot_block_builds_the_heights_the_stack_checks(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("hardware_geometry", HARDWARE / "geometry.py")
    assert spec is not None and spec.loader is not None
    geometry = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = geometry
    spec.loader.exec_module(geometry)
    rows = {r.name: r for r in geometry.load().stack}
    echo = tmp_path / "slot_block.echo"
    subprocess.run(["openscad", "-o", str(echo), str(HARDWARE / "slot_block.scad")],
                   capture_output=True, text=True, timeout=120, check=True)
    built = dict(re.findall(r"(gg_\w+) = ([\d.]+)", echo.read_text(encoding="utf-8")))
    assert float(built["gg_tooth_z"]) == pytest.approx(rows["tooth presses past OP"].nominal)
    assert float(built["gg_floor_under_z"]) == pytest.approx(
        rows["floor clears switch body"].nominal)


def test_the_switch_carrier_fits_its_slot_one_way_only(tmp_path: Path) -> None:
    # The carrier's screws are symmetric under a half turn (so it would fit backwards,
    # reading every key mirrored); its key pin is not, and the block has one hole for it.
    scad = tmp_path / "carrier.scad"
    scad.write_text(f"GG_PART = 1;\ninclude <{HARDWARE / 'slot_block.scad'}>\n"
                    "echo(gg_len = carrier_len, gg_w = carrier_w, gg_pin = carrier_pin(),"
                    " gg_screws = carrier_screws(), gg_pin_d = carrier_pin_d);\n",
                    encoding="utf-8")
    echo = tmp_path / "carrier.echo"
    subprocess.run(["openscad", "-o", str(echo), str(scad)], capture_output=True, text=True,
                   timeout=120, check=True)
    text = echo.read_text(encoding="utf-8")
    nums = [float(x) for x in re.findall(r"-?[\d.]+", text.split("gg_len = ", 1)[1])]
    length, width, pin, screws, pin_d = nums[0], nums[1], nums[2:4], nums[4:8], nums[8]

    def turned(p: list[float]) -> tuple[float, float]:
        return length - p[0], width - p[1]

    a, b = screws[0:2], screws[2:4]
    assert turned(a) == pytest.approx(b) and turned(b) == pytest.approx(a)
    tx, ty = turned(pin)
    assert ((tx - pin[0]) ** 2 + (ty - pin[1]) ** 2) ** 0.5 > 2 * pin_d


def test_hardware_readme_previews_table_is_fresh() -> None:
    readme = models.README.read_text(encoding="utf-8")
    assert models.readme_with_table(readme) == readme, (
        "stale previews table in hardware/README.md: run .venv/bin/python hardware/models.py")
    for m in models.MODELS:  # every preview the table shows exists
        assert m.png.exists(), m.png
