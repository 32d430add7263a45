"""docs/build/guide.md: timed, checked steps whose hands-on sum is stated right and fits 3 h,
each step's time its counted actions at the per-action figures the guide states, no soldering,
commands and options that exist, pinned firmware that matches the firmware README, links that
resolve."""

from __future__ import annotations

import importlib.util
import math
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
LIMIT_MIN = 3 * 60  # issue 25: at most 3 hands-on hours for someone who never built electronics
TIMES_BEGIN = "<!-- step-times:"
TIMES_END = "<!-- step-times: end -->"
ACTION_ROW = re.compile(r"^\| ([a-z-]+) \| (\d+) \| [^|]+ \|$", re.M)
STEP_ROW = re.compile(r"^\| (\d+)\. ([^|]+) \| ([^|]+) \| (\d+) min \|$", re.M)
TERM = re.compile(r"^(\d+) ([a-z-]+)$")


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


def test_stated_total_is_the_sum_of_the_steps_and_at_most_3_hours(text: str) -> None:
    assert stated_total(text) == hands_on_sum(text)
    assert hands_on_sum(text) <= LIMIT_MIN


def test_the_sum_check_catches_a_changed_step(text: str) -> None:
    doctored = HANDS_ON.sub(lambda m: m.group(0).replace(f"{m.group(1)} min", "99 min"), text,
                            count=1)
    assert doctored != text
    assert stated_total(doctored) != hands_on_sum(doctored)


def estimates(text: str) -> tuple[dict[str, int], dict[int, tuple[str, str, int]]]:
    """(seconds per action, step -> (title, actions, minutes)) from the guide's estimate tables."""
    assert TIMES_BEGIN in text and TIMES_END in text, "the guide has no step-times tables"
    table = text.split(TIMES_BEGIN, 1)[1].split(TIMES_END, 1)[0]
    seconds = {name: int(s) for name, s in ACTION_ROW.findall(table)}
    rows = {int(n): (title.strip(), actions.strip(), int(m))
            for n, title, actions, m in STEP_ROW.findall(table)}
    return seconds, rows


def estimated_minutes(actions: str, seconds: dict[str, int]) -> int:
    """``actions`` ("12 lead + 1 check") at ``seconds`` each, rounded up to the minute."""
    total = 0
    for term in actions.split(" + "):
        match = TERM.match(term.strip())
        assert match is not None, f"not '<count> <action>': {term!r}"
        assert match.group(2) in seconds, f"no per-action figure for {match.group(2)!r}"
        total += int(match.group(1)) * seconds[match.group(2)]
    return math.ceil(total / 60)


def test_each_step_time_is_its_counted_actions_at_the_stated_pace(text: str) -> None:
    seconds, rows = estimates(text)
    assert {"lead", "screw", "sticker", "command", "check"} <= set(seconds)
    found = steps(text)
    assert sorted(rows) == [n for n, _, _ in found], "every step has one row of counted actions"
    for number, title, body in found:
        row_title, actions, minutes = rows[number]
        assert row_title == title, number
        stated = int(HANDS_ON.findall(body)[0])
        assert stated == minutes == estimated_minutes(actions, seconds), (number, title)
        assert "check" in actions, f"step {number}: its check takes time too"


def test_the_estimate_check_catches_a_doctored_count(text: str) -> None:
    seconds, _ = estimates(text)
    doctored = text.replace("| 42 sticker + 42 place + 1 check |",
                            "| 84 sticker + 42 place + 1 check |", 1)
    assert doctored != text
    _, rows2 = estimates(doctored)
    number = next(n for n, (_, a, _) in rows2.items() if a.startswith("84 sticker"))
    assert estimated_minutes(rows2[number][1], seconds) != rows2[number][2]
    with pytest.raises(AssertionError):
        estimated_minutes("3 solder-joint + 1 check", seconds)


def test_the_afternoon_row_of_the_timeline_is_the_sum_of_its_steps(text: str) -> None:
    match = re.search(r"\| steps (\d+) to (\d+): [^|]+ \| (\d+) min \(", text)
    assert match is not None
    first, last, stated = (int(g) for g in match.groups())
    times = {n: int(HANDS_ON.findall(body)[0]) for n, _, body in steps(text)}
    assert stated == sum(times[n] for n in range(first, last + 1))
    assert last == max(times)  # the afternoon ends in the first game


