"""Wiring diagrams a builder wires from: WireViz YAML and pin maps, generated from the pin tables.

Called by ``hardware/generate.py``. For every variant it writes, into
``docs/build/wiring/``:

- ``<variant>.yml``: a WireViz harness (connectors with their pins in physical
  order, one colour per wire, the LEDs with their polarity and the resistor on
  the anode leg, or in the + lead of the flagship's pre-wired LEDs, the divider
  resistors), rendered by WireViz and Graphviz's
  ``dot`` to ``<variant>.svg`` and ``<variant>.png``; the flagship has two
  (``rc522-readers`` and ``rc522-pi``);
- ``<variant>-header.gv``: the Pi's 2 x 20 header as seen from above (pin 1 at
  the top left, the SD card end), every pin used filled in its wire's colour,
  rendered to SVG and PNG; the Pico-based variants also get
  ``<variant>-pico.gv``, the Pico from above, USB at the top.

The pins come from the code's own tables: the config (``Config.gpio_pins``), the
ground plan and Pico pin map of ``wiring.py``, the Pico firmware's pin
constants (read from ``firmware/pico/main.py``), and the MCP23017
reader's bits. Rendering is byte-stable for one Graphviz version (the tests
re-render and compare).
"""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import wiring
import yaml

from arbiter.app.config import Config

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "docs" / "build" / "wiring"
FIRMWARE = ROOT / "firmware" / "pico" / "main.py"
PNG_DPI = 110  # PNG: readable on a phone at full width, text about 2 mm on A4

#: The Dupont ribbon's ten colours in order (WireViz / IEC 60757 codes).
RIBBON = ("BN", "RD", "OG", "YE", "GN", "BU", "VT", "GY", "WH", "BK")
#: Fill colours of the header maps, per WireViz colour code.
HEX = {"BN": "#8d5524", "RD": "#e53935", "OG": "#fb8c00", "YE": "#fdd835", "GN": "#43a047",
       "BU": "#1e88e5", "VT": "#8e24aa", "GY": "#9e9e9e", "WH": "#ffffff", "BK": "#212121",
       "PK": "#f48fb1"}
#: Text colour that reads on each fill.
INK = {"BK": "#ffffff", "BN": "#ffffff", "BU": "#ffffff", "VT": "#ffffff", "RD": "#ffffff",
       "GN": "#ffffff"}

#: RC522 board header, in its physical order (the common blue board).
RC522_PINS = ("SDA", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V")
#: RDM6300 header P1, physical order (pin 3 unused).
RDM6300_PINS = ("TX", "RX", "n.c.", "GND", "+5V")
PICO_GND_A, PICO_GND_D = 23, 18  # each RC522 its own GND pin, beside its bus: no splice
PICO_3V3 = 36

LED_PINS = ["330 Ω → anode (long leg)", "cathode (short leg)"]
#: The flagship's LEDs are bought pre-wired: the resistor sits inside the + lead.
PREWIRED_LED_PINS = ["+ lead (resistor inside)", "- lead"]
LED_COLOURS = {"attacker LED": "red", "defender LED": "yellow", "status LED": "green"}


class HarnessError(ValueError):
    """The pin tables cannot be turned into a harness."""


# ----------------------------------------------------------------------- pins


@dataclass(frozen=True)
class Rc522Pins:
    """The Pico GP numbers the firmware drives one RC522 board on (its own SPI bus)."""

    spi: int
    sck: int
    mosi: int
    miso: int
    cs: int
    rst: int


def rc522_pins(source: str | None = None) -> dict[str, Rc522Pins]:
    """The RC522 pin constant of ``firmware/pico/main.py``: slot letter -> its pins."""
    tree = ast.parse(source if source is not None else FIRMWARE.read_text(encoding="utf-8"))
    found: dict[str, Any] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("RC522_")):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    try:
        return {slot: Rc522Pins(*(int(n) for n in found["RC522_BUS"][slot])) for slot in "AD"}
    except (KeyError, TypeError) as exc:
        raise HarnessError(f"firmware: RC522 pin constants not found ({exc})") from None


