"""Key and pocket geometry derived from the parts in ``parts.toml``, and its worst-case stack.

Heights (z) are in mm above the switch's base, the D2HW's datasheet reference
position for FP, OP and TTP. The switch stands on the pocket floor of a printed
switch carrier; the carrier's top presses on the underside of the slot floor;
a key stands on the top of the slot floor on its feet and teeth (one plane), so
a tooth pushes the plunger, which stands up through a window in the floor, down
to the floor's top. Three printed dimensions set that height (carrier pocket
depth, slot floor thickness, the key's tooth step), each off by up to
``printing.tolerance``; the worst case adds them all.

:func:`derive` turns a parts file into :class:`Geometry`; :func:`check` raises
:class:`GeometryError` naming every figure whose margin is below the minimum.
:func:`key_dimensions` gives the key's outline (the key chart draws it).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PARTS = HERE / "parts.toml"
#: The printed dimensions that set a tooth's (or a notch's) height over a switch.
Z_CHAIN = 3


class GeometryError(ValueError):
    """A figure of the stack has less margin than required (the text names it)."""


@dataclass(frozen=True)
class StackRow:
    """One worst-case figure: ``worst`` must stay on the right side of ``limit``.

    ``sense`` is ``"<="`` (worst at most limit) or ``">="`` (worst at least
    limit); ``margin`` is how far inside it stays, ``required`` the least allowed.
    """

    name: str
    nominal: float
    worst: float
    limit: float
    sense: str
    required: float
    unit: str
    why: str

    @property
    def margin(self) -> float:
        raw = self.limit - self.worst if self.sense == "<=" else self.worst - self.limit
        return round(raw, 4)

    @property
    def ok(self) -> bool:
        return self.margin + 1e-9 >= self.required


@dataclass(frozen=True)
class KeyDimensions:
    """A key's outline (mm): what a key chart or a hand-cut key needs."""

    switches: int
    pitch: float
    foot_w: float
    length: float
    thick: float
    height: float
    notch_h: float
    tooth_w: float
    rib_w: float
    rib_d: float

    def tooth_centre(self, i: int) -> float:
        """Centre of switch position ``i`` (0-based) from the key's switch-1 end."""
        return self.foot_w + (i + 0.5) * self.pitch


@dataclass(frozen=True)
class Geometry:
    """Everything derived: OpenSCAD parameters (name, value, comment) and the stack."""

    params: tuple[tuple[str, float, str], ...]
    stack: tuple[StackRow, ...]
    key: KeyDimensions

    def value(self, name: str) -> float:
        for n, v, _ in self.params:
            if n == name:
                return v
        raise KeyError(name)


def load_parts(path: Path = PARTS) -> dict[str, Any]:
    """The parsed parts file."""
    with path.open("rb") as f:
        return tomllib.load(f)


def _up(x: float, step: float = 0.05) -> float:
    """``x`` rounded up to ``step`` (a dimension never rounds into its margin)."""
    return round(math.ceil(round(x / step, 6)) * step, 4)


