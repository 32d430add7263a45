"""Every OpenSCAD model renders with Debian's openscad without warnings, and its
committed PNG preview in hardware/img/ is what a fresh render gives."""

from __future__ import annotations

import importlib.util
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


def test_every_scad_file_has_a_preview_and_the_readme_embeds_them() -> None:
    rendered = {m.scad for m in models.MODELS}
    assert {p.name for p in HARDWARE.glob("*.scad")} - rendered == {"gg_params.scad", "gg_lib.scad"}
    readme = (HARDWARE / "README.md").read_text(encoding="utf-8")
    for model in models.MODELS:
        assert f"](img/{model.name}.png)" in readme, model.name


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