def pico_pin(gp: int) -> int:
    """The Pico's physical pin of GP ``gp``."""
    header: dict[int, str] = wiring.PICO_HEADER
    return next(p for p, name in header.items() if name == f"GP{gp}")


# ----------------------------------------------------------------------- model


@dataclass
class Harness:
    """A WireViz document being built: connectors, one-wire cables, connections."""

    title: str
    connectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    cables: dict[str, dict[str, Any]] = field(default_factory=dict)
    connections: list[list[Any]] = field(default_factory=list)
    colours: dict[tuple[str, int], str] = field(default_factory=dict)  # (connector, pin) -> colour

    def connector(self, name: str, kind: str, pins: Sequence[int | str],
                  labels: Sequence[str], subtype: str = "", notes: str = "",
                  hide: bool = False) -> None:
        entry: dict[str, Any] = {"type": kind}
        if subtype:
            entry["subtype"] = subtype
        entry["pins"] = list(pins)
        entry["pinlabels"] = list(labels)
        if hide:
            entry["hide_disconnected_pins"] = True
        if notes:
            entry["notes"] = notes
        self.connectors[name] = entry

    def splice(self, name: str, what: str) -> None:
        self.connectors[name] = {"style": "simple", "type": what}

    def wire(self, a: str, a_pin: int | None, colour: str, b: str,
             b_pin: int | None, note: str = "") -> None:
        """One wire of ``colour`` from ``a``:``a_pin`` to ``b``:``b_pin`` (None: a splice)."""
        name = f"W{len(self.cables) + 1}"
        cable: dict[str, Any] = {"category": "bundle", "colors": [colour],
                                 "show_name": False, "show_wirecount": False}
        if note:
            cable["notes"] = note
        self.cables[name] = cable
        self.connections.append([
            a if a_pin is None else {a: [a_pin]},
            {name: [1]},
            b if b_pin is None else {b: [b_pin]},
        ])
        for end, pin in ((a, a_pin), (b, b_pin)):
            if pin is not None:
                self.colours.setdefault((end, pin), colour)

    def bundle(self, a: str, b: str, wires: Sequence[tuple[int, str, int]],
               note: str = "") -> None:
        """Wires (``a`` pin, colour, ``b`` pin) from ``a`` to ``b``: one cable, ``b``'s order."""
        ordered = sorted(wires, key=lambda w: w[2])
        name = f"W{len(self.cables) + 1}"
        cable: dict[str, Any] = {"category": "bundle", "colors": [c for _, c, _ in ordered],
                                 "show_name": False, "show_wirecount": False}
        if note:
            cable["notes"] = note
        self.cables[name] = cable
        self.connections.append([
            {a: [pa for pa, _, _ in ordered]},
            {name: list(range(1, len(ordered) + 1))},
            {b: [pb for _, _, pb in ordered]},
        ])
        for pa, colour, pb in ordered:
            self.colours.setdefault((a, pa), colour)
            self.colours.setdefault((b, pb), colour)

    def yaml(self) -> str:
        doc = {
            "metadata": {"title": self.title},
            "options": {"fontname": "DejaVu Sans", "bgcolor": "WH", "color_mode": "SHORT",
                        "mini_bom_mode": False},
            "connectors": self.connectors,
            "cables": self.cables,
            "connections": self.connections,
        }
        return (f"# {wiring.NOTE.replace('hardware/wiring.py', 'hardware/harness.py')}\n"
                + str(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)))


def _pi_connector(h: Harness, name: str, pins: Sequence[int], header: Mapping[int, str],
                  kind: str, roles: Mapping[int, str]) -> None:
    pins = sorted(set(pins))
    labels = [f"{header[p]}: {roles[p]}" if p in roles else header[p] for p in pins]
    h.connector(name, kind, pins, labels, subtype="header pin numbers")