def derive(parts: dict[str, Any], switches: int = 7, pressed: int = 3) -> Geometry:
    """Derive the printed geometry and its stack from ``parts`` (see the module doc).

    ``switches`` and ``pressed`` are the key code's n and m (m switches push back).
    """
    pr, sw, mg, ky = parts["printing"], parts["switch"], parts["magnet"], parts["keys"]
    led, btn, bz, rf, base = (parts[k] for k in ("led", "button", "buzzer", "rfid", "base"))
    t, m, allow = pr["tolerance"], pr["min_margin"], pr["hole_allowance"]
    spread = Z_CHAIN * t

    op_min = sw["operating_position"] - sw["operating_position_tol"]
    op_max = sw["operating_position"] + sw["operating_position_tol"]
    ttp, fp = sw["total_travel_position_max"], sw["free_position_max"]
    body_top = sw["body_h"] + sw["body_tol"]

    # z of the slot floor's underside (= carrier pocket depth): the body's
    # tallest top plus the margin plus one print error.
    pocket_depth = _up(body_top + m + t)
    # A tooth aims at the middle of the window between OP (lowest) and TTP
    # (highest): equal margin both ways.
    tooth_z = round((op_min + ttp) / 2, 4)
    floor_t = round(tooth_z - pocket_depth, 4)
    notch_h = _up(fp + m + pr["notch_extra"] + spread - tooth_z)
    notch_z = round(tooth_z + notch_h, 4)

    foot_w = _up(mg["d"] + allow + 2 * ky["foot_wall"], 0.5)
    pitch, tooth_w = ky["pitch"], ky["tooth_w"]
    key_len = 2 * foot_w + switches * pitch
    play = pr["key_play"]
    sw_clear = 0.15
    pocket_w = round(sw["body_w"] + 2 * sw["body_tol"] + 2 * sw_clear, 4)
    pocket_l = round(sw["body_l"] + 2 * sw["body_tol"] + 2 * sw_clear, 4)
    window_w = _up(sw["plunger_d"] + allow + 2 * (sw_clear + sw["body_tol"]), 0.5)
    window_l = _up(sw["plunger_d"] + allow + 2 * sw["plunger_offset_max"], 0.5)

    hold_nominal = mg["per_key"] * mg["pull_pair"]
    push = pressed * sw["operating_force_max"]

    coil_pitch = _up(rf["coil_l"] + rf["coil_min_gap"] + 2 * m + 2 * t, 1.0)

    # The key's skirt: the notches are a channel between the front and back
    # faces, so the channel must clear a plunger off centre with the key shifted.
    skirt = parts["key_skirt"]["wall"]
    channel_half = ky["key_thick"] / 2 - skirt
    plunger_reach = sw["plunger_offset_max"] + sw["plunger_d"] / 2

    # The piece, its tag shoe and the RFID slot that takes the shoe.
    pc, wd, tag, sh = parts["piece"], parts["piece_wooden"], parts["tag"], parts["shoe"]
    shoe_l = _up(max(pc["base_l"], wd["base_l"]) + 2 * (sh["play"] + sh["wall"]), 0.5)
    shoe_w = _up(max(max(pc["base_w"], wd["base_w"]) + 2 * (sh["play"] + sh["wall"]),
                     tag["d"] + 2 * sh["wall"]), 0.5)
    shoe_h = round(sh["floor"] + sh["recess"], 4)

    # RC522 boards: antenna centres far enough apart that the flagship's sticker
    # ([sticker], on the base's centre through the gauge's jig) anywhere in one slot
    # stays read_range + margin away from the other antenna loop.
    rc, st = parts["rc522_board"], parts["sticker"]
    sticker_shift = st["jig_play"] + parts["slots"]["play"]
    rc_pitch = _up(rc["read_range"] + rc["cross_read_margin"] + st["d"] / 2
                   + sticker_shift + rc["antenna_w"] / 2 + 2 * t, 1.0)
    rc_gap = rc_pitch - rc["antenna_w"] / 2 - st["d"] / 2

    fs = parts["fasteners"]
    carrier_h = pocket_depth + 2.0
    carrier_bite = 12.0 - fs["carrier_under_head"]
    carrier_pilot = 10.0   # pilot depth up into the block over a carrier screw

    raw = (
        StackRow("tooth presses past OP", tooth_z, tooth_z + spread, op_min, "<=", m, "mm",
                 "highest tooth vs lowest operating position (OP - tol)"),
        StackRow("tooth short of end stop", tooth_z, tooth_z - spread, ttp, ">=", m, "mm",
                 "lowest tooth vs total travel position (TTP max)"),
        StackRow("notch short of OP", notch_z, notch_z - spread, op_max, ">=", m, "mm",
                 "lowest notch vs highest operating position (OP + tol)"),
        StackRow("notch clears free plunger", notch_z, notch_z - spread, fp, ">=", m, "mm",
                 "lowest notch vs free position (FP max): no contact at all"),
        StackRow("floor clears switch body", pocket_depth, pocket_depth - t, body_top, ">=",
                 m, "mm", "floor underside vs tallest body (h + tol)"),
        StackRow("tooth covers plunger across the row", tooth_w / 2 - sw["plunger_d"] / 2,
                 tooth_w / 2 - sw["plunger_d"] / 2 - play - sw_clear - sw["body_tol"] - t,
                 0.0, ">=", m, "mm", "tooth edge beyond plunger edge, key and switch shifted"),
        StackRow("tooth covers plunger front to back",
                 ky["key_thick"] / 2 - sw["plunger_d"] / 2,
                 ky["key_thick"] / 2 - sw["plunger_d"] / 2 - sw["plunger_offset_max"] - play,
                 0.0, ">=", m, "mm", "key face beyond plunger edge, plunger off centre"),
        StackRow("magnets hold key down", hold_nominal, hold_nominal * mg["gap_factor"], push,
                 ">=", pr["min_force_margin"], "N",
                 f"{mg['per_key']} magnet pairs at the worst gap vs {pressed} x OF max "
                 "(assumed to hold past OP)"),
        StackRow("RFID coils apart", coil_pitch - rf["coil_l"], coil_pitch - rf["coil_l"] - 2 * t,
                 rf["coil_min_gap"], ">=", m, "mm", "coil edge to coil edge vs cross-read gap"),
        StackRow("notch channel clears plunger", channel_half, channel_half - play - t,
                 plunger_reach, ">=", m, "mm",
                 "skirt's inner face (key shifted) vs plunger edge off centre"),
        StackRow("skirt stands beside the window", channel_half, channel_half - play - t,
                 window_l / 2, ">=", m, "mm", "skirt's inner face vs plunger window's edge"),
        StackRow("RC522 antenna far from the other sticker", rc_gap,
                 rc_gap - sticker_shift - 2 * t, rc["read_range"], ">=",
                 rc["cross_read_margin"], "mm",
                 f"antenna loop edge to the other slot's sticker edge vs {rc['read_range']:g} mm "
                 "read range (assumed)"),
        StackRow("carrier screw bites the block", carrier_bite, carrier_bite - t, 6.0, ">=", m,
                 "mm", "M3 x 12 thread in the block (counterbored carrier) vs 2 x diameter"),
        StackRow("carrier screw tip in its pilot", carrier_bite, carrier_bite + t, carrier_pilot,
                 "<=", m, "mm", "thread length vs the pilot's depth in the block"),
    )
    stack = tuple(
        StackRow(r.name, round(r.nominal, 4), round(r.worst, 4), round(r.limit, 4), r.sense,
                 r.required, r.unit, r.why)
        for r in raw
    )

    params: tuple[tuple[str, float, str], ...] = (
        ("pitch", pitch, "switch spacing along the row"),
        ("foot_w", foot_w, "solid foot at each end of a key, holds a magnet"),
        ("key_thick", ky["key_thick"], "key thickness, front to back"),
        ("key_h", ky["key_h"], "key height"),
        ("notch_h", notch_h, "a notch is cut this high above the feet (derived: FP max)"),
        ("tooth_w", tooth_w, "tooth width along the row"),
        ("tooth_dip", 0.0, "tooth below the feet: 0, teeth and feet stand in one plane"),
        ("rib_w", ky["rib_w"], "polarising rib on the key's front face, at the switch-1 end"),
        ("rib_d", ky["rib_d"], "how far the rib stands out"),
        ("clear", play, "play between key and slot, per side"),
        ("allow", allow, "added to every hole: FDM holes print undersize"),
        ("sw_len", sw["body_l"], "switch body length (front to back in the block)"),
        ("sw_wid", sw["body_w"], "switch body width (along the row)"),
        ("sw_hgt", sw["body_h"], "switch body height, without plunger and terminals"),
        ("pocket_w", pocket_w, "carrier pocket across the row (body + tol + play)"),
        ("pocket_l", pocket_l, "carrier pocket front to back"),
        ("pocket_depth", pocket_depth, "carrier pocket depth = floor underside over switch base"),
        ("carrier_floor", 2.0, "carrier plastic under the switches"),
        ("floor_t", floor_t, "slot floor: its top is where a tooth stops (derived)"),
        ("window_w", window_w, "plunger window in the floor, across the row"),
        ("window_l", window_l, "plunger window, front to back"),
        ("slot_depth", pr["slot_depth"], "slot depth above the floor"),
        ("skirt_h", ky["skirt_h"], "wiring space under the switch carriers"),
        ("wall", pr["wall"], "outer walls"),
        ("slot_gap", 24.0, "block between the two slots (status LED, NEW GAME button)"),
        ("front_margin", 14.0, "block in front of the slots (LEDs, labels)"),
        ("back_margin", 22.0, "block behind the slots (piezo behind the button)"),
        ("mag_d", _up(mg["d"] + allow), "magnet pocket diameter"),
        ("mag_t", mg["t"], "magnet thickness"),
        ("mag_depth", round(mg["t"] + 0.2, 4), "magnet pocket depth in a key's foot"),
        ("led_bore", _up(led["body_d"] + allow), "LED body bore"),
        ("led_seat_d", _up(led["flange_d"] + allow), "LED flange seat: flange flush with the top"),
        ("led_seat_t", led["flange_t"], "LED flange seat depth"),
        ("btn_hole", _up(btn["hole_d"] + allow), "NEW GAME button hole"),
        ("btn_panel", min(3.0, btn["panel_max"]), "panel the button's nut grips"),
        ("btn_cavity", _up(btn["nut_d"] + 2, 0.5), "room for the nut under the panel"),
        ("bz_d", _up(bz["d"] + allow), "piezo pocket diameter"),
        ("bz_h", _up(bz["h"] + 0.3), "piezo pocket height"),
        ("m3_clear", _up(3.0 + allow), "M3 clearance hole"),
        ("m3_pilot", 2.5, "M3 self-tapping pilot hole"),
        ("m25_pilot", 2.2, "M2.5 self-tapping pilot hole (Pi)"),
        ("m2_pilot", 1.7, "M2 self-tapping pilot hole (Pico, perfboard)"),
        ("coil_l", rf["coil_l"], "RDM6300 coil length"),
        ("coil_w", rf["coil_w"], "RDM6300 coil width"),
        ("coil_t", rf["coil_t"], "RDM6300 coil thickness"),
        ("coil_pitch", coil_pitch, "RFID: coil centre to coil centre (derived)"),
        ("rfid_slot_x", round(shoe_l + 2 * play, 4), "RFID slot along the block (tag shoe + play)"),
        ("rfid_slot_y", round(shoe_w + 2 * play, 4), "RFID slot front to back (tag shoe + play)"),
        ("skirt_wall", skirt, "key skirt: front and back faces down to the feet's plane"),
        ("carrier_pin_d", 3.0, "carrier's key pin (fits one way only)"),
        ("carrier_pin_h", 2.0, "carrier's key pin height"),
        ("carrier_cbore_d", _up(fs["m3_head_d"] + allow + 0.4), "carrier screw head counterbore"),
        ("carrier_cbore_h", round(carrier_h - fs["carrier_under_head"], 4),
         "counterbore depth: the carrier left under the head"),
        ("carrier_pilot", carrier_pilot, "carrier screw pilot depth in the block"),
        ("term_slot_w", 3.4, "terminal slot: a switch with wires soldered on passes"),
        ("csk_head_d", _up(fs["csk_m25_head_d"] + allow), "M2.5 countersunk head seat (DIN 7991)"),
        ("csk_clear", _up(fs["csk_m25_clear"] + allow), "M2.5 clearance hole"),
        ("piece_l", pc["base_l"], "piece base along its face (plastic set)"),
        ("piece_w", pc["base_w"], "piece base front to back (plastic set)"),
        ("piece_h", pc["height"], "piece height (plastic set)"),
        ("wpiece_l", wd["base_l"], "piece base along its face (wooden set)"),
        ("wpiece_w", wd["base_w"], "piece base front to back (wooden set)"),
        ("wpiece_h", wd["height"], "piece height (wooden set)"),
        ("tag_d", tag["d"], "NTAG213 sticker diameter"),
        ("shoe_l", shoe_l, "tag shoe along the piece's face"),
        ("shoe_w", shoe_w, "tag shoe front to back"),
        ("shoe_h", shoe_h, "tag shoe height"),
        ("shoe_floor", sh["floor"], "tag shoe: plastic between piece and sticker"),
        ("shoe_play", sh["play"], "tag shoe: piece base to recess, per side"),
        ("rc_l", rc["l"], "RC522 board length (header end to antenna end)"),
        ("rc_w", rc["w"], "RC522 board width"),
        ("rc_t", rc["t"], "RC522 board thickness"),
        ("rc_tol", rc["tol"], "RC522 pocket clearance per side"),
        ("rc_ant_c", rc["antenna_centre"], "RC522 antenna centre from its antenna end"),
        ("rc_ant_w", rc["antenna_w"], "RC522 antenna loop across the board"),
        ("rc_ant_l", rc["antenna_l"], "RC522 antenna loop along the board"),
        ("rc_hdr_from_end", rc["header_from_end"], "RC522 header row from its end"),
        ("rc_hdr_len", rc["header_len"], "RC522 header row length"),
        ("rc_hdr_drop", rc["header_drop"], "RC522 header spacer + Dupont housing below the board"),
        ("rc_relief", rc["solder_relief"], "RC522 header solder joints on the flat back"),
        ("rc_chip_h", rc["chip_side_h"], "RC522 tallest part on the chip side"),
        ("rc_pitch", rc_pitch, "RC522: antenna centre to antenna centre (derived)"),
        ("rfid_floor_t", rf["floor_t"], "RFID slot floor over the coil"),
        ("base_t", base["thick"], "base plate thickness"),
        ("standoff_h", base["standoff_h"], "standoffs under the boards"),
        ("pi_hole_x", base["pi_holes"][0], "Pi mounting holes, along"),
        ("pi_hole_y", base["pi_holes"][1], "Pi mounting holes, across"),
        ("pi_w", base["pi_size"][0], "Pi board length"),
        ("pi_d", base["pi_size"][1], "Pi board width"),
        ("pico_hole_x", base["pico_holes"][0], "Pico mounting holes, along"),
        ("pico_hole_y", base["pico_holes"][1], "Pico mounting holes, across"),
        ("pico_w", base["pico_size"][0], "Pico board length"),
        ("pico_d", base["pico_size"][1], "Pico board width"),
        ("perf_hole_x", base["perf_holes"][0], "perfboard (MCP23017) holes, across"),
        ("perf_hole_y", base["perf_holes"][1], "perfboard holes, along"),
        ("perf_w", base["perf_size"][0], "perfboard width"),
        ("perf_d", base["perf_size"][1], "perfboard length"),
    )
    structural = {"floor_t": (floor_t, 1.2), "pitch - pocket_w": (pitch - pocket_w, 1.2),
                  "key skirt wall": (skirt, 0.8)}
    for what, (value, least) in structural.items():
        if value < least:
            raise GeometryError(f"{what} = {value:g} mm: thinner than {least:g} mm of plastic")
    for name, piece in (("plastic", pc), ("wooden", wd)):
        if piece["base_l"] > key_len:
            raise GeometryError(f"the {name} piece ({piece['base_l']:g} mm) is longer than a key "
                                f"({key_len:g} mm): it cannot stand on one")
    key = KeyDimensions(switches, pitch, foot_w, key_len, ky["key_thick"], ky["key_h"], notch_h,
                        tooth_w, ky["rib_w"], ky["rib_d"])
    return Geometry(params, stack, key)


