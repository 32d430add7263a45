"""gg-arbiter selftest --range on the simulated Pico (the real McuReader on a pty), its
figures derived from the stated read-range model (arbiter/drivers/readrange.py):
reach 30 mm at 33 dB, 10 ** (dB / 60) per dB, at most 45 mm, floor 3 mm over the antenna."""

from __future__ import annotations

import io
import math
import os
import re
import signal
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.app.config import Config, load_config
from arbiter.app.errors import CheckStoppedError
from arbiter.app.range_console import run_range_check, terminal_input
from arbiter.device.rangecheck import HEIGHTS_MM
from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readrange import ReadRangeModel
from tests.support.spawn import Session
from tests.support.waiting import WAIT


def _config(tmp_path: Path, kind: str = "mcu", port: str = "/dev/null") -> Config:
    config = load_config(None, data_dir=tmp_path / "data")
    return replace(config, reader=replace(config.reader, kind=kind, mcu_port=port))


def _expected_first_read(gain: int, floor: float = 3.0) -> int:
    reach = min(30 * 10 ** ((gain - 33) / 60), 45)
    return max(h for h in HEIGHTS_MM if h + floor <= reach)


@pytest.mark.parametrize("gain", [18, 33, 43])
def test_sim_range_check_reports_where_the_model_reads(tmp_path: Path, gain: int) -> None:
    lines: list[str] = []
    code = run_range_check(_config(tmp_path), sim=True, gain_db=gain, print_fn=lines.append)
    first = _expected_first_read(gain)
    assert code == 0, lines
    assert f"ATTACKER: first reads {first} mm above its floor; the DEFENDER slot never reads it" \
        in lines
    assert f"DEFENDER: first reads {first} mm above its floor; the ATTACKER slot never reads it" \
        in lines
    assert lines[-1] == "PASS"


def test_sim_range_check_finds_a_cross_read_and_lowers_the_gain(tmp_path: Path) -> None:
    # Antennas 40 mm apart: a seated sticker is hypot(40, 3) = 40.1 mm from the other
    # antenna, inside the 44 mm reach at 43 dB, outside the 36 mm at 38 dB.
    assert 30 * 10 ** (5 / 60) < math.hypot(40, 3) < 30 * 10 ** (10 / 60)
    model = ReadRangeModel(spacing_mm=40)
    lines: list[str] = []
    assert run_range_check(_config(tmp_path), sim=True, gain_db=43, model=model,
                           print_fn=lines.append) == 1
    assert any("CROSS-READ" in line for line in lines)
    assert any("lower it to 38 dB" in line for line in lines) and lines[-1] == "FAIL"
    lines.clear()
    assert run_range_check(_config(tmp_path), sim=True, gain_db=38, model=model,
                           print_fn=lines.append) == 0


def test_range_check_with_a_person_holding_the_sticker(tmp_path: Path) -> None:
    """Not simulated: the configured port is a FakePico; the 'person' places the sticker
    where each prompt says before pressing Enter."""
    pico = FakePico()
    try:
        prompts: list[str] = []

        def person(prompt: str) -> str:
            prompts.append(prompt)
            found = re.search(r"(\d+) mm above the (ATTACKER|DEFENDER) slot", prompt)
            pico.stickers.clear()
            if found:
                pico.place(found.group(2)[0], "04A1B2C3D48E80", float(found.group(1)))
            else:
                pico.place("A", None)
            return ""

        lines: list[str] = []
        # the FakePico answers at once: a short hold is enough (a person gets 0.8 s)
        code = run_range_check(_config(tmp_path, port=pico.path), input_fn=person,
                               print_fn=lines.append, hold_seconds=0.2)
        assert code == 0, lines
        assert prompts[0] == "Empty both slots, then Enter: "
        # the heights down to where it first reads (20 mm), then seated, per slot
        assert len(prompts) == 1 + 2 * (len([h for h in HEIGHTS_MM if h >= 20]) + 1)
        assert "ATTACKER: first reads 20 mm above its floor; the DEFENDER slot never reads it" \
            in lines
        assert pico.gain_db == 33
    finally:
        pico.unplug()