def _leds_buzzer_button(h: Harness, config: Config, kind: str,
                        header: Mapping[int, str], prewired: bool = False) -> None:
    """The Pi side every variant shares: 3 LEDs, the piezo, NEW GAME; their returns.

    ``prewired``: the flagship's parts, bought with their leads on (an LED's resistor
    inside its + lead). Each part's - lead ends in its own plug, so each takes its own
    GND pin (the Pi has eight); soldered variants join the LED cathodes on one.
    """
    runs = [r for r in wiring.pi_runs(config, kind, header) if r.part != "switch"]
    if prewired:
        own = wiring.ground_plan({r.label: [r.pin] for r in runs}, header)
        ground = {r.label: own[r.label] for r in runs}
        returns = {own[r.label]: f"{r.label} - lead" for r in runs}
    else:
        plan = wiring.pi_ground_plan(config, kind, header)
        ground = {r.label: plan[r.ground] for r in runs}
        returns = {plan[r.ground]: f"{r.ground} return" for r in runs}
    roles = {r.pin: r.label for r in runs}
    _pi_connector(h, "Pi", [r.pin for r in runs], header, "Raspberry Pi 40-pin header", roles)
    _pi_connector(h, "Pi GND", sorted(returns), header, "the same header: GND pins", returns)
    colours = iter(c for c in RIBBON if c not in ("BK", "RD"))
    led_runs = [r for r in runs if r.part == "led"]
    for r in led_runs:
        name = f"{r.label.split()[0].upper()} LED"
        if prewired:
            h.connector(name, f"5 mm LED, {LED_COLOURS[r.label]}, pre-wired", [1, 2],
                        PREWIRED_LED_PINS, subtype="female Dupont plugs")
        else:
            h.connector(name, f"5 mm LED, {LED_COLOURS[r.label]}", [1, 2], LED_PINS,
                        subtype="330 Ω on its long leg")
        h.wire("Pi", r.pin, next(colours), name, 1)
        # ground wires come from the left too: the diagram stays three columns wide
        joined = not prewired and r is led_runs[0]
        h.wire("Pi GND", ground[r.label], "BK", name, 2,
               note="the 3 cathode wires joined: one plug" if joined else "")
    leads = ["lead 1 (no polarity)", "lead 2"] if prewired else ["leg 1 (no polarity)", "leg 2"]
    for r in runs:
        if r.part == "buzzer":
            h.connector("Piezo", "piezo 12 mm" + (", pre-wired" if prewired else ""), [1, 2],
                        leads)
            h.wire("Pi", r.pin, next(colours), "Piezo", 1)
            h.wire("Pi GND", ground[r.label], "BK", "Piezo", 2)
        if r.part == "button":
            h.connector("NEW GAME", "push button, NO" + (", pre-wired" if prewired else ""),
                        [1, 2], ["contact", "contact"])
            h.wire("Pi", r.pin, next(colours), "NEW GAME", 1)
            h.wire("Pi GND", ground[r.label], "BK", "NEW GAME", 2)


# ------------------------------------------------------------------- variants


def flagship_readers() -> Harness:
    """Pico to the two RC522 boards: each on its own SPI bus, only 3.3 V through a Y."""
    buses = rc522_pins()
    h = Harness("rc522: the Pico and its two RC522 boards")
    colours = {"SDA": "OG", "SCK": "YE", "MOSI": "BU", "MISO": "GN", "RST": "WH"}
    own = {"A": (buses["A"], PICO_GND_A), "D": (buses["D"], PICO_GND_D)}
    roles: dict[int, str] = {PICO_3V3: "3.3V (both): one Dupont Y"}
    for slot, (p, gnd) in own.items():
        who = "ATTACKER" if slot == "A" else "DEFENDER"
        for name, gp in (("SDA", p.cs), ("SCK", p.sck), ("MOSI", p.mosi), ("MISO", p.miso),
                         ("RST", p.rst)):
            roles[pico_pin(gp)] = f"{name} {who} (SPI{p.spi})" if name != "RST" else f"RST {who}"
        roles[gnd] = f"{who} board"
    ordered = sorted(roles)
    h.connector("Pico", "Raspberry Pi Pico H (header soldered)", ordered,
                [f"{wiring.PICO_HEADER[n]}: {roles[n]}" for n in ordered],
                subtype="pin numbers")
    for slot, (p, gnd) in own.items():
        board = f"RC522 {'ATTACKER' if slot == 'A' else 'DEFENDER'}"
        h.connector(board, "RC522 board", list(range(1, 9)), list(RC522_PINS),
                    subtype="header, left to right")
        wires = [(gnd, "BK", RC522_PINS.index("GND") + 1),
                 (PICO_3V3, "RD", RC522_PINS.index("3.3V") + 1)]
        wires += [(pico_pin(gp), colours[name], RC522_PINS.index(name) + 1)
                  for name, gp in (("SDA", p.cs), ("SCK", p.sck), ("MOSI", p.mosi),
                                   ("MISO", p.miso), ("RST", p.rst))]
        h.bundle("Pico", board, wires,
                 note="3.3V (red): one Dupont Y on pin 36 feeds both boards; "
                      "every other lead is this board's own")
    return h


