"""The flagship's one-page quick reference: wiring table, step checklist, enrollment sheet.

    .venv/bin/python hardware/quickref.py          write docs/build/quickref.html and .pdf
    .venv/bin/python hardware/quickref.py --check  exit 1 if either is stale

Everything on the page comes from the sources the rest of the build docs use:
the wiring from ``harness.py``'s flagship harnesses (the firmware's RC522 pins
and the default config's Pi pins), the checklist from ``docs/build/guide.md``'s
steps (title, hands-on minutes, check), the enrollment sheet from
:func:`arbiter.rules.army.all_physical_pieces` (the order ``gg-arbiter enroll``
asks in). The HTML is the source; headless Chromium prints it to PDF. PDF
bytes are not reproducible (dates), so ``quickref.json`` records the hash of
the HTML each PDF was printed from: ``--check`` regenerates the HTML and
compares it, and compares the recorded hashes with the committed files.
"""

from __future__ import annotations

import hashlib
import html
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
ROOT = HERE.parent
for path in (ROOT, HERE):  # run as a script from a checkout without installing
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import gencli  # noqa: E402
import generate  # noqa: E402
import harness  # noqa: E402

from arbiter.app.config import Config, load_config  # noqa: E402
from arbiter.rules.army import all_physical_pieces  # noqa: E402

DOCS = ROOT / "docs" / "build"
GUIDE = DOCS / "guide.md"
HTML = DOCS / "quickref.html"
PDF = DOCS / "quickref.pdf"
RECORD = DOCS / "quickref.json"
STEP = re.compile(r"^### (\d+)\. (.+)$", re.M)
HANDS_ON = re.compile(r"^\*Hands-on: (\d+) min\.", re.M)
_MARKUP = re.compile(r"[`*]|\[([^\]]+)\]\([^)]+\)")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


class QuickRefError(RuntimeError):
    """The quick reference cannot be made (no Chromium, or a guide step without its parts)."""


@dataclass(frozen=True)
class Wire:
    """One lead of the table: from ``a`` to ``b``; ``shared`` leads go through a Dupont Y."""

    a: str
    b: str
    note: str = ""
    shared: bool = False


@dataclass(frozen=True)
class StepLine:
    """One line of the checklist."""

    number: int
    title: str
    minutes: int
    check: str


def _plain(text: str) -> str:
    """Markdown inline marks and HTML comments (the rehearsal's expect markers) dropped
    (links keep their text), whitespace folded."""
    text = _COMMENT.sub(" ", text)
    # code spans keep every character (the Pico's answers end in *checksum)
    parts = text.split("`")
    plain = "".join(part if i % 2 else _MARKUP.sub(lambda m: m.group(1) or "", part)
                    for i, part in enumerate(parts))
    return " ".join(plain.split())


def reader_wires() -> list[Wire]:
    """Every lead from the Pico to the two RC522 boards, per board, in the board's pin order."""
    h = harness.flagship_readers()
    pico = h.connectors["Pico"]
    label = dict(zip(pico["pins"], pico["pinlabels"], strict=True))
    out = []
    for connection in h.connections:
        (a, a_pins), _, (b, b_pins) = (next(iter(end.items())) for end in connection)
        names = dict(zip(h.connectors[b]["pins"], h.connectors[b]["pinlabels"], strict=True))
        for pa, pb in sorted(zip(a_pins, b_pins, strict=True), key=lambda p: p[1]):
            name, role = label[pa].split(": ", 1)
            out.append(Wire(f"{b.removeprefix('RC522 ')} {names[pb]}", f"{a} pin {pa} ({name})",
                            shared="(both)" in role, note="Y" if "(both)" in role else ""))
    return out


