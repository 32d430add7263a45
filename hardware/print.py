"""Export every printed part, bed-ready, into ``hardware/print/``, slice it, and render it.

    .venv/bin/python hardware/print.py            regenerate, export what changed, slice, render
    .venv/bin/python hardware/print.py --all      re-export every part
    .venv/bin/python hardware/print.py --check    exit 1 if a print file is stale (cheap)

The one command for everything made from the models: it first runs ``generate.py``
(``gg_params.scad``, ``gg_assembly.scad`` and the other generated files), then
re-renders the model previews whose sources changed (``models.py``: the exploded
assembly among them), then exports, slices and pictures each changed part.

Each part is an OpenSCAD model with its settings, turned for the bed (flat
face down, no supports), exported by Debian's ``openscad`` as binary STL
(``<part>.stl``) and written again as 3MF (``<part>.3mf``, the same mesh,
written here: OpenSCAD 2021.01 writes 3MF too, but with a timestamp, so it
would never compare equal). PrusaSlicer's command line (``prusa-slicer``,
``setup.sh --dev``) then checks each STL on a 180 x 180 mm bed (``--info``:
size and ``manifold = yes``) and slices it with ``print/slicer.ini``; its
estimated print time and filament go into ``print/manifest.json``, with the
totals per variant, for the parts list and the guide. A picture of each part
as it lies on the bed goes to ``docs/build/img/print/bed_<part>.png`` (the guide
embeds them), and
``print/README.md`` lists them all.

Staleness is cheap to check: the manifest records a hash of each part's
sources (every .scad it includes, its settings and the slicer profile);
``--check`` recomputes them and the STL/3MF/PNG hashes without rendering.
A slow test re-renders and compares bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the sibling modules, also when loaded by file path
    sys.path.insert(0, str(HERE))

import assembly  # noqa: E402
import generate  # noqa: E402
import geometry as geo  # noqa: E402
import models  # noqa: E402

OUT = HERE / "print"
IMG = HERE.parent / "docs" / "build" / "img" / "print"
MANIFEST = OUT / "manifest.json"
INDEX = OUT / "README.md"
SLICER_INI = OUT / "slicer.ini"
BED = (180.0, 180.0)
#: Room left round a part on the bed (brim, skirt, the slicer's margin).
BED_MARGIN = 3.0
BED_IMG = "640,480"
_TIME = re.compile(r"^; estimated printing time \(normal mode\) = (.+)$", re.MULTILINE)
_GRAMS = re.compile(r"^; total filament used \[g\] = ([\d.]+)$", re.MULTILINE)
_METRES = re.compile(r"^; filament used \[mm\] = ([\d.]+)$", re.MULTILINE)


class PrintError(RuntimeError):
    """openscad or prusa-slicer failed or is missing, or a part does not fit or slice."""


@dataclass(frozen=True)
class Part:
    """One print file: ``scad`` with ``defines``, placed on the bed by ``place``.

    ``place`` is OpenSCAD applied to the model's module call ``call``: the
    transform that lays it on the bed. ``copies`` is how many of this file
    each variant prints.
    """

    name: str
    scad: str
    call: str
    what: str
    copies: dict[str, int]
    place: str = ""
    defines: tuple[str, ...] = ()

    def wrapper(self) -> str:
        """The OpenSCAD text exported for this part (the model included, then placed)."""
        # Flags that keep a model's own preview out; set only where the model
        # does not set them itself (OpenSCAD warns about a reassignment).
        texts = [p.read_text(encoding="utf-8") for p in models.sources(HERE / self.scad)]
        lines = [flag for flag in ("GG_LIBRARY = true;", 'GG_PART = "print";')
                 if not any(re.search(rf"^{flag.split()[0]}\s*=", x, re.MULTILINE)
                            for x in texts)]
        lines += ["GG_PRINT = true;", f"include <{HERE / self.scad}>"]
        lines += [f"{d};" for d in self.defines]
        lines.append(f"{self.place} {self.call};")
        return "\n".join(lines) + "\n"

    @property
    def stl(self) -> Path:
        return OUT / f"{self.name}.stl"

    @property
    def threemf(self) -> Path:
        return OUT / f"{self.name}.3mf"

    @property
    def png(self) -> Path:
        return IMG / f"bed_{self.name}.png"


#: The variants and their names in parts.toml; "rc522" is the flagship
#: (Pico + two RC522 boards in the housing).
VARIANTS = ("rc522", "keys-gpio", "keys-mcp23017", "rdm6300", "mcu")
_KEYS = {"keys-gpio": 1, "keys-mcp23017": 1}
_RFID = {"rdm6300": 1, "mcu": 1}
FLIP_BLOCK = "translate([0, block_d, block_h]) rotate([180, 0, 0])"

_PARTS_TOML = geo.load_parts()
#: The flagship lid's slot letters (parts.toml [[slot_size]]); the totals count the default.
LETTERS = tuple(s["letter"] for s in _PARTS_TOML["slot_size"])
DEFAULT_LETTER = _PARTS_TOML["slots"]["default"]
LID_PLACE = "translate([0, asm_depth, asm_lid_top]) rotate([180, 0, 0])"

PARTS: tuple[Part, ...] = (
    Part("gauge", "gauge.scad", "gauge()",
         "fit gauge, printed first: sticker jigs A-D, RC522 frame", {"rc522": 1}),
    *(Part(f"rc522_block_{letter}", "rc522_block.scad", f'rc522_block("{letter}")',
           f"the lid: RC522 slot plate, slot {letter} (the gauge's letter)"
           + (", the one the total counts" if letter == DEFAULT_LETTER else ""),
           {"rc522": 1} if letter == DEFAULT_LETTER else {}, LID_PLACE)
      for letter in LETTERS),
    Part("housing", "housing.scad", "housing()", "frame: ribbed floor, Pi and Pico mounts, posts",
         {"rc522": 1}),
    Part("zero_spacers", "housing.scad", "zero_spacers()",
         "two 2 mm spacers (only with a Pi Zero 2 W)", {"rc522": 1}),
    Part("tag_shoes", "tag_shoe.scad", "", "14 tag shoes, plastic set (print 3 plates: 42)",
         {"rdm6300": 3, "mcu": 3}, defines=("count = 14",)),
    Part("tag_shoes_wooden", "tag_shoe.scad", "", "14 tag shoes, wooden set (instead of the above)",
         {}, defines=("count = 14", 'set = "wooden"')),
    Part("slot_block", "slot_block.scad", "slot_block()", "slot block (keys)", _KEYS, FLIP_BLOCK),
    Part("switch_carriers", "switch_carrier.scad",
         "for (i = [0, 1]) translate([0, i * (carrier_w + 4), 0]) switch_carrier()",
         "the two switch carriers", _KEYS),
    *(Part(f"keys_{army}{plate}", "keys_all.scad", "", f"keys, army {army}, plate {plate}",
           _KEYS, defines=(f'army = "{army}"', f"plate = {plate}"))
      for army in "WB" for plate in (1, 2)),
    *(Part(f"base_plate_keys_{half}", "base_plate.scad", f'half("{half}")',
           f"base plate (keys), {half} half", _KEYS) for half in ("left", "right")),
    Part("rfid_block", "rfid_block.scad", "rfid_block()", "RFID slot block (RDM6300 coils)", _RFID,
         "translate([0, rblock_d, rblock_h]) rotate([180, 0, 0])"),
    *(Part(f"base_plate_rfid_{half}", "base_plate.scad", f'half("{half}")',
           f"base plate (RFID), {half} half", _RFID, defines=('variant = "rfid"',))
      for half in ("left", "right")),
)


def source_hash(part: Part) -> str:
    """SHA-256 over the part's wrapper, its sources and the slicer profile."""
    h = hashlib.sha256(part.wrapper().replace(str(HERE), "hardware").encode())
    for path in [*models.sources(HERE / part.scad), SLICER_INI]:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise PrintError(f"{tool} is needed: bash setup.sh --dev")
    return found