def flagship_pi(config: Config, header: Mapping[int, str], prewired: bool = True) -> Harness:
    """The Pi's side of the flagship: LEDs, piezo, button (bought pre-wired unless
    ``prewired`` is false: the RDM6300 ``mcu`` variant solders them), and the Pico's
    USB cable."""
    h = Harness("rc522: the Pi's LEDs, piezo, NEW GAME button and the Pico's cable")
    _leds_buzzer_button(h, config, "mcu", header, prewired=prewired)
    h.connector("Pi USB", "Pi: any USB-A port", [1], [f"appears as {config.reader.mcu_port}"],
                subtype="Zero 2 W: its OTG port")
    h.connector("Pico USB", "Pico", [1], ["micro-USB"])
    h.wire("Pi USB", 1, "GY", "Pico USB", 1, note="USB data cable (not charge-only)")
    return h


def keys_gpio(config: Config, header: Mapping[int, str]) -> Harness:
    h = Harness("keys-gpio: 14 microswitches, LEDs, piezo and button on the Pi")
    runs = wiring.pi_runs(config, "keys-gpio", header)
    plan = wiring.pi_ground_plan(config, "keys-gpio", header)
    _leds_buzzer_button(h, config, "keys-gpio", header)
    for slot in wiring.SLOTS:
        mine = [r for r in runs if r.part == "switch" and r.label.startswith(slot)]
        bank = f"{slot} switches"
        h.connector(bank, "7 x D2HW-A201D", list(range(1, 9)),
                    [f"switch {i} COM" for i in range(1, 8)] + ["NO bus (7 NO joined)"],
                    subtype="switch 1: rib end")
        conn = h.connectors["Pi"]
        for r in mine:
            if r.pin not in conn["pins"]:
                conn["pins"].append(r.pin)
                conn["pinlabels"].append(f"{header[r.pin]}: {r.label}")
        h.bundle("Pi", bank, [(r.pin, RIBBON[i % len(RIBBON)], i + 1)
                              for i, r in enumerate(mine)])
        h.wire("Pi GND", plan[mine[0].ground], "BK", bank, 8)
        gnd = h.connectors["Pi GND"]
        if plan[mine[0].ground] not in gnd["pins"]:
            gnd["pins"].append(plan[mine[0].ground])
            gnd["pinlabels"].append(f"GND: {slot} NO bus")
    _sort_pins(h)
    return h


def _sort_pins(h: Harness) -> None:
    for name in ("Pi", "Pi GND"):
        c = h.connectors.get(name)
        if c:
            pairs = sorted(zip(c["pins"], c["pinlabels"], strict=True))
            c["pins"] = [p for p, _ in pairs]
            c["pinlabels"] = [lab for _, lab in pairs]