def pi_wires(config: Config) -> list[Wire]:
    """Every lead from the Pi's header to the pre-wired parts, each ``-`` lead on its own
    GND pin (as the harness plans them)."""
    h = harness.flagship_pi(config, generate.HEADER)
    pins = dict(zip(h.connectors["Pi"]["pins"], h.connectors["Pi"]["pinlabels"], strict=True))
    out = []
    for connection in h.connections:
        (a, a_pins), _, (b, _) = (next(iter(end.items())) for end in connection)
        part = b.replace("STATUS", "status").replace("Piezo", "piezo")
        led = "LED" in b  # an LED's resistor is in its + lead; the rest have no polarity
        first, second = (f"{part} + lead", f"{part} - lead") if led else (
            f"{part}, one lead", f"{part}, other lead")
        if a == "Pi":
            name = pins[a_pins[0]].split(": ", 1)[0]
            out.append(Wire(first, f"Pi pin {a_pins[0]} ({name})"))
        elif a == "Pi GND":
            out.append(Wire(second, f"Pi pin {a_pins[0]} (GND)"))
        else:
            out.append(Wire("Pico micro-USB", "Pi USB-A port (Zero 2 W: its OTG port)",
                            note="data cable"))
    return out


def checklist(guide: str) -> list[StepLine]:
    """Every step of the guide: number, title, hands-on minutes, its check in plain text."""
    found = list(STEP.finditer(guide))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else guide.find("\n## ", match.end())
        body = guide[match.end():end]
        minutes = HANDS_ON.search(body)
        if minutes is None or "**Check:**" not in body:
            raise QuickRefError(f"guide step {match.group(1)} has no hands-on time or check")
        check = _plain(body.split("**Check:**", 1)[1])
        out.append(StepLine(int(match.group(1)), match.group(2), int(minutes.group(1)), check))
    return out


CSS = """
@page { size: A4; margin: 7mm; }
body { font: 7pt/1.18 "DejaVu Sans", sans-serif; margin: 0; color: #111; }
h1 { font-size: 11pt; margin: 0 0 2mm; }
h2 { font-size: 8.6pt; margin: 2.2mm 0 1mm; }
table { border-collapse: collapse; width: 100%; }
td, th { border: 0.3mm solid #999; padding: 0.5mm 1mm; vertical-align: top; text-align: left; }
th { background: #eee; }
.cols { display: flex; gap: 3mm; }
.cols > div { flex: 1; }
.box { width: 3mm; }
.y { font-weight: bold; }
.sheet { table-layout: fixed; }
.sheet td { text-align: center; height: 6mm; font-size: 6pt; padding: 0.4mm 0; overflow: hidden; }
p { margin: 0.8mm 0; }
"""