def export_stl(part: Part, out: Path) -> None:
    """Render ``part`` with openscad to binary STL at ``out`` (canonical order)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{part.name}.scad"
        src.write_text(part.wrapper(), encoding="utf-8")
        cmd = ["nice", _need("openscad"), "-o", str(out), "--export-format", "binstl", str(src)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    bad = [ln for ln in result.stderr.splitlines() if ln.startswith(("WARNING", "ERROR"))]
    if result.returncode != 0 or not out.exists() or bad:
        raise PrintError(f"openscad failed on {part.name}: {(bad or [result.stderr[-1500:]])}")
    canonicalize(out)


STL_HEADER = b"Salpakan Arbiter: hardware/print.py".ljust(80, b" ")


def canonicalize(path: Path) -> None:
    """Rewrite a binary STL in one canonical order (OpenSCAD's triangle order varies run
    to run): each triangle starts at its smallest vertex (winding kept), triangles sorted."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 80)
    tris = []
    for i in range(count):
        v = struct.unpack_from("<12f", data, 84 + 50 * i)
        a, b, c = v[3:6], v[6:9], v[9:12]
        turns = [(a, b, c), (b, c, a), (c, a, b)]
        tris.append((v[0:3], min(turns)))
    tris.sort(key=lambda t: (t[1], t[0]))
    out = bytearray(STL_HEADER) + struct.pack("<I", count)
    for normal, (a, b, c) in tris:
        out += struct.pack("<12fH", *normal, *a, *b, *c, 0)
    path.write_bytes(bytes(out))