def keys_mcp23017(config: Config, header: Mapping[int, str]) -> Harness:
    r = config.reader
    h = Harness("keys-mcp23017: the MCP23017 and its 14 switches, LEDs, piezo, button")
    _leds_buzzer_button(h, config, "keys-mcp23017", header)
    plan = wiring.pi_ground_plan(config, "keys-mcp23017", header)
    mcp_gnd = next(iter(plan.values()))
    inta = wiring._bcm_pin(header, r.interrupt_pin)
    pi = h.connectors["Pi"]
    for pin, label in ((1, "MCP23017 VDD, RESET"), (3, "SDA1 to MCP23017 SDA"),
                       (5, "SCL1 to MCP23017 SCL"), (inta, "MCP23017 INTA")):
        pi["pins"].append(pin)
        pi["pinlabels"].append(f"{header[pin]}: {label}")
    gnd = h.connectors["Pi GND"]
    if mcp_gnd not in gnd["pins"]:
        gnd["pins"].append(mcp_gnd)
        gnd["pinlabels"].append("GND: MCP23017 VSS, A0-A2, both NO buses")
    _sort_pins(h)
    p = wiring.MCP23017_PINS
    att, dfd = wiring.mcp23017_bits()
    used = ["VDD", "VSS", "SCL", "SDA", "A0", "A1", "A2", "RESET", "INTA"]
    used += [wiring.bit_name(b) for b in (*att, *dfd)]
    chip_pins = sorted(p[n] for n in used)
    names = {v: k for k, v in p.items()}
    h.connector("MCP23017", f"MCP23017, 0x{r.i2c_address:02X}",
                chip_pins, [names[n] for n in chip_pins],
                subtype="chip pins", notes="100 nF VDD-VSS at the chip; A0-A2 to VSS")
    h.wire("Pi", 1, "RD", "MCP23017", p["VDD"])
    h.wire("Pi", 1, "RD", "MCP23017", p["RESET"], note="3V3 also to RESET (perfboard link)")
    # colours the LEDs, piezo and button (BN, OG, YE, GN, BU) do not use
    h.wire("Pi", 3, "VT", "MCP23017", p["SDA"])
    h.wire("Pi", 5, "GY", "MCP23017", p["SCL"])
    h.wire("Pi", inta, "WH", "MCP23017", p["INTA"])
    h.wire("Pi GND", mcp_gnd, "BK", "MCP23017", p["VSS"])
    for slot, bits in zip(wiring.SLOTS, (att, dfd), strict=True):
        bank = f"{slot} switches"
        h.connector(bank, "7 x D2HW-A201D", list(range(1, 9)),
                    [f"switch {i} COM" for i in range(1, 8)] + ["NO bus (7 NO joined)"],
                    subtype="switch 1: rib end")
        wires = [(p[wiring.bit_name(bit)], RIBBON[i % len(RIBBON)], i + 1)
                 for i, bit in enumerate(bits)]
        h.bundle("MCP23017", bank, [*wires, (p["VSS"], "BK", 8)],
                 note="the NO bus to VSS on the perfboard")
    return h


def _divider(h: Harness, name: str) -> None:
    h.connector(name, "divider 1 kΩ / 2 kΩ", [1, 2, 3],
                ["in (1 kΩ end)", "out (joint, 3.3 V)", "GND (2 kΩ end)"],
                subtype="5 V TX to 3.3 V")


def rdm6300(config: Config, header: Mapping[int, str]) -> Harness:
    r = config.reader
    h = Harness("rdm6300: two RDM6300 readers on USB-serial adapters")
    for slot, port in zip(wiring.SLOTS, (r.attacker_port, r.defender_port), strict=True):
        mod, div, ad = f"{slot} RDM6300", f"{slot} divider", f"{slot} adapter"
        h.connector(mod, "RDM6300", list(range(1, 6)), list(RDM6300_PINS), subtype="P1")
        _divider(h, div)
        h.connector(ad, f"USB-serial, {port}", [1, 2, 3, 4],
                    ["5V (VBUS)", "GND", "RXD", "TXD (unused)"], subtype="go by the labels")
        h.wire(mod, 1, "OG", div, 1)
        h.wire(div, 2, "YE", ad, 3)
        h.wire(div, 3, "BK", ad, 2)
        h.wire(mod, 4, "BK", ad, 2)
        h.wire(mod, 5, "RD", ad, 1)
    return h


