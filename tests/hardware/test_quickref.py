"""hardware/quickref.py: the one-page quick reference (wiring, checklist, enrollment sheet) is
what the pin tables, the guide and the rules give today, and its PDF was printed from it."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "hardware"


def _load() -> ModuleType:
    if str(HARDWARE) not in sys.path:
        sys.path.insert(0, str(HARDWARE))
    spec = importlib.util.spec_from_file_location("hardware_quickref", HARDWARE / "quickref.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


qr = _load()


def test_the_committed_page_is_what_the_sources_give() -> None:
    assert qr.check() == [], "stale quick reference: run .venv/bin/python hardware/quickref.py"


def test_the_pdf_is_one_page() -> None:
    pdf = qr.PDF.read_bytes()
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == 1


def test_a_changed_guide_makes_it_stale() -> None:
    guide = qr.GUIDE.read_text(encoding="utf-8")
    doctored = guide.replace("### 17. The first game", "### 17. The first match", 1)
    assert doctored != guide
    config = qr.load_config()
    assert qr.page(config, doctored) != qr.page(config, guide)


def test_every_lead_and_step_and_piece_is_on_the_page() -> None:
    from arbiter.rules.army import all_physical_pieces

    page = qr.HTML.read_text(encoding="utf-8")
    h = qr.harness.flagship_readers()
    for pin in h.connectors["Pico"]["pins"]:
        assert f"Pico pin {pin} (" in page, pin
    wires = qr.reader_wires()
    shared = [w for w in wires if w.shared]
    # every shared Pico pin reaches both boards: one Y per shared line
    labels = h.connectors["Pico"]["pinlabels"]
    assert len(shared) == 2 * sum("(both)" in label for label in labels)
    assert {w.a.split()[0] for w in wires} == {"ATTACKER", "DEFENDER"}
    pi = qr.harness.flagship_pi(qr.load_config(), qr.generate.HEADER)
    for pin in pi.connectors["Pi GND"]["pins"]:  # each - lead's own GND pin, named
        assert page.count(f"Pi pin {pin} (GND)") == 1, pin
    for step in qr.checklist(qr.GUIDE.read_text(encoding="utf-8")):
        assert f"{step.number}. " in page and step.check, step.number
    names = [str(p) for p in all_physical_pieces()]
    assert len(names) == 42
    positions = [page.index(f"<br>{n}</td>") for n in names]
    assert positions == sorted(positions)  # the sheet keeps the enrollment order
    assert "](quickref.pdf)" in (ROOT / "docs" / "build" / "guide.md").read_text(encoding="utf-8")