def read_stl(path: Path) -> list[tuple[tuple[float, ...], ...]]:
    """The triangles of a binary STL (each three vertices)."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 80)
    tris: list[tuple[tuple[float, ...], ...]] = []
    for i in range(count):
        v = struct.unpack_from("<12f", data, 84 + 50 * i)
        tris.append((v[3:6], v[6:9], v[9:12]))
    return tris


def write_3mf(stl: Path, out: Path, name: str) -> None:
    """Write the STL's mesh as a 3MF file (fixed timestamps: same mesh, same bytes)."""
    index: dict[tuple[float, ...], int] = {}
    verts: list[tuple[float, ...]] = []
    faces: list[list[int]] = []
    for tri in read_stl(stl):
        ids = []
        for v in tri:
            key = tuple(round(c, 5) for c in v)
            if key not in index:
                index[key] = len(verts)
                verts.append(key)
            ids.append(index[key])
        if len(set(ids)) == 3:
            faces.append(ids)
    vx = "".join(f'<vertex x="{x:g}" y="{y:g}" z="{z:g}"/>' for x, y, z in verts)
    tx = "".join(f'<triangle v1="{a}" v2="{b}" v3="{c}"/>' for a, b, c in faces)
    model = ('<?xml version="1.0" encoding="UTF-8"?>\n'
             '<model unit="millimeter" xml:lang="en-US" '
             'xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02">'
             f'<metadata name="Title">{name}</metadata><resources>'
             f'<object id="1" type="model"><mesh><vertices>{vx}</vertices>'
             f'<triangles>{tx}</triangles></mesh></object></resources>'
             '<build><item objectid="1"/></build></model>\n')
    types = ('<?xml version="1.0" encoding="UTF-8"?>\n<Types xmlns="http://schemas.openxmlformats'
             '.org/package/2006/content-types"><Default Extension="rels" ContentType="application/'
             'vnd.openxmlformats-package.relationships+xml"/><Default Extension="model" '
             'ContentType="application/vnd.ms-package.3dmanufacturing-3dmodel+xml"/></Types>\n')
    rels = ('<?xml version="1.0" encoding="UTF-8"?>\n<Relationships xmlns="http://schemas.'
            'openxmlformats.org/package/2006/relationships"><Relationship Target="/3D/3dmodel.'
            'model" Id="rel0" Type="http://schemas.microsoft.com/3dmanufacturing/2013/01/'
            '3dmodel"/></Relationships>\n')
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, text in (("[Content_Types].xml", types), ("_rels/.rels", rels),
                          ("3D/3dmodel.model", model)):
            info = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)


def slicer_info(stl: Path) -> dict[str, str]:
    """``prusa-slicer --info``'s ``key = value`` lines."""
    result = subprocess.run([_need("prusa-slicer"), "--info", str(stl)], capture_output=True,
                            text=True, timeout=300, check=False)
    info = dict(re.findall(r"^(\w+) = +(.+)$", result.stdout, re.MULTILINE))
    if result.returncode != 0 or "size_x" not in info:
        raise PrintError(f"prusa-slicer --info failed on {stl.name}: {result.stderr[-800:]}")
    return info


