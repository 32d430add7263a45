"""hardware/parts.toml -> geometry.py: the derived key geometry and its worst-case stack.

Expected figures are worked out here from the datasheet numbers in the parts
file (the stack's recipe: a tooth aims half-way between the lowest operating
position and the end stop; three printed heights each off by the tolerance).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
PARTS = HARDWARE / "parts.toml"
DOCS = HARDWARE.parent / "docs" / "build"
VARIANTS = ("rc522", "keys-gpio", "keys-mcp23017", "rdm6300", "mcu")


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    path = HARDWARE / "generate.py"
    spec = importlib.util.spec_from_file_location("hardware_generate_parts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def parts() -> dict[str, Any]:
    with PARTS.open("rb") as f:
        return tomllib.load(f)


def _rows(generate: ModuleType, parts: dict[str, Any]) -> dict[str, Any]:
    return {r.name: r for r in generate.geo.derive(parts).stack}


def _edited(tmp_path: Path, old: str, new: str) -> Path:
    text = PARTS.read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / "parts.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _generate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HARDWARE / "generate.py"), *args],
                          capture_output=True, text=True, check=False)


def test_tooth_lands_between_operating_position_and_end_stop(
        generate: ModuleType, parts: dict[str, Any]) -> None:
    sw, tol = parts["switch"], parts["printing"]["tolerance"]
    op_min = sw["operating_position"] - sw["operating_position_tol"]
    ttp = sw["total_travel_position_max"]
    rows = _rows(generate, parts)
    press, stop = rows["tooth presses past OP"], rows["tooth short of end stop"]
    assert press.nominal == pytest.approx((op_min + ttp) / 2)
    assert press.worst == pytest.approx(press.nominal + 3 * tol)
    assert press.limit == pytest.approx(op_min)
    assert stop.worst == pytest.approx(press.nominal - 3 * tol)
    assert stop.limit == pytest.approx(ttp)
    assert press.margin == pytest.approx(op_min - press.nominal - 3 * tol)
    assert press.ok and stop.ok


def test_notch_and_floor_clear_the_switch(generate: ModuleType, parts: dict[str, Any]) -> None:
    sw, pr = parts["switch"], parts["printing"]
    rows = _rows(generate, parts)
    clear = rows["notch clears free plunger"]
    assert clear.limit == pytest.approx(sw["free_position_max"])
    assert clear.margin >= pr["min_margin"] + pr["notch_extra"] - 1e-9
    assert rows["notch short of OP"].limit == pytest.approx(
        sw["operating_position"] + sw["operating_position_tol"])
    floor = rows["floor clears switch body"]
    assert floor.limit == pytest.approx(sw["body_h"] + sw["body_tol"])
    assert floor.worst == pytest.approx(floor.nominal - pr["tolerance"])
    assert all(r.ok for r in rows.values())


def test_magnets_outpull_the_pressed_switches(generate: ModuleType, parts: dict[str, Any]) -> None:
    mg, sw = parts["magnet"], parts["switch"]
    row = _rows(generate, parts)["magnets hold key down"]
    assert row.limit == pytest.approx(3 * sw["operating_force_max"])
    assert row.worst == pytest.approx(mg["per_key"] * mg["pull_pair"] * mg["gap_factor"])
    assert row.unit == "N" and row.ok


def test_geometry_follows_the_datasheet(generate: ModuleType, parts: dict[str, Any]) -> None:
    base = generate.geo.derive(parts)
    parts2 = {**parts, "switch": {**parts["switch"], "free_position_max": 12.0}}
    higher = generate.geo.derive(parts2)
    # A plunger standing 0.8 mm taller needs a notch 0.8 mm deeper; nothing else moves.
    assert higher.value("notch_h") == pytest.approx(base.value("notch_h") + 0.8)
    assert higher.value("floor_t") == base.value("floor_t")


def test_key_dimensions_hold_a_magnet_in_each_foot(generate: ModuleType,
                                                   parts: dict[str, Any]) -> None:
    key = generate.geo.key_dimensions()
    assert key.length == pytest.approx(2 * key.foot_w + 7 * key.pitch)
    assert key.foot_w >= parts["magnet"]["d"] + parts["printing"]["hole_allowance"]
    assert key.tooth_centre(0) == pytest.approx(key.foot_w + key.pitch / 2)


@pytest.mark.parametrize(("old", "new", "figure"), [
    # A D2F-like hinge lever's +-1.5 mm operating position: no tooth height works.
    ("operating_position_tol = 0.2", "operating_position_tol = 1.5", "tooth presses past OP"),
    # A sloppy printer: the 3-height chain spreads past the window.
    ("tolerance = 0.1", "tolerance = 0.3", "tooth short of end stop"),
    ("pull_pair = 2.9", "pull_pair = 1.0", "magnets hold key down"),
    # A plunger far off the body's centre slips past the key's face.
    ("plunger_offset_max = 2.0", "plunger_offset_max = 4.0", "tooth covers plunger front to back"),
])
def test_impossible_geometry_exits_nonzero_naming_the_figure(
        tmp_path: Path, old: str, new: str, figure: str) -> None:
    result = _generate("--check", "--parts", str(_edited(tmp_path, old, new)))
    assert result.returncode == 2, result.stdout + result.stderr
    assert figure in result.stderr
    assert "impossible geometry" in result.stderr


def test_heights_are_derived_so_they_never_collide(generate: ModuleType,
                                                   parts: dict[str, Any]) -> None:
    # Floor, notch and coil pitch follow the figures they must clear, so a taller
    # body or a wider cross-read gap moves the design instead of failing it.
    taller = {**parts, "switch": {**parts["switch"], "body_h": 7.5}}
    wider = {**parts, "rfid": {**parts["rfid"], "coil_min_gap": 80.0}}
    assert _rows(generate, taller)["floor clears switch body"].ok
    assert _rows(generate, wider)["RFID coils apart"].ok
    # ...but the floor left over the switch can become too thin to print.
    with pytest.raises(generate.geo.GeometryError, match="floor_t"):
        generate.geo.derive({**parts, "switch": {**parts["switch"], "body_h": 8.5}})


def test_shipped_parts_pass_and_generate_check_is_clean() -> None:
    result = _generate("--check", "--parts", str(PARTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_stack_table_is_in_keycodes(generate: ModuleType) -> None:
    text = (DOCS / "keycodes.md").read_text(encoding="utf-8")
    for line in generate.geo.stack_table(generate.geo.load()):
        assert line in text


def _partslist(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HARDWARE / "partslist.py"), *args],
                          capture_output=True, text=True, check=False)


def _buy(p: dict[str, Any], qty: int) -> float:
    """Spec: a part with `pack` is bought in whole packs at `cost` per pack."""
    pack = int(p.get("pack", 1))
    return float((-(-qty // pack)) * p["cost"] if pack > 1 else qty * p["cost"])


def test_parts_list_covers_every_variant_and_small_part(generate: ModuleType,
                                                        parts: dict[str, Any]) -> None:
    readme = (DOCS / "index.md").read_text(encoding="utf-8")
    for v in VARIANTS:
        assert f"### Parts for `{v}`" in readme
    # the flagship's table comes first
    assert readme.index("### Parts for `rc522`") < readme.index("### Parts for `keys-gpio`")
    flagship = [p for p in parts["part"] if "rc522" in p["qty"]]
    names = " ".join(p["name"] for p in flagship)
    for needed in ("Pico H", "RC522", "NTAG213", "LED red", "LED yellow", "LED green",
                   "Piezo", "Push button",
                   "micro-USB", "Dupont jumper wires female-female", "Dupont Y", "countersunk",
                   "Bumper", "filament"):
        assert needed in names, needed
    assert next(p for p in flagship if "RC522" in p["name"])["qty"]["rc522"] == 2
    stickers = next(p for p in flagship if "NTAG213" in p["name"])
    assert stickers["qty"]["rc522"] == 42 and stickers["pack"] >= 42
    mcu = [p for p in parts["part"] if "mcu" in p["qty"]]
    assert not any("Pico H" in p["number"] for p in mcu)     # its pins hit the standoffs
    # mcu: 4 screws for the Pi, 4 for the Pico, 4 for the divider perfboard
    small = sum(p["qty"]["mcu"] for p in mcu if p["name"].startswith("Screw M2"))
    assert small - 4 == 12  # minus the 4 countersunk plate screws
    for v in ("rdm6300", "mcu"):  # the divider resistors the pictures draw
        for value in ("1 kohm", "2 kohm"):
            line = next(p for p in parts["part"] if f"Resistor {value}" in p["name"])
            assert line["qty"][v] == 2, (v, value)
    for p in parts["part"]:
        assert "DIN 7981" not in p["number"] and "SJ5302" not in p["number"]
        if "countersunk" not in p["name"] and p["name"].startswith("Screw"):
            assert "plate" not in p["name"], p["name"]  # plate holes are countersunk
    assert "Omron D2HW-A201D" in readme and "16 ohm" in readme


def test_the_flagship_needs_no_soldering_iron(parts: dict[str, Any]) -> None:
    # Issue 25: parts bought as listed plug together. Nothing the flagship buys is
    # only usable with an iron: loose headers, bare LEDs and resistors, heat-shrink,
    # hookup wire; its Pico comes with its headers, its RC522s with their pins.
    flagship = [p for p in parts["part"] if "rc522" in p["qty"]]
    for p in flagship:
        for iron_only in ("Pin header", "Heat-shrink", "Resistor", "Hookup wire"):
            assert not p["name"].startswith(iron_only), p["name"]
    pico = next(p for p in flagship if "Pico" in p["name"])
    assert "Pico H" in pico["number"]
    rc522 = next(p for p in flagship if p["name"].startswith("RC522"))
    assert "pins soldered" in rc522["number"]
    for p in flagship:  # the LEDs, the button and the piezo plug in with their own leads
        if p["name"].startswith(("5 mm LED", "Push button", "Piezo")):
            assert "pre-wired" in p["name"] and "female Dupont" in p["name"], p["name"]


def test_every_price_names_its_kind_of_shop_and_shipping_follows_them(
        generate: ModuleType, parts: dict[str, Any]) -> None:
    pl = generate.partslist
    shops = parts["shops"]
    for p in parts["part"]:
        assert p["shop"] in shops, p["name"]
    for pi in parts["pi"]:
        assert pi["shop"] in shops, pi["name"]
        for line in pi.get("line", []):
            assert line["shop"] in shops, line["name"]
    # the flagship pays one shipping per kind of shop its parts besides the Pi come from
    v = parts["budget"]["variant"]
    kinds = {p["shop"] for p in parts["part"] if p["qty"].get(v, 0) > 0 and not p.get("base")}
    assert pl.shipping(parts, v) == pytest.approx(sum(shops[k]["shipping"] for k in kinds))
    assert {o.shop for o in pl.orders(parts, v)} == kinds
    # a screw bag moved to a fastener shop adds that shop's shipping
    moved = {**parts, "shops": {**shops, "fastener": {"name": "a fastener shop",
                                                      "shipping": 4.5, "delivery": "2 days"}},
             "part": [{**p, "shop": "fastener"} if p["name"].startswith("Screw M2 x 6") else p
                      for p in parts["part"]]}
    assert pl.shipping(moved, v) == pytest.approx(pl.shipping(parts, v) + 4.5)
    note = pl.shipping_note(parts, v)
    for kind in kinds:
        assert shops[kind]["name"] in note


def test_filament_is_priced_from_slicer_ini_alone(generate: ModuleType,
                                                  parts: dict[str, Any]) -> None:
    import re

    pl = generate.partslist
    ini = (HARDWARE / "print" / "slicer.ini").read_text(encoding="utf-8")
    match = re.search(r"^filament_cost = ([\d.]+)$", ini, re.M)
    assert match is not None
    filament = next(p for p in parts["part"] if p.get("filament"))
    assert "cost" not in filament  # one source
    line = next(ln for ln in pl.variant_lines(parts, "rc522") if ln.per_kg)
    assert line.each == pytest.approx(float(match.group(1)))


def test_the_zero_2_w_buys_its_own_lines(generate: ModuleType, parts: dict[str, Any]) -> None:
    pl = generate.partslist
    zero = next(pi for pi in parts["pi"] if "Zero" in pi["name"])
    names = " ".join(line["name"] for line in zero["line"])
    assert "OTG" in names and "M2.5 x 8" in names
    v = parts["budget"]["variant"]
    sd = next(p["cost"] for p in parts["part"] if p.get("base") and "SD" in p["name"])
    own = {ln.name: ln.total for ln in pl.variant_lines(parts, v)}
    extra = sum(line["buy"] * line["cost"] - own.get(line.get("replaces", ""), 0.0)
                for line in zero["line"])
    assert any("replaces" in line for line in zero["line"])  # the OTG cable, not a second cable
    table = dict(pl.whole_tables(parts))
    assert table[zero["name"]] == pytest.approx(
        zero["cost"] + zero["supply_cost"] + sd + pl.variant_cost(parts, v) + extra, abs=0.01)
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    assert f"With a {zero['name']}:" in guide and "OTG" in guide


def test_packs_are_bought_whole(generate: ModuleType, parts: dict[str, Any]) -> None:
    pl = generate.partslist
    sticker = next(p for p in parts["part"] if "NTAG213" in p["name"])
    one = {**parts, "part": [{**sticker, "qty": {"rc522": 42}}]}
    two = {**parts, "part": [{**sticker, "qty": {"rc522": sticker["pack"] + 1}}]}
    assert pl.variant_cost(one, "rc522") == pytest.approx(sticker["cost"])
    assert pl.variant_cost(two, "rc522") == pytest.approx(2 * sticker["cost"])


def test_budget_figure_leaves_out_the_pi_supply_and_sd(generate: ModuleType,
                                                       parts: dict[str, Any]) -> None:
    pl = generate.partslist
    v = parts["budget"]["variant"]
    grams = next(p for p in parts["part"] if p.get("filament"))
    per_kg = pl.filament_price()
    expected = sum(
        per_kg * grams["grams"][v] / 1000 if p.get("filament") else _buy(p, p["qty"][v])
        for p in parts["part"] if p["qty"].get(v, 0) > 0 and not p.get("base"))
    base = sum(p["cost"] * p["qty"][v] for p in parts["part"] if p.get("base"))
    prints = None if not pl.MANIFEST.exists() else pl.load_prints()
    if prints is None:
        assert pl.variant_cost(parts, v) == pytest.approx(expected, abs=0.01)
        assert pl.variant_cost(parts, v, with_pi=True) == pytest.approx(expected + base, abs=0.01)
    assert base >= 3 * 5  # Pi, supply and SD card are really left out


def test_partslist_prints_the_flagship_figure_and_passes_the_budget() -> None:
    result = _partslist()
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("flagship"))
    cost = float(line.split(": ")[1].split(" EUR")[0])
    assert 0 < cost <= 30.0


def test_partslist_fails_above_the_budget(tmp_path: Path) -> None:
    # two RC522 boards at 9 EUR each put the flagship over 30 EUR
    over = _edited(tmp_path, "cost = 2.2 ", "cost = 9.0 ")
    result = _partslist("--parts", str(over))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "OVER the 30.00 EUR budget" in result.stdout


def test_filament_comes_from_the_slicer_manifest(generate: ModuleType, parts: dict[str, Any],
                                                 tmp_path: Path) -> None:
    pl = generate.partslist
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"parts": [
        {"file": "rfid_block.stl", "filament_g": 60.0, "print_time_s": 7200,
         "variants": ["rc522", "mcu"]},
        {"file": "base_plate.stl", "filament_g": 40.0, "print_time_s": 3600,
         "variants": ["rc522"], "copies": 2},
    ]}))
    prints = pl.load_prints(manifest)
    assert prints["rc522"] == pl.Prints(140.0, 4.0, True)   # 60 + 2 x 40 g, 2 + 2 x 1 h
    assert prints["mcu"] == pl.Prints(60.0, 2.0, True)
    per_kg = pl.filament_price()
    sliced = pl.variant_lines(parts, "rc522", prints)
    filament = next(line for line in sliced if line.per_kg)
    assert filament.total == pytest.approx(per_kg * 0.140, abs=0.01)
    assert "slicer" in filament.buy
    # keys-gpio is not in this manifest: its estimate stays, labelled so
    keys = next(line for line in pl.variant_lines(parts, "keys-gpio", prints) if line.per_kg)
    assert "estimate" in keys.buy
    # hardware/print.py's per-variant sums win over the per-file entries
    totals = tmp_path / "totals.json"
    totals.write_text(json.dumps({
        "parts": {"housing": {"filament_g": 78.5, "print_time_s": 22560}},
        "variants": {"rc522": {"files": {"housing": 1, "tag_shoes": 3},
                               "filament_g": 168.5, "print_time_s": 47715}}}))
    assert pl.load_prints(totals) == {"rc522": pl.Prints(168.5, 13.25, True)}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"parts": [{"file": "x.stl", "variants": ["mcu"]}]}))
    with pytest.raises(pl.ManifestError):
        pl.load_prints(bad)
    assert pl.load_prints(tmp_path / "absent.json") is None


def test_a_stale_parts_block_is_reported(generate: ModuleType) -> None:
    readme = DOCS / "index.md"
    files = generate.outputs()
    assert readme in files
    assert generate.stale({readme: files[readme]}) == []
    doctored = files[readme].replace("Omron D2HW-A201D", "Omron D2F-L", 1)
    assert generate.stale({readme: doctored}) == [readme]


def test_screw_lines_match_the_fastener_table(parts: dict[str, Any]) -> None:
    # Per variant, the screws the printed parts take ([[fastener]], written with the
    # models) or, where parts.toml has no such table, the count the design gives:
    # 4 plate screws, 4 for the Pi, 4 per Pico or perfboard, 2 per switch carrier.
    expected = {"rc522": 12, "keys-gpio": 12, "keys-mcp23017": 16, "rdm6300": 8, "mcu": 16}
    if "fastener" in parts:
        expected = {v: sum(f["qty"].get(v, 0) for f in parts["fastener"]) for v in VARIANTS}
    for v in VARIANTS:
        listed = sum(p["qty"].get(v, 0) for p in parts["part"] if p["name"].startswith("Screw"))
        assert listed == expected[v], v


def test_the_budget_counts_the_shipping_of_the_shops_the_parts_come_from(
        generate: ModuleType, parts: dict[str, Any], tmp_path: Path) -> None:
    pl = generate.partslist
    v = parts["budget"]["variant"]
    assert pl.budget_cost(parts, v) == pytest.approx(
        pl.variant_cost(parts, v) + pl.shipping(parts, v), abs=0.01)
    # the Pico H bought at the hobby shop instead: that shop's shipping joins the figure
    moved = {**parts, "part": [{**p, "shop": "hobby"} if "Pico H" in p["name"] else p
                               for p in parts["part"]]}
    if "hobby" not in {o.shop for o in pl.orders(parts, v)}:
        assert pl.budget_cost(moved, v) == pytest.approx(
            pl.budget_cost(parts, v) + parts["shops"]["hobby"]["shipping"], abs=0.01)
    # and a budget that parts alone meet but shipping breaks fails the script
    prints = pl.load_prints() if pl.MANIFEST.exists() else None
    limit = pl.variant_cost(parts, v, prints) + 0.01  # the parts alone pass
    over = _edited(tmp_path, 'shipping = 0.0       # mostly free at these prices',
                   'shipping = 4.0       # mostly free at these prices')
    over.write_text(over.read_text(encoding="utf-8").replace(
        "limit = 30.0", f"limit = {limit:.2f}"), encoding="utf-8")
    result = _partslist("--parts", str(over))
    assert result.returncode == 1 and "OVER" in result.stdout, result.stdout + result.stderr
