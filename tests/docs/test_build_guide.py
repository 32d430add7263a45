"""docs/build/guide.md: timed, checked steps whose hands-on sum is stated right and fits 4 h,
commands and options that exist, pinned firmware that matches the firmware README, links that
resolve."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tests.support.cli_docs import unknown_commands

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "build"
GUIDE = DOCS / "guide.md"
STEP = re.compile(r"^### (\d+)\. (.+)$", re.M)
HANDS_ON = re.compile(r"^\*Hands-on: (\d+) min\. Waiting: [^*]+\*$", re.M)
TOTAL = re.compile(r"\*\*Hands-on total: (\d+) min \((\d+) h (\d+) min\)\*\*")
LIMIT_MIN = 4 * 60  # the flagship's promise: at most 4 hands-on hours


def steps(text: str) -> list[tuple[int, str, str]]:
    """(number, title, body) of every step."""
    found = list(STEP.finditer(text))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else text.find("\n## ", match.end())
        out.append((int(match.group(1)), match.group(2), text[match.end():end]))
    return out


def hands_on_sum(text: str) -> int:
    total = 0
    for number, title, body in steps(text):
        minutes = HANDS_ON.findall(body)
        assert len(minutes) == 1, f"step {number} ({title}) needs one hands-on line"
        total += int(minutes[0])
    return total


def stated_total(text: str) -> int:
    match = TOTAL.search(text)
    assert match is not None, "the guide states no hands-on total"
    minutes, h, m = (int(g) for g in match.groups())
    assert h * 60 + m == minutes, "the total's hours and minutes disagree"
    return minutes


@pytest.fixture(scope="module")
def text() -> str:
    return GUIDE.read_text(encoding="utf-8")


def test_steps_are_numbered_timed_and_checked(text: str) -> None:
    found = steps(text)
    assert [n for n, _, _ in found] == list(range(1, len(found) + 1))
    assert len(found) >= 10
    for number, title, body in found:
        assert "**Check:**" in body, f"step {number} ({title}) ends in no check"
        assert body.rstrip().rfind("**Check:**") > body.find("*Hands-on"), number


def test_stated_total_is_the_sum_of_the_steps_and_at_most_4_hours(text: str) -> None:
    assert stated_total(text) == hands_on_sum(text)
    assert hands_on_sum(text) <= LIMIT_MIN


def test_the_sum_check_catches_a_changed_step(text: str) -> None:
    doctored = text.replace("*Hands-on: 40 min.", "*Hands-on: 55 min.", 1)
    assert doctored != text
    assert stated_total(doctored) != hands_on_sum(doctored)


def test_the_guide_covers_the_bring_up(text: str) -> None:
    for needed in ("Raspberry Pi Imager", "Bookworm", "64-bit", "hostname", "Enable SSH",
                   "Wi-Fi", "sudo bash setup.sh --service --reader mcu",
                   "sudo systemctl stop gg-arbiter", "/opt/gg-arbiter/venv/bin/mpremote",
                   "gg-arbiter enroll", "gg-arbiter selftest", "Zero 2 W", "PEP 668"):
        assert needed in text, needed


def test_named_commands_and_setup_options_exist(text: str) -> None:
    assert unknown_commands(text) == []
    setup = (ROOT / "setup.sh").read_text(encoding="utf-8")
    kinds = re.search(r'GG_READER_KINDS="([^"]+)"',
                      (ROOT / "scripts" / "appliance" / "appliance.sh").read_text(encoding="utf-8"))
    assert kinds is not None
    for line in re.findall(r"setup\.sh ([^`\n]+)", text):
        for option in re.findall(r"--[a-z]+", line):
            assert f"{option})" in setup, option
        reader = re.search(r"--reader (\S+)", line)
        if reader:
            assert reader.group(1) in kinds.group(1).split()


def test_pinned_firmware_matches_the_firmware_readme(text: str) -> None:
    readme = (ROOT / "firmware" / "pico" / "README.md").read_text(encoding="utf-8")
    pinned = re.findall(r"`(RPI_PICO\w*-\d{8}-v[\d.]+\.uf2)`", text)
    assert {p.split("-")[0] for p in pinned} == {"RPI_PICO", "RPI_PICO_W", "RPI_PICO2"}
    for name in pinned:
        assert f"`{name}`" in readme, name
    # one release for all three
    assert len({p.split("-", 1)[1] for p in pinned}) == 1
    # main.py is copied as it is: its readers must be the flagship's RC522s
    main = (ROOT / "firmware" / "pico" / "main.py").read_text(encoding="utf-8")
    assert re.search(r'^READER = "rc522"', main, re.M)
    assert "cp firmware/pico/main.py :main.py" in text


def test_relative_links_resolve() -> None:
    for doc in (GUIDE, DOCS / "index.md", DOCS / "wiring.md", ROOT / "hardware" / "README.md"):
        body = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", body):
            if target.startswith(("http://", "https://")):
                continue
            assert (doc.parent / target).exists(), f"{doc.name}: {target}"


def test_guide_anchor_to_the_parts_list_exists(text: str) -> None:
    anchor = re.search(r"\(index\.md#([^)]+)\)", text)
    assert anchor is not None
    readme = (DOCS / "index.md").read_text(encoding="utf-8")
    headings = re.findall(r"^#+ (.+)$", readme, re.M)
    # Python-Markdown's toc slug (MkDocs), of the heading's text without its code marks
    slugs = {re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", h.replace("`", "")).strip().lower())
             for h in headings}
    assert anchor.group(1) in slugs


def _parts() -> dict[str, object]:
    import tomllib

    with (ROOT / "hardware" / "parts.toml").open("rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize(("doc", "variant"), [("guide.md", "rc522"), ("index.md", None)])
def test_screw_sizes_written_in_the_steps_are_in_the_parts_list(doc: str,
                                                                variant: str | None) -> None:
    parts = _parts()["part"]
    assert isinstance(parts, list)
    screws = " ".join(p["number"] for p in parts
                      if p["name"].startswith("Screw") and (variant is None or variant in p["qty"]))
    body = (DOCS / doc).read_text(encoding="utf-8")
    steps_text = body.split("<!-- parts-list: end -->")[-1]  # the hand-written part
    sizes = set(re.findall(r"\bM\d(?:\.\d)? x \d+\b", steps_text))
    assert sizes, doc
    for size in sizes:
        assert size in screws, f"{doc} names {size}, which the parts list does not buy"


def test_pins_written_in_the_guide_match_the_pin_tables(text: str) -> None:
    spec = importlib.util.spec_from_file_location("hardware_generate_guide",
                                                  ROOT / "hardware" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    harness, wiring = sys.modules["harness"], sys.modules["wiring"]
    flat = " ".join(text.split())  # the Markdown's line breaks do not matter
    order = ", ".join(harness.RC522_PINS)
    assert f"its order {order}" in flat
    assert f"3V3(OUT), pin {harness.PICO_3V3}" in flat
    assert wiring.PICO_HEADER[harness.PICO_3V3] == "3V3(OUT)"
    assert f"{wiring.LED_RESISTOR} resistor" in flat
    pin = harness.PICO_3V3
    assert f"pin {pin} against {pin - 1} and {pin + 1}" in flat


def test_magnet_figure_draws_the_one_rule() -> None:
    # As built every magnet's marked (red) face is its top; gluing a key upside down
    # (the right-hand panel) the marked face is the bottom, going into the pocket first.
    import xml.etree.ElementTree as ET

    svg = "{http://www.w3.org/2000/svg}"
    root = ET.parse(DOCS / "img" / "magnet-polarity.svg").getroot()
    width = float(root.get("width") or 0)
    magnets = [r for r in root.iter(f"{svg}rect") if r.get("fill") == "#90a4ae"]
    marks = [ln for ln in root.iter(f"{svg}line") if ln.get("stroke") == "#d32f2f"]
    assert len(magnets) == len(marks) == 6  # 2 key + 2 floor as built, 2 key when gluing
    for rect, mark in zip(magnets, marks, strict=True):
        top = float(rect.get("y") or 0)
        bottom = top + float(rect.get("height") or 0)
        y = float(mark.get("y1") or 0)
        as_built = float(rect.get("x") or 0) < width / 2
        assert y == pytest.approx(top if as_built else bottom)
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "](img/magnet-polarity.svg)" in index
    assert "marked face **up**" in index
