"""Render the build guide's step pictures, like a kit manual, into ``docs/build/img/steps/``.

    .venv/bin/python hardware/steps.py          render every step picture
    .venv/bin/python hardware/steps.py --check  exit 1 if a picture is stale or warns

Each :data:`STEPS` entry is one physical step of ``docs/build/guide.md``:
``build_steps.scad`` draws the flagship as far as the guide has built it, the
parts that step adds in the highlight colour (the steps before the build, and the
pieces' steps after it, are scenes of their own: the gauge tried, the prints, the
Pi's card and supply, the Pico's cable, the pieces in the slots). Which step puts in each of
``assembly.py``'s solids is :data:`RULES` (first matching name prefix), passed
to OpenSCAD with ``-D``; :func:`unplaced` names any solid no rule places.
Preview renders (OpenCSG, ``models.render``'s options) at a phone's size;
``steps.json`` beside the pictures records each one's sources hash, so a
changed model with a forgotten re-render is named without openscad.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script
    sys.path.insert(0, str(HERE))

import assembly  # noqa: E402
import gencli  # noqa: E402
import models  # noqa: E402

SCAD = "build_steps.scad"
OUT = HERE.parent / "docs" / "build" / "img" / "steps"
MANIFEST = OUT / "steps.json"
#: A phone's screen width at 2x, 4:3.
SIZE = "720,540"
#: Seen from the front, a little from the left and above: every slot, board and plug in view.
CAMERA = "73,95,30,40,0,15,560"

#: (name prefix, step): the first rule whose prefix a solid's name starts with says the
#: guide step that puts it in. Headers with their Dupont plugs are the lead steps.
#: A step past the guide's last: the solids no step puts in (the holes the flagship
#: leaves empty: the Pico is held by two diagonal screws).
NEVER = 99

RULES: tuple[tuple[str, int], ...] = (
    ("Pico screw head 2", NEVER), ("Pico screw head 3", NEVER),
    ("Pico front pins", 11), ("Pico back pins", 11),  # with their Dupont plugs
    ("ATTACKER RC522 header joints", 9), ("DEFENDER RC522 header joints", 9),
    ("ATTACKER RC522 header", 11), ("DEFENDER RC522 header", 11),
    ("Pi GPIO header", 12), ("Zero GPIO header", 12),
    ("USB-C power plug", 12), ("Zero micro-USB power plug", 12),
    ("ATTACKER RC522", 9), ("DEFENDER RC522", 9),
    ("ATTACKER LED", 10), ("DEFENDER LED", 10), ("status LED", 10), ("NEW GAME", 10),
    ("piezo", 10),
    ("Pico", 8), ("Pi", 8), ("Zero", 8), ("USB-A", 8),  # the Pico cable's plug and its bend
)


class StepPictureError(RuntimeError):
    """A step picture cannot be rendered or is out of date."""


@dataclass(frozen=True)
class Step:
    """One guide step's picture: ``number`` is the step in guide.md, ``name`` the file's stem."""

    number: int
    name: str
    caption: str

    @property
    def png(self) -> Path:
        return OUT / f"{self.name}.png"

    @property
    def defines(self) -> tuple[str, ...]:
        rules = ", ".join(f'["{prefix}", {n}]' for prefix, n in RULES)
        return (f"step={self.number}", f"rules=[{rules}]")


STEPS: tuple[Step, ...] = (
    Step(2, "step02_gauge", "a piece of yours in the gauge's jig of its letter, and "
         "an RC522 board in the gauge's frame (orange)"),
    Step(3, "step03_prints", "the housing and the lid of your letter (orange), off the bed"),
    Step(5, "step05_boot", "the SD card into the Pi's slot, under the board's end, and the "
         "supply's plug (orange)"),
    Step(7, "step07_pico", "the flashed Pico on its cable (orange) to the Pi"),
    Step(8, "step08_boards", "the Pi and the Pico (orange) in the housing"),
    Step(9, "step09_readers", "the lid upside down behind the housing, its LED edge away; "
         "the two RC522 boards (orange), ATTACKER on the left, pins towards the housing"),
    Step(10, "step10_lid_parts", "the LEDs, the NEW GAME button and the piezo (orange) in the lid, "
         "seen the right way up"),
    Step(11, "step11_reader_leads", "the leads from the Pico to both RC522 boards (orange)"),
    Step(12, "step12_pi_leads", "the leads from the Pi's header to the LEDs, button and piezo "
         "(orange)"),
    Step(13, "step13_lid", "the lid (orange) on the housing"),
    Step(14, "step14_sticker",
         "a sticker (orange) going through the jig's hole onto a piece's base"),
    Step(15, "step15_enroll", "the piece the program names (orange) in the ATTACKER slot"),
    Step(16, "step16_range", "a piece's sticker (orange) held 30 mm above the ATTACKER slot's "
         "floor, the ruler standing in the slot"),
    Step(17, "step17_game", "White's Spy and Black's General (orange) in the slots, the "
         "ATTACKER LED lit"),
)


def step_of(name: str) -> int | None:
    """The guide step that puts in the solid called ``name`` (None: no rule places it)."""
    return next((n for prefix, n in RULES if name.startswith(prefix)), None)


def unplaced() -> list[str]:
    """Every bought part of the assembly (both Pis) no rule places: each needs a rule.

    Printed solids (a ``group``: the tray's and the lid's walls) are drawn as the
    housing and the lid, not as solids.
    """
    return sorted({s.name for pi in assembly.PIS for s in assembly.layout(pi).solids
                   if not s.group and step_of(s.name) is None})


def source_hash(step: Step) -> str:
    """SHA-256 over the picture's sources (the .scad files) and its render options."""
    digest: str = models.scad_hash(SCAD, f"{CAMERA}|{step.defines}|{SIZE}")
    return digest