def mcu(config: Config, header: Mapping[int, str]) -> Harness:
    h = Harness("mcu: the Pico and two RDM6300 readers")
    uarts = wiring.pico_uarts()
    pins = [u.rx_pin for u in uarts] + [wiring.PICO_GND, wiring.PICO_VBUS]
    roles = {u.rx_pin: f"UART{u.uart} RX {u.slot}" for u in uarts}
    roles |= {wiring.PICO_GND: "GND (all)", wiring.PICO_VBUS: "+5V (both)"}
    ordered = sorted(pins)
    h.connector("Pico", "Raspberry Pi Pico", ordered,
                [f"{wiring.PICO_HEADER[n]}: {roles[n]}" for n in ordered],
                subtype="pin numbers")
    for u in uarts:
        mod, div = f"{u.slot} RDM6300", f"{u.slot} divider"
        h.connector(mod, "RDM6300", list(range(1, 6)), list(RDM6300_PINS), subtype="P1")
        _divider(h, div)
        h.wire(mod, 1, "OG", div, 1)
        h.wire(div, 2, "YE", "Pico", u.rx_pin)
        h.wire(div, 3, "BK", "Pico", wiring.PICO_GND)
        h.wire(mod, 4, "BK", "Pico", wiring.PICO_GND)
        h.wire(mod, 5, "RD", "Pico", wiring.PICO_VBUS)
    return h


def mcu_pi(config: Config, header: Mapping[int, str]) -> Harness:
    h = flagship_pi(config, header, prewired=False)
    h.title = "mcu: the Pi's LEDs, piezo, NEW GAME button and the Pico's cable"
    return h


def rdm6300_pi(config: Config, header: Mapping[int, str]) -> Harness:
    h = Harness("rdm6300: the Pi's LEDs, piezo and NEW GAME button")
    _leds_buzzer_button(h, config, "rdm6300", header)
    return h


def harnesses(config: Config, header: Mapping[int, str]) -> dict[str, Harness]:
    """Every diagram, by file stem, the flagship first."""
    return {
        "rc522-readers": flagship_readers(),
        "rc522-pi": flagship_pi(config, header),
        "keys-gpio": keys_gpio(config, header),
        "keys-mcp23017": keys_mcp23017(config, header),
        "rdm6300-readers": rdm6300(config, header),
        "rdm6300-pi": rdm6300_pi(config, header),
        "mcu-readers": mcu(config, header),
        "mcu-pi": mcu_pi(config, header),
    }


# ------------------------------------------------------------------ pin maps


def _cell(text: str, colour: str | None, align: str = "CENTER") -> str:
    if colour is None:
        return f'<TD ALIGN="{align}"><FONT COLOR="#777777">{text}</FONT></TD>'
    ink = INK.get(colour, "#000000")
    return (f'<TD ALIGN="{align}" BGCOLOR="{HEX[colour]}"><FONT COLOR="{ink}"><B>{text}</B>'
            "</FONT></TD>")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def pin_map(title: str, top: str, bottom: str, names: Mapping[int, str],
            used: Mapping[int, tuple[str, str]], left: Sequence[int],
            right: Sequence[int]) -> str:
    """A Graphviz document: two pin columns seen from above, used pins in their wire colour.

    ``used`` maps a pin to (what it goes to, colour code); ``left``/``right`` are
    the pin numbers of each column from top to bottom.
    """
    rows = [f'<TR><TD COLSPAN="4" BGCOLOR="#eeeeee"><B>{_escape(title)}</B></TD></TR>',
            f'<TR><TD COLSPAN="4">{_escape(top)}</TD></TR>']
    for a, b in zip(left, right, strict=True):
        ua, ub = used.get(a), used.get(b)
        la = _escape(f"{names[a]}  {ua[0]}" if ua else names[a])
        lb = _escape(f"{names[b]}  {ub[0]}" if ub else names[b])
        rows.append("<TR>" + _cell(la, ua[1] if ua else None, "RIGHT")
                    + _cell(f"{a}", ua[1] if ua else None)
                    + _cell(f"{b}", ub[1] if ub else None)
                    + _cell(lb, ub[1] if ub else None, "LEFT") + "</TR>")
    rows.append(f'<TR><TD COLSPAN="4">{_escape(bottom)}</TD></TR>')
    table = ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="5">'
             + "".join(rows) + "</TABLE>")
    note = wiring.NOTE.replace("hardware/wiring.py", "hardware/harness.py")
    return (f"// {note}\ndigraph pins {{\n  graph [bgcolor=white];\n"
            f'  node [shape=plaintext, fontname="DejaVu Sans", fontsize=13];\n'
            f"  map [label=<{table}>];\n}}\n")