def test_the_flagship_guide_names_no_soldering_iron_and_asks_no_joint(text: str) -> None:
    before_variants = " ".join(text.split("\n## Other variants", 1)[0].split())
    for word in ("soldering iron", "solder"):
        for match in re.finditer(word, before_variants, re.I):
            around = before_variants[max(0, match.start() - 60):match.end() + 40].lower()
            # allowed only where it says none is needed or names a part bought soldered
            assert any(ok in around for ok in ("no soldering iron", "pins soldered",
                                               "already soldered", "soldered at the factory",
                                               "header soldered", "headers soldered")), around
    for gone in ("heat shrink", "heat-shrink", "multimeter", "splice", "wire stripper"):
        allowed = before_variants.lower()
        for said_none in ("no soldering iron, no wire stripper, no multimeter", "without a splice"):
            allowed = allowed.replace(said_none, "")
        assert gone not in allowed, gone
    assert "slot_block.stl" not in text  # the keys variant's block, not the flagship's


def test_the_range_check_agrees_with_the_20_to_40_mm_read_range(text: str) -> None:
    body = next(b for _, title, b in steps(text) if title == "Range check")
    check = " ".join(body.split("**Check:**", 1)[1].split())
    assert "20 to 40 mm" in check
    # a piece 2 cm above the rim must not be required to read nothing: that fails healthy builds
    assert "2 cm above the slot's rim reads nothing" not in text


def test_readme_and_build_index_state_the_guides_sum(text: str) -> None:
    total = hands_on_sum(text)
    for doc in (ROOT / "README.md", DOCS / "index.md"):
        flat = " ".join(doc.read_text(encoding="utf-8").split())
        assert f"{total} hands-on minutes" in flat, doc.name
        assert "4 hands-on hours" not in flat, doc.name
        assert "no soldering iron" in flat, doc.name


def test_the_software_address_names_no_unverifiable_host(text: str) -> None:
    for url in re.findall(r"git clone (\S+)", text):
        assert url.startswith("<"), f"git clone names a host: {url}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "setup.sh" in readme  # the guide's 'the folder that holds setup.sh' is the README's


def _step_actions(text: str, title_start: str) -> dict[str, int]:
    _, rows = estimates(text)
    actions = next(a for title, a, _ in rows.values() if title.startswith(title_start))
    return {m.group(2): int(m.group(1)) for m in (TERM.match(t) for t in actions.split(" + "))
            if m is not None}


def test_the_lead_steps_count_the_leads_the_pin_tables_draw(text: str) -> None:
    spec = importlib.util.spec_from_file_location("hardware_generate_leads",
                                                  ROOT / "hardware" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    harness = sys.modules["harness"]
    from arbiter.app.config import load_config

    readers = harness.flagship_readers()
    labels = readers.connectors["Pico"]["pinlabels"]
    shared = sum("(both)" in label for label in labels)  # one Dupont Y each
    own = len(labels) - shared  # one lead each
    counted = _step_actions(text, "Leads: the Pico")
    assert counted.get("y-lead", 0) == shared and counted.get("lead", 0) == own
    pi = harness.flagship_pi(load_config(), module.HEADER)
    leads = sum(1 for c in pi.connections if next(iter(c[0])) in ("Pi", "Pi GND"))
    assert _step_actions(text, "Leads: the Pi to")["lead"] == leads


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
    data = _parts()
    parts, pis = data["part"], data["pi"]
    assert isinstance(parts, list) and isinstance(pis, list)
    own = [line for pi in pis for line in pi.get("line", [])]  # e.g. the Zero 2 W's screws
    screws = " ".join(p["number"] for p in [*parts, *own]
                      if p["name"].startswith("Screw")
                      and (variant is None or "qty" not in p or variant in p["qty"]))
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
    assert wiring is not None
    order = ", ".join(harness.RC522_PINS)
    assert f"its order {order}" in flat
    assert f"3V3(OUT), pin {harness.PICO_3V3}" in flat
    assert wiring.PICO_HEADER[harness.PICO_3V3] == "3V3(OUT)"
    assert "Dupont Y" in flat  # the one shared line, without a splice


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