def page(config: Config, guide: str) -> str:
    """The quick reference as one HTML page (A4)."""
    esc = html.escape
    steps = checklist(guide)
    total = sum(s.minutes for s in steps)
    readers = reader_wires()
    rows = []
    for board in ("ATTACKER", "DEFENDER"):
        rows += [f"<tr><td>{esc(w.a)}</td><td>{esc(w.b)}</td>"
                 f"<td class='y'>{esc(w.note)}</td><td class='box'>☐</td></tr>"
                 for w in readers if w.a.startswith(board)]
    pi_rows = [f"<tr><td>{esc(w.a)}</td><td>{esc(w.b)}</td><td>{esc(w.note)}</td>"
               f"<td class='box'>☐</td></tr>" for w in pi_wires(config)]
    step_rows = [f"<tr><td class='box'>☐</td><td>{s.number}. {esc(s.title)}</td>"
                 f"<td>{s.minutes}</td><td>{esc(s.check)}</td></tr>" for s in steps]
    pieces = [str(p) for p in all_physical_pieces()]
    per_row = 14  # three rows: readable at 6 pt across an A4 page
    sheet = "".join(
        "<tr>" + "".join(f"<td>{start + i + 1}<br>{esc(name)}</td>"
                         for i, name in enumerate(pieces[start:start + per_row])) + "</tr>"
        for start in range(0, len(pieces), per_row))
    return "\n".join([
        "<!DOCTYPE html>",
        "<!-- Generated by hardware/quickref.py from harness.py, guide.md and the rules; "
        "do not edit. -->",
        "<html lang='en'><head><meta charset='utf-8'>",
        "<title>Salpakan Arbiter: quick reference (rc522)</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Salpakan Arbiter, the flagship (rc522): quick reference</h1>",
        "<p>Power off before plugging a lead. A Dupont plug seats when it slides about 6 mm "
        "down its pin and stops. <b>Y</b>: a line both boards share, through one Dupont Y "
        "(single plug on the Pico, one branch per board). Never 5 V (VBUS, VSYS) on an RC522. "
        "An LED's <b>+</b> lead (red, its resistor inside) to the Pi's pin, its <b>-</b> lead "
        "to its own GND pin as the table says; the button and the piezo either way round.</p>",
        "<div class='cols'><div>",
        "<h2>Pico to the RC522 boards (step 11)</h2>",
        "<table><tr><th>RC522 pin</th><th>Pico pin</th><th></th><th></th></tr>",
        *rows, "</table></div><div>",
        "<h2>Pi to the LEDs, button, piezo and Pico (step 12)</h2>",
        "<table><tr><th>Part's lead</th><th>Pi pin</th><th></th><th></th></tr>",
        *pi_rows, "</table></div></div>",
        f"<h2>Steps and checks (hands-on {total} min in all)</h2>",
        "<table><tr><th></th><th>Step</th><th>min</th><th>Check: go on only when it passes</th>"
        "</tr>",
        *step_rows, "</table>",
        "<h2>Enrollment sheet (step 15): lay the pieces out in this order, the order "
        "<code>gg-arbiter enroll</code> asks in</h2>",
        f"<table class='sheet'>{sheet}</table>",
        "</body></html>",
        "",
    ])


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def print_pdf(source: Path, out: Path) -> None:
    """Print the HTML file ``source`` to ``out`` with headless Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise QuickRefError("chromium is needed: bash setup.sh --dev")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
               f"--user-data-dir={profile}", "--no-pdf-header-footer",
               f"--print-to-pdf={out}", source.as_uri()]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0 or not out.is_file():
        raise QuickRefError(f"chromium failed: {result.stderr.strip()[-2000:]}")


def fresh_html() -> str:
    return page(load_config(), GUIDE.read_text(encoding="utf-8"))


def write() -> None:
    """Write the HTML, print the PDF, record both hashes."""
    text = fresh_html()
    HTML.write_text(text, encoding="utf-8")
    print_pdf(HTML, PDF)
    RECORD.write_text(json.dumps({"html": sha(HTML.read_bytes()), "pdf": sha(PDF.read_bytes())},
                                 indent=2, sort_keys=True) + "\n", encoding="utf-8")


def check() -> list[str]:
    """Problems: the HTML is not what the sources give, or the PDF was not printed from it."""
    problems = []
    if not HTML.is_file() or HTML.read_text(encoding="utf-8") != fresh_html():
        problems.append(f"{HTML.name}: stale (the guide, the pins or the pieces changed)")
    try:
        record = json.loads(RECORD.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return [*problems, f"{RECORD.name}: missing or not JSON"]
    if HTML.is_file() and record.get("html") != sha(HTML.read_bytes()):
        problems.append(f"{PDF.name}: printed from another {HTML.name}")
    if not PDF.is_file() or record.get("pdf") != sha(PDF.read_bytes()):
        problems.append(f"{PDF.name}: not the one {RECORD.name} records")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    def written(_: object) -> gencli.Outcome:
        write()
        return gencli.Outcome((), f"wrote {PDF}")

    code: int = gencli.run(
        argv, doc=__doc__ or "", tool="quickref.py", errors=(QuickRefError,),
        check_help="exit 1 if stale", write=written,
        check=lambda _: gencli.Outcome(tuple(check()), "the quick reference is up to date"))
    return code


if __name__ == "__main__":
    sys.exit(main())
