"""Render every OpenSCAD model to a PNG preview in ``hardware/img/``.

    .venv/bin/python hardware/models.py          render all previews
    .venv/bin/python hardware/models.py --check  exit 1 if a preview is stale or warns

Uses Debian's ``openscad`` under ``xvfb-run`` (installed by ``setup.sh --dev``),
in preview mode (OpenCSG), which takes about a second a model. OpenSCAD's
output is deterministic for the same build, so ``--check`` re-renders into a
temporary directory and compares bytes; ``img/previews.json`` also records a
hash of each model's sources (the .scad file and everything it includes),
so a changed model with a forgotten re-render is named even without openscad.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script
    sys.path.insert(0, str(HERE))

import gencli  # noqa: E402

IMG = HERE / "img"
#: The builder's guide embeds some previews: those live in the docs site's tree.
DOCS_IMG = HERE.parent / "docs" / "build" / "img"
MANIFEST = IMG / "previews.json"
SIZE = "800,600"
_INCLUDE = re.compile(r"^\s*(?:include|use)\s*<([^>]+)>", re.MULTILINE)


class RenderError(RuntimeError):
    """openscad failed, or is missing."""


@dataclass(frozen=True)
class Model:
    """One preview: ``scad`` rendered with ``defines`` from ``camera`` (None: default view)."""

    name: str
    scad: str
    caption: str
    camera: str | None = None
    defines: tuple[str, ...] = ()
    docs: bool = False   # the guide embeds it: written under docs/build/img/

    @property
    def png(self) -> Path:
        return (DOCS_IMG if self.docs else IMG) / f"{self.name}.png"


MODELS: tuple[Model, ...] = (
    Model("slot_block", "slot_block.scad", "slot block (keys variants), from the front"),
    Model("slot_block_under", "slot_block.scad", "slot block from below: carrier bays, "
          "windows, magnet holes, bosses", camera="0,0,0,235,0,25,500"),
    Model("switch_carrier", "switch_carrier.scad", "switch carrier (print 2)"),
    Model("key_base", "key_base.scad", "one key base from below: teeth, notches, magnet pockets",
          camera="0,0,0,120,0,20,200"),
    Model("keys_all", "keys_all.scad", "a plate of keys (one army)"),
    Model("rfid_block", "rfid_block.scad", "RFID slot block (rdm6300, mcu)"),
    Model("rfid_block_under", "rfid_block.scad", "RFID slot block from below: coil pockets",
          camera="0,0,0,235,0,25,500"),
    Model("base_plate", "base_plate.scad", "base plate with the slot block (ghost), Pi, "
          "perfboard and Pico standoffs"),
    Model("base_plate_rfid", "base_plate.scad", "base plate of the RFID variants",
          defines=('variant="rfid"',)),
    Model("rc522_block", "rc522_block.scad", "the flagship's lid: the slot plate (slot B), "
          "LED seats, NEW GAME button, sound holes"),
    Model("rc522_block_under", "rc522_block.scad", "the lid from below: slot pads, RC522 pegs, "
          "standoffs and rails, piezo ring", camera="0,0,0,235,0,25,420"),
    Model("housing", "housing.scad", "the frame: ribbed floor, Pi and Zero 2 W standoffs, "
          "Pico H pillars, corner posts"),
    Model("gauge", "gauge.scad", "the fit gauge, printed first: sticker jigs A to D (the first "
          "that takes a base names the lid), RC522 frame with pegs", docs=True),
    Model("tag_shoe", "tag_shoe.scad", "one tag shoe: the piece's recess on top",
          camera="0,0,0,55,0,25,140"),
    Model("assembly", "assembly.scad", "the flagship assembled: Pi 4, Pico H, RC522 boards, plugs",
          docs=True),
    Model("assembly_exploded", "assembly.scad", "the flagship exploded: frame, Pi, Pico H, "
          "plugs and cable bend room (grey), RC522 boards, LEDs, button and piezo, the lid on top",
          camera="73,45,60,60,0,30,420", defines=("explode=30",), docs=True),
    Model("assembly_zero", "assembly.scad", "the flagship with a Pi Zero 2 W, exploded",
          camera="73,45,60,60,0,30,420", defines=('pi="zero2w"', "explode=30"), docs=True),
)


def sources(scad: Path) -> list[Path]:
    """``scad`` and every file it includes or uses, recursively, sorted."""
    seen: set[Path] = set()
    todo = [scad]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = path.read_text(encoding="utf-8")
        todo += [(path.parent / name).resolve() for name in _INCLUDE.findall(text)]
    return sorted(seen)


def scad_hash(scad: str, options: str) -> str:
    """SHA-256 over ``options`` and ``scad``'s sources (names and contents, its includes)."""
    h = hashlib.sha256(options.encode())
    for path in sources(HERE / scad):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def source_hash(model: Model) -> str:
    """SHA-256 over the model's sources (names and contents) and its render options."""
    return scad_hash(model.scad, f"{model.camera}|{model.defines}|{SIZE}")


def render(model: Model, out: Path) -> list[str]:
    """Render ``model`` to ``out``; returns openscad's WARNING/ERROR lines."""
    return openscad_png(model.scad, out, camera=model.camera, defines=model.defines)