def seconds(text: str) -> int:
    """PrusaSlicer's ``1d 2h 3m 4s`` as seconds."""
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([dhms])", text))


def slice_part(stl: Path) -> dict[str, Any]:
    """Check ``stl`` fits the bed and is manifold, slice it; the figures for the manifest."""
    info = slicer_info(stl)
    size = [round(float(info[f"size_{a}"]), 2) for a in "xyz"]
    problems = []
    if info.get("manifold") != "yes":
        problems.append("not manifold")
    if size[0] > BED[0] - 2 * BED_MARGIN or size[1] > BED[1] - 2 * BED_MARGIN:
        problems.append(f"{size[0]:g} x {size[1]:g} mm does not fit the "
                        f"{BED[0]:g} x {BED[1]:g} mm bed with {BED_MARGIN:g} mm round it")
    if problems:
        raise PrintError(f"{stl.name}: {'; '.join(problems)}")
    bed = f"0x0,{BED[0]:g}x0,{BED[0]:g}x{BED[1]:g},0x{BED[1]:g}"
    with tempfile.TemporaryDirectory() as tmp:
        gcode = Path(tmp) / "part.gcode"
        cmd = ["nice", _need("prusa-slicer"), "--load", str(SLICER_INI), "--export-gcode",
               "--bed-shape", bed, "--center", f"{BED[0] / 2:g},{BED[1] / 2:g}",
               "-o", str(gcode), str(stl)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        text = gcode.read_text(encoding="utf-8") if gcode.exists() else ""
    t, g, mm = _TIME.search(text), _GRAMS.search(text), _METRES.search(text)
    if result.returncode != 0 or not (t and g and mm):
        raise PrintError(f"prusa-slicer did not slice {stl.name}: {result.stderr[-800:]}")
    return {"size_mm": size, "manifold": True, "print_time": t.group(1).strip(),
            "print_time_s": seconds(t.group(1)), "filament_g": float(g.group(1)),
            "filament_m": round(float(mm.group(1)) / 1000, 2)}


def render_bed(part: Part, out: Path) -> None:
    """A picture of the exported part as it lies on the bed (180 mm square outline)."""
    info = slicer_info(part.stl)
    cx = (float(info["min_x"]) + float(info["max_x"])) / 2
    cy = (float(info["min_y"]) + float(info["max_y"])) / 2
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bed.scad"
        src.write_text(
            f'color("lightgray") translate([0, 0, -1]) cube([{BED[0]:g}, {BED[1]:g}, 1]);\n'
            f'color("orange") translate([{BED[0] / 2 - cx:g}, {BED[1] / 2 - cy:g}, 0]) '
            f'import("{part.stl}");\n', encoding="utf-8")
        cmd = ["nice", "xvfb-run", "-a", _need("openscad"), "-o", str(out),
               f"--imgsize={BED_IMG}", "--camera=90,90,0,55,0,25,520",
               "--colorscheme=Tomorrow", str(src)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0 or not out.exists():
        raise PrintError(f"openscad could not picture {part.name}: {result.stderr[-800:]}")


def manifest() -> dict[str, Any]:
    """The committed manifest (empty if missing)."""
    try:
        data: dict[str, Any] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"parts": {}, "variants": {}}
    return data


def totals(parts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per variant: its files and copies, and the slicer's print time and filament summed."""
    out = {}
    for variant in VARIANTS:
        files = {p.name: p.copies[variant] for p in PARTS if p.copies.get(variant)}
        secs = sum(parts[n]["print_time_s"] * c for n, c in files.items())
        grams = sum(parts[n]["filament_g"] * c for n, c in files.items())
        out[variant] = {"files": files, "print_time_s": secs,
                        "print_time": f"{secs // 3600}h {secs % 3600 // 60}m",
                        "filament_g": round(grams, 1)}
    return out


def index_md(data: dict[str, Any]) -> str:
    """``print/README.md``: every print file with its picture, time and filament."""
    lines = ["<!-- Generated by hardware/print.py; do not edit. -->", "# Print files", "",
             "*Generated by `hardware/print.py` from the .scad models; do not edit.*", "",
             "Every printed part, turned for the bed (flat face down, no supports), each",
             f"fitting a {BED[0]:g} x {BED[1]:g} mm bed. Print times and filament are",
             "PrusaSlicer's estimates with [slicer.ini](slicer.ini) (PLA, 0.2 mm layers,",
             "15 % infill, 0.4 mm nozzle). `.stl` and `.3mf` hold the same mesh.", "",
             "## Per variant", "",
             "| Variant | Files (copies) | Print time | Filament |", "|---|---|--:|--:|"]
    order = [p.name for p in PARTS]
    for variant in VARIANTS:
        v = data["variants"][variant]
        files = ", ".join(f"`{n}`" + (f" x{v['files'][n]}" if v["files"][n] > 1 else "")
                          for n in order if n in v["files"])
        lines.append(f"| `{variant}` | {files} | {v['print_time']} | {v['filament_g']:g} g |")
    others = ", ".join(f"`rc522_block_{x}`" for x in LETTERS if x != DEFAULT_LETTER)
    lines += ["", "`rc522`: print `gauge` first; it picks the lid, `rc522_block_<letter>` "
              f"(the total counts `rc522_block_{DEFAULT_LETTER}`; {others} take as long within "
              "minutes: see the table). `zero_spacers` only with a Pi Zero 2 W (the rc522 total "
              "counts them). `tag_shoes_wooden` instead of `tag_shoes` for a wooden set.", "",
              "## Parts", "", "| File | Part | Size (mm) | Time | Filament | On the bed |",
              "|---|---|---|--:|--:|---|"]
    for part in PARTS:
        p = data["parts"][part.name]
        size = " x ".join(f"{s:g}" for s in p["size_mm"])
        lines.append(f"| [{part.name}.stl]({part.name}.stl), [.3mf]({part.name}.3mf) | "
                     f"{part.what} | {size} | {p['print_time']} | {p['filament_g']:g} g | "
                     f"![{part.name}](../../docs/build/img/print/bed_{part.name}.png) |")
    lines += ["", *fitting_md(), "", "## The models", "",
              "Previews of every model (`hardware/models.py`), the exploded assembly among them.",
              "", "| Model | Preview |", "|---|---|"]
    for model in models.MODELS:
        lines.append(f"| [{model.scad}](../{model.scad}): {model.caption} | "
                     f"![{model.name}]({os.path.relpath(model.png, OUT)}) |")
    return "\n".join(lines) + "\n"


def fitting_md() -> list[str]:
    """How the printed parts meet the pieces, the boards and the screws (from parts.toml)."""
    parts = geo.load_parts()
    g = geo.load()
    f = assembly.layout("pi4").figures
    pc, wd, tag, rc = parts["piece"], parts["piece_wooden"], parts["tag"], parts["rc522_board"]
    row = {r.name: r for r in g.stack}["RC522 antenna far from the other sticker"]
    st, sl, en = parts["sticker"], parts["slots"], parts["enclosure"]
    sizes = assembly.slot_sizes(parts)
    letters = "; ".join(f"{s['letter']}: {s['base_l']:g} x {s['base_w']:g} mm ({s['sets']})"
                        for s in parts["slot_size"])
    lines = [
        "## Fitting it together", "",
        f"**Pieces (flagship).** No shoes: a {st['d']:g} mm NTAG213 sticker goes straight on the "
        "centre of each piece's base, and the piece stands in a slot "
        f"{sl['depth']:g} mm deep sized for its base ({sl['play']:g} mm play each side), so the "
        "sticker lands over the antenna whichever way round the piece goes in. The lid comes in "
        f"{len(sizes)} slot sizes, one file each, for bases of at most {letters} (assumptions "
        "covering common sets). The fit gauge, printed first, picks the letter: its "
        "sticker jigs are as large inside as the slots; the first (smallest) that takes a base "
        "flat names the lid to print, and that jig's hole then centres each sticker on a base. "
        "Its RC522 frame is the lid's pocket with pegs at the board's holes: a board that drops "
        "inside with its holes over the pegs fits.", "",
        f"**Pieces (other RFID variants, keys).** A {pc['set']}: base {pc['base_l']:g} x "
        f"{pc['base_w']:g} mm, {pc['height']:g} mm tall (an assumption: measure yours and set "
        f"`[piece]` in parts.toml). A {wd['set']} ({wd['base_l']:g} x {wd['base_w']:g} mm, "
        f"{wd['height']:g} mm) takes `tag_shoes_wooden`. RDM6300 variants: glue each piece into a "
        f"tag shoe ({g.value('shoe_l'):g} x {g.value('shoe_w'):g} x {g.value('shoe_h'):g} mm) and "
        f"stick a {tag['d']:g} mm tag in the round recess under it. Keys variants: glue the same "
        f"piece on its key's top face ({g.key.length:g} x {g.key.thick:g} mm; the piece stands "
        "above the block, so its base may overhang the key). The key's skirt hides its notches: "
        "from the side a key shows a plain bar.", "",
        f"**Two readers, one sticker each.** Read range assumed {rc['read_range']:g} mm (an "
        "assumption on the safe side: common RC522 boards read a 25 mm NTAG213 sticker at "
        f"20-40 mm, the flagship's {st['d']:g} mm one nearer; check yours with "
        "`gg-arbiter selftest --range`, which also names any cross-read and the gain to use). "
        f"The antenna centres are {g.value('rc_pitch'):g} mm apart: the flagship's "
        f"{st['d']:g} mm sticker at the worst place in one slot "
        f"({st['jig_play'] + sl['play']:g} mm off centre: the jig's play and the slot's) stays "
        f"{row.worst:g} mm from the other antenna loop's edge, {row.margin:g} mm more than the "
        f"read range (at least {rc['cross_read_margin']:g} mm required; stack row in "
        "[keycodes.md](../../docs/build/keycodes.md)). "
        "The Pi also refuses one tag seen in both slots.", "",
        "**Boards (flagship).** The housing is an open frame: a ribbed floor with four corner "
        "posts and the lid, a plate with the slots, screwed on top; no walls, so every plug and "
        "lead bends in the open. A Raspberry Pi 3B+/4/5 lies parts up with its port side "
        "(USB-C power) at the back edge, the USB/Ethernet end to the left; the Pico cable's "
        "USB-A plug goes into the USB 2.0 pair nearer the middle "
        f"({en['usba_plug'][2]:g} mm plug plus {en['cable_bend']:g} mm for the cable to turn "
        "kept clear). A Zero 2 W lies on the same back standoffs and the two short front ones "
        "with a printed 2 mm spacer each. The Pico is a Pico H or WH (header soldered at the "
        "factory, pins down): it stands at the front right on two pillars between its header "
        "rows, clear of the pins, the Dupont housings on them and their bend room; an M2 x 6 "
        f"pan head in each hole clears the corner pins' solder joints ({en['m2_head_d']:g} mm "
        "head; the pins sit 3.25 mm from the holes). Each RC522 board (bought with its header "
        "soldered) hangs under its slot, flat back up, antenna end to the front: its two "
        "antenna-end holes over printed pegs, two M2.5 x 6 pan heads through the header-end "
        f"holes into standoffs; its back stays {rc['standoff_h']:g} mm under the slot's pad, "
        "clear of the header's joints; side rails locate it (pocket "
        f"{rc['w_max'] + 2 * rc['tol']:g} mm across: a {rc['w_max']:g} mm board with "
        f"{rc['tol']:g} mm each side). The LEDs come pre-wired with Dupont ends; each Dupont "
        f"housing ({en['dupont_w']:g} mm square) passes the {g.value('led_bore'):g} mm LED bore "
        f"on its own. Everything stands {f['width']:g} x {f['depth']:g} x {f['lid_top']:g} mm. "
        "`hardware/assembly.py` checks that no two of these (plugs and cables with their bend "
        "room, headers with Dupont housings, pin tails and solder joints under and over every "
        "board, standoffs, pillars, pegs included) meet and that every outside plug leaves.",
        "", "**Screws** (holes drawn for exactly these):", "",
        "| Where | Screw | Standard | " + " | ".join(f"`{v}`" for v in VARIANTS) + " |",
        "|---|---|---|" + "--:|" * len(VARIANTS)]
    for fs in parts["fastener"]:
        counts = " | ".join(str(fs["qty"].get(v, "")) for v in VARIANTS)
        lines.append(f"| {fs['where']} | {fs['screw']} | {fs['standard']} | {counts} |")
    return lines


def build(parts: Sequence[Part], force: bool = False) -> list[str]:
    """Export, slice and picture each part whose sources changed (every part if ``force``)."""
    OUT.mkdir(exist_ok=True)
    IMG.mkdir(parents=True, exist_ok=True)
    data = manifest()
    done = []
    for part in parts:
        entry = data["parts"].get(part.name, {})
        digest = source_hash(part)
        if not force and entry.get("sources") == digest and part.stl.exists():
            continue
        print(f"exporting {part.name} ...", flush=True)
        export_stl(part, part.stl)
        write_3mf(part.stl, part.threemf, part.name)
        figures = slice_part(part.stl)
        render_bed(part, part.png)
        data["parts"][part.name] = {"scad": part.scad, "what": part.what, "sources": digest,
                                    "stl": file_hash(part.stl), "3mf": file_hash(part.threemf),
                                    "png": file_hash(part.png), **figures}
        done.append(part.name)
        _save(data)
    _save(data)
    return done


def _save(data: dict[str, Any]) -> None:
    names = [p.name for p in PARTS]
    data["parts"] = {n: data["parts"][n] for n in names if n in data["parts"]}
    if set(data["parts"]) == set(names):
        data["variants"] = totals(data["parts"])
        INDEX.write_text(index_md(data), encoding="utf-8")
    data["bed_mm"] = list(BED)
    MANIFEST.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def check() -> list[str]:
    """Stale or missing print files, without rendering (empty: all current)."""
    data = manifest()
    problems = []
    for part in PARTS:
        entry = data["parts"].get(part.name)
        if entry is None:
            problems.append(f"{part.name}: not exported (run hardware/print.py)")
            continue
        if entry["sources"] != source_hash(part):
            problems.append(f"{part.name}: sources changed since it was exported "
                            "(run hardware/print.py)")
        for key, path in (("stl", part.stl), ("3mf", part.threemf), ("png", part.png)):
            if not path.exists() or file_hash(path) != entry[key]:
                problems.append(f"{part.name}: {path.name} is not the file the manifest records")
    extra = {p.name for p in OUT.glob("*.stl")} - {p.stl.name for p in PARTS}
    problems += [f"{name}: no part makes this file (delete it)" for name in sorted(extra)]
    if data["parts"] and set(data["parts"]) == {p.name for p in PARTS}:
        if data.get("variants") != totals(data["parts"]):
            problems.append("manifest.json: per-variant totals are stale")
        if not INDEX.exists() or INDEX.read_text(encoding="utf-8") != index_md(data):
            problems.append("print/README.md is stale")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a print file is stale")
    parser.add_argument("--all", action="store_true", help="re-export every part")
    parser.add_argument("parts", nargs="*", help="only these parts (names as in print/)")
    args = parser.parse_args(argv)
    chosen = [p for p in PARTS if not args.parts or p.name in args.parts]
    try:
        if args.check:
            problems = check()
            problems += [f"{m.name}: preview sources changed (run hardware/print.py)"
                         for m in models.MODELS
                         if models.manifest().get(m.name, {}).get("sources")
                         != models.source_hash(m)]
            for line in problems:
                print(line)
            return 1 if problems else 0
        if generate.main([]) != 0:
            return 2
        warnings = models.refresh()
        if warnings:
            print("\n".join(warnings), file=sys.stderr)
            return 2
        done = build(chosen, force=args.all or bool(args.parts))
    except (PrintError, models.RenderError) as exc:
        print(f"print.py: {exc}", file=sys.stderr)
        return 2
    print(f"exported {', '.join(done)}" if done else "all print files are up to date")
    return 0


if __name__ == "__main__":
    os.chdir(HERE)
    sys.exit(main())