def test_range_check_fails_when_the_pico_keeps_the_old_firmware(tmp_path: Path) -> None:
    pico = FakePico(rc522=False)  # answers ?, never GAIN: a main.py from before the setting
    try:
        lines: list[str] = []
        code = run_range_check(_config(tmp_path, port=pico.path), print_fn=lines.append,
                               input_fn=lambda _p: "", answer_seconds=0.5)
        assert code == 1 and lines[-1] == "FAIL"
        assert any("did not confirm the gain" in line for line in lines)
    finally:
        pico.unplug()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gain", "30"], "18, 23, 33, 38, 43, 48"),
        (["--kind-keys"], "the range check is for the RC522 flagship"),
        (["--no-range", "--gain", "38"], "--gain is for the range check"),
    ],
)
def test_selftest_range_errors_exit_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    argv: list[str], message: str,
) -> None:
    config = tmp_path / "config.toml"
    kind = "keys-gpio" if "--kind-keys" in argv else "mcu"
    config.write_text(f'[reader]\nkind = "{kind}"\n', encoding="utf-8")
    args = [a for a in argv if a not in ("--kind-keys", "--no-range")]
    what = [] if "--no-range" in argv else ["--range"]
    code = main(["selftest", *what, "--sim", "--config", str(config),
                 "--data", str(tmp_path / "data"), *args])
    assert code == 2 and message in capsys.readouterr().err


def test_selftest_range_sim_command_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[reader]\nkind = "mcu"\n', encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main(["selftest", "--range", "--sim", "--config", str(config),
                 "--data", str(tmp_path / "data")])
    out = capsys.readouterr().out
    assert code == 0 and out.rstrip().endswith("PASS")
    assert "gain: keep 33 dB (reader.rx_gain_db = 33)" in out


def test_range_check_of_a_pico_that_is_not_there_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[reader]\nkind = "mcu"\nmcu_port = "{tmp_path}/no-pico"\n',
                      encoding="utf-8")
    code = main(["selftest", "--range", "--config", str(config), "--data", str(tmp_path / "d")])
    assert code == 2 and "cannot be opened" in capsys.readouterr().err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_signal_at_a_prompt_ends_the_range_check_cleanly(
        tmp_path: Path, signum: signal.Signals) -> None:
    """The real command waits at its first prompt for the builder's Enter; Ctrl-C or
    SIGTERM (the dispatcher's stop requests) ends it there: the board let go, one line
    said, exit 1 (the check did not finish), no traceback."""
    pico = FakePico()
    config = tmp_path / "config.toml"
    config.write_text(f'[reader]\nkind = "mcu"\nmcu_port = "{pico.path}"\n', encoding="utf-8")
    session = Session(["selftest", "--range", "--config", str(config),
                       "--data", str(tmp_path / "data")])
    try:
        # printed just before the prompt ("Empty both slots, then Enter: ") waits
        session.expect("Heights are the sticker's height")
        session.proc.send_signal(signum)
        code = session.proc.wait(timeout=3 * WAIT)
        code, output = session.finish()
    finally:
        session.kill()
        pico.unplug()
    assert code == 1, output
    assert "range check stopped before its end" in output and "Traceback" not in output
    assert "PASS" not in output and "FAIL" not in output


def test_a_terminal_prompt_returns_the_typed_line_and_ends_on_a_stop() -> None:
    read_end, write_end = os.pipe()
    stopping = threading.Event()
    out = io.StringIO()
    with os.fdopen(read_end, "r") as stream:
        ask = terminal_input(stopping, stream, out)
        os.write(write_end, b"\n")
        assert ask("Empty both slots, then Enter: ") == "\n"
        # nothing typed: only the stop ends the wait (set while the prompt is shown)

        class _Screen(io.StringIO):
            def write(self, text: str) -> int:
                stopping.set()
                return super().write(text)

        ask = terminal_input(stopping, stream, _Screen())
        with pytest.raises(CheckStoppedError):
            ask("  hold the sticker 50 mm above the ATTACKER slot's floor, then Enter: ")
    os.close(write_end)
    assert out.getvalue() == "Empty both slots, then Enter: "


def test_the_end_of_input_at_a_prompt_stops_the_check(tmp_path: Path) -> None:
    pico = FakePico()
    try:
        read_end, write_end = os.pipe()
        os.close(write_end)  # a script that ends before the check does
        lines: list[str] = []
        with os.fdopen(read_end, "r") as stream:
            ask = terminal_input(threading.Event(), stream, io.StringIO())
            code = run_range_check(_config(tmp_path, port=pico.path), input_fn=ask,
                                   print_fn=lines.append, hold_seconds=0.2)
        assert code == 1
        assert lines[-1] == "range check stopped before its end: nothing was changed; run it again"
    finally:
        pico.unplug()