def check(geometry: Geometry) -> None:
    """Raise :class:`GeometryError` naming every stack figure below its required margin."""
    bad = [r for r in geometry.stack if not r.ok]
    if bad:
        raise GeometryError("; ".join(
            f"{r.name}: margin {r.margin:g} {r.unit} (worst {r.worst:g} vs limit {r.limit:g}, "
            f"at least {r.required:g} needed)" for r in bad))


def load(path: Path = PARTS, switches: int = 7, pressed: int = 3) -> Geometry:
    """Derive and check the geometry of the parts file at ``path``."""
    geometry = derive(load_parts(path), switches, pressed)
    check(geometry)
    return geometry


def key_dimensions(path: Path = PARTS) -> KeyDimensions:
    """The key outline of the shipped parts file."""
    return load(path).key


def stack_table(geometry: Geometry) -> list[str]:
    """The stack as Markdown table lines."""
    lines = ["| Figure | Nominal | Worst | Limit | Margin | Least allowed | Why |",
             "|---|--:|--:|--:|--:|--:|---|"]
    for r in geometry.stack:
        sense = "≤" if r.sense == "<=" else "≥"
        lines.append(f"| {r.name} | {r.nominal:.2f} | {r.worst:.2f} | {sense} {r.limit:.2f} | "
                     f"{r.margin:.2f} {r.unit} | {r.required:.2f} {r.unit} | {r.why} |")
    return lines