def render(step: Step, out: Path) -> list[str]:
    """Render ``step`` to ``out`` (an OpenCSG preview, models.py's options); returns warnings."""
    try:
        warnings: list[str] = models.openscad_png(SCAD, out, camera=CAMERA,
                                                  defines=step.defines, size=SIZE)
    except models.RenderError as exc:
        raise StepPictureError(str(exc)) from None
    return warnings


def file_hash(path: Path) -> str:
    digest: str = models.file_hash(path)
    return digest


def manifest() -> dict[str, dict[str, str]]:
    """The committed record (empty if missing)."""
    recorded: dict[str, dict[str, str]] = models.manifest(MANIFEST)
    return recorded


def check(steps: Sequence[Step] = STEPS) -> list[str]:
    """Problems (empty: every picture is current and renders without warnings)."""
    problems = [f"no rule in steps.RULES places {name!r}" for name in unplaced()]
    recorded = manifest()
    with tempfile.TemporaryDirectory() as tmp:
        for step in steps:
            if recorded.get(step.name, {}).get("sources") != source_hash(step):
                problems.append(f"{step.name}: sources changed since it was rendered")
            out = Path(tmp) / f"{step.name}.png"
            problems += [f"{step.name}: {w}" for w in render(step, out)]
            if not step.png.exists() or file_hash(out) != file_hash(step.png):
                problems.append(f"{step.name}: {step.png.name} differs from a fresh render")
    return problems


def write(steps: Sequence[Step] = STEPS) -> list[str]:
    """Render every picture and the record; returns the warnings and unplaced solids."""
    OUT.mkdir(parents=True, exist_ok=True)
    problems = [f"no rule in steps.RULES places {name!r}" for name in unplaced()]
    data = {}
    for step in steps:
        problems += [f"{step.name}: {w}" for w in render(step, step.png)]
        data[step.name] = {"step": str(step.number), "sources": source_hash(step),
                           "png": file_hash(step.png)}
    MANIFEST.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    code: int = gencli.run(
        argv, doc=__doc__ or "", tool="steps.py", errors=(StepPictureError,),
        check_help="render to a temporary directory; exit 1 if stale or warning",
        check=lambda _: gencli.Outcome(tuple(check()), "all step pictures are up to date"),
        write=lambda _: gencli.Outcome(tuple(write()), f"rendered {len(STEPS)} step pictures"))
    return code


if __name__ == "__main__":
    sys.exit(main())
