"""tests/support/kinds.py: each test carries the markers of what it runs, so
``pytest -m "not slow"`` leaves out every broker, browser, crash and child-process test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
         *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_each_kind_is_found_from_what_the_test_runs() -> None:
    broker = _collected("-m", "broker", "tests/hub/test_hub_kills.py", "tests/fleet/test_acl.py",
                        "tests/rules")
    crash = _collected("-m", "crash", "tests/hub/test_hub_kills.py", "tests/storage")
    browser = _collected("-m", "browser", "tests/web/table/test_web_browser.py",
                         "tests/web/table/test_web_api.py")
    quick = _collected("-m", "not slow", "tests/hub/test_hub_kills.py", "tests/rules",
                       "tests/app/test_commands.py", "tests/web/table/test_web_browser.py")
    kills = _collected("tests/hub/test_hub_kills.py")
    # The kill tests start a broker (through venue()) and kill it, the hub and a table.
    assert kills and kills <= broker and kills <= crash
    assert any("test_acl.py" in test for test in broker)  # a broker fixture
    assert not any("tests/rules" in test for test in broker)
    # The power-cut explorer runs under strace; the journal's own test kills a child.
    assert any("test_crash_states.py" in test for test in crash)
    assert any("test_journal_survives_kill_9" in test for test in crash)
    assert any("test_journal_first_start_opens_game_one" in test for test in
               _collected("-m", "not crash", "tests/storage/test_journal.py"))
    # The browser fixture's tests, and none of the in-process API tests.
    assert browser and all("test_web_browser.py" in test for test in browser)
    # The quick loop keeps the pure rules and leaves out children, brokers and browsers.
    assert any("tests/rules" in test for test in quick)
    assert not any(name in test for test in quick for name in
                   ("test_hub_kills.py", "test_web_browser.py", "::test_commands_set_pin"))