def openscad_png(scad: str, out: Path, *, camera: str | None, defines: tuple[str, ...],
                 size: str = SIZE) -> list[str]:
    """Render ``scad`` (under hardware/) to the PNG ``out`` with ``defines``, from
    ``camera`` (None: the default view), ``size`` pixels; returns openscad's
    WARNING/ERROR lines. RenderError: openscad missing or failed."""
    if shutil.which("openscad") is None or shutil.which("xvfb-run") is None:
        raise RenderError("openscad and xvfb-run are needed: bash setup.sh --dev")
    cmd = ["xvfb-run", "-a", "openscad", "-o", str(out), f"--imgsize={size}",
           "--autocenter", "--viewall", "--colorscheme=Tomorrow"]
    if camera:
        cmd.append(f"--camera={camera}")
    for define in defines:
        cmd += ["-D", define]
    cmd.append(str(HERE / scad))
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0 or not out.exists():
        raise RenderError(f"openscad failed on {scad}: {result.stderr.strip()[-2000:]}")
    return [line for line in result.stderr.splitlines()
            if line.startswith(("WARNING", "ERROR", "DEPRECATED"))]


def manifest(path: Path = MANIFEST) -> dict[str, dict[str, str]]:
    """The committed record of rendered pictures at ``path`` (empty if missing)."""
    try:
        data: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check(models: Sequence[Model] = MODELS) -> list[str]:
    """Problems (empty: every preview is current and renders without warnings)."""
    problems = []
    recorded = manifest()
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            entry = recorded.get(model.name, {})
            if entry.get("sources") != source_hash(model):
                problems.append(f"{model.name}: sources changed since its preview was rendered")
            out = Path(tmp) / f"{model.name}.png"
            problems += [f"{model.name}: {w}" for w in render(model, out)]
            if not model.png.exists() or file_hash(out) != file_hash(model.png):
                problems.append(f"{model.name}: {model.png.name} differs from a fresh render")
    return problems


def write(models: Sequence[Model] = MODELS) -> list[str]:
    """Render every preview and the manifest; returns the warnings."""
    IMG.mkdir(exist_ok=True)
    warnings, data = [], {}
    for model in models:
        warnings += [f"{model.name}: {w}" for w in render(model, model.png)]
        data[model.name] = {"scad": model.scad, "sources": source_hash(model),
                            "png": file_hash(model.png)}
    MANIFEST.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return warnings


def refresh(models: Sequence[Model] = MODELS) -> list[str]:
    """Render only the previews whose sources changed (or are missing); returns warnings."""
    IMG.mkdir(exist_ok=True)
    recorded = manifest()
    warnings, data = [], {}
    for model in models:
        model.png.parent.mkdir(parents=True, exist_ok=True)
        entry = recorded.get(model.name, {})
        if entry.get("sources") != source_hash(model) or not model.png.exists():
            warnings += [f"{model.name}: {w}" for w in render(model, model.png)]
        data[model.name] = {"scad": model.scad, "sources": source_hash(model),
                            "png": file_hash(model.png)}
    MANIFEST.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return warnings


README = HERE / "README.md"
_TABLE_START = "<!-- previews: generated by hardware/models.py -->"
_TABLE_END = "<!-- end of previews -->"


def previews_table() -> str:
    """The README's table of previews, one row per model of :data:`MODELS`."""
    rows = ["| Preview | Model | What it shows |", "|---|---|---|"]
    for m in MODELS:
        picture = m.png.relative_to(HERE.parent)
        link = f"../{picture.as_posix()}" if m.docs else picture.relative_to("hardware")
        rows.append(f"| ![{m.name}]({link}) | [{m.scad}]({m.scad}) | {m.caption} |")
    return "\n".join([_TABLE_START, *rows, _TABLE_END])


def readme_with_table(text: str) -> str:
    """``text`` (hardware/README.md) with its previews table replaced by a fresh one.

    :raises ValueError: the README has no previews table markers.
    """
    start, end = text.find(_TABLE_START), text.find(_TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"{README.name}: no '{_TABLE_START}' ... '{_TABLE_END}' block")
    return text[:start] + previews_table() + text[end + len(_TABLE_END):]


def _readme_problems(write_it: bool) -> list[str]:
    """The README's previews table: rewritten (``write_it``) or named when stale."""
    readme = README.read_text(encoding="utf-8")
    fresh = readme_with_table(readme)
    if fresh == readme:
        return []
    if write_it:
        README.write_text(fresh, encoding="utf-8")
        return []
    return [f"{README.name}: the previews table is stale"]


def main(argv: Sequence[str] | None = None) -> int:
    code: int = gencli.run(
        argv, doc=__doc__ or "", tool="models.py", errors=(RenderError,),
        check_help="render to a temporary directory; exit 1 if stale or warning",
        check=lambda _: gencli.Outcome(tuple(check() + _readme_problems(False)),
                                       "all previews are up to date"),
        write=lambda _: gencli.Outcome(tuple(write() + _readme_problems(True)),
                                       f"rendered {len(MODELS)} previews"))
    return code


if __name__ == "__main__":
    sys.exit(main())