def _used(h: Harness, connectors: Sequence[str]) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for name in connectors:
        c = h.connectors.get(name)
        if c is None:
            continue
        for pin, label in zip(c["pins"], c["pinlabels"], strict=True):
            colour = h.colours.get((name, int(pin)), "GY")
            what = label.split(": ", 1)[1] if ": " in label else label
            out.setdefault(int(pin), (what, colour))
    return out


def header_map(h: Harness, variant: str, header: Mapping[int, str]) -> str:
    used = _used(h, ("Pi", "Pi GND"))
    return pin_map(
        f"{variant}: Raspberry Pi 40-pin header, seen from above",
        "↑ SD card end (pin 1: square pad); board edge: even pins", "↓  USB / Ethernet end",
        header, used, list(range(1, 41, 2)), list(range(2, 41, 2)))


def pico_map(h: Harness, variant: str) -> str:
    used = _used(h, ("Pico",))
    return pin_map(
        f"{variant}: Raspberry Pi Pico, seen from above",
        "micro-USB end  ↑", "↓  debug pins end",
        wiring.PICO_HEADER, used, list(range(1, 21)), list(range(40, 20, -1)))


def sources(config: Config, header: Mapping[int, str]) -> dict[str, str]:
    """Every generated source (file name -> text): WireViz YAML and pin-map Graphviz files."""
    hs = harnesses(config, header)
    files = {f"{stem}.yml": h.yaml() for stem, h in hs.items()}
    for variant, pi_h, pico_h in (
        ("rc522", hs["rc522-pi"], hs["rc522-readers"]),
        ("keys-gpio", hs["keys-gpio"], None),
        ("keys-mcp23017", hs["keys-mcp23017"], None),
        ("rdm6300", hs["rdm6300-pi"], None),
        ("mcu", hs["mcu-pi"], hs["mcu-readers"]),
    ):
        files[f"{variant}-header.gv"] = header_map(pi_h, variant, header)
        if pico_h is not None:
            files[f"{variant}-pico.gv"] = pico_map(pico_h, variant)
    return files


# ------------------------------------------------------------------- render


def _run(cmd: Sequence[str], cwd: Path) -> None:
    result = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HarnessError(f"{' '.join(cmd)} failed: {result.stderr.strip()}")


def tools() -> tuple[str, str]:
    """The wireviz and dot commands (the venv's wireviz beside this interpreter)."""
    import sys

    venv_bin = Path(sys.executable).parent
    wv = shutil.which("wireviz", path=str(venv_bin)) or shutil.which("wireviz")
    dot = shutil.which("dot")
    if wv is None or dot is None:
        raise HarnessError("wireviz (bash setup.sh --dev) and Graphviz's dot "
                           "(Debian graphviz) are needed to render the wiring pictures")
    return wv, dot


@functools.lru_cache(maxsize=64)
def render(name: str, text: str) -> tuple[bytes, bytes]:
    """(SVG, PNG) of one source: a WireViz ``.yml`` or a Graphviz ``.gv``."""
    wv, dot = tools()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        stem = Path(name).stem
        gv = work / f"{stem}.gv"
        if name.endswith(".yml"):
            (work / name).write_text(text, encoding="utf-8")
            _run([wv, "-f", "g", name], work)
        else:
            gv.write_text(text, encoding="utf-8")
        _run([dot, "-Tsvg", "-o", "out.svg", gv.name], work)
        _run([dot, "-Tpng", f"-Gdpi={PNG_DPI}", "-o", "out.png", gv.name], work)
        return (work / "out.svg").read_bytes(), (work / "out.png").read_bytes()


def outputs(config: Config, header: Mapping[int, str]) -> dict[Path, str | bytes]:
    """Every file this module generates (path -> content), rendered pictures included."""
    files: dict[Path, str | bytes] = {}
    for name, text in sources(config, header).items():
        files[OUT / name] = text
        svg, png = render(name, text)
        stem = Path(name).stem
        files[OUT / f"{stem}.svg"] = svg
        files[OUT / f"{stem}.png"] = png
    return files
