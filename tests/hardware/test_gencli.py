"""hardware/gencli.py: the write / --check command line every generator shares."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hardware"))

import gencli


class _Missing(RuntimeError):
    pass


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], **kw: object) -> tuple[int, str, str]:
    calls: list[str] = []

    def write(args: argparse.Namespace) -> gencli.Outcome:
        calls.append("write")
        return gencli.Outcome((), "wrote 3 files")

    def check(args: argparse.Namespace) -> gencli.Outcome:
        calls.append("check")
        return gencli.Outcome(("a.png: stale", "b.png: stale"), "all up to date")

    actions = {"write": write, "check": check, **kw}
    code = gencli.run(argv, doc="Make the pictures.\n\nmore", tool="pics.py",
                      errors=(_Missing,), **actions)
    out, err = capsys.readouterr()
    return code, out + "|".join(calls), err


def test_write_prints_its_summary_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([], capsys) == (0, "wrote 3 files\nwrite", "")


def test_check_names_each_problem_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--check"], capsys)
    assert (code, out) == (1, "a.png: stale\nb.png: stale\ncheck")


def test_a_clean_check_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--check"], capsys,
                        check=lambda _: gencli.Outcome((), "all up to date"))
    assert (code, out) == (0, "all up to date\n")


def test_a_generator_error_exits_2_naming_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(_: argparse.Namespace) -> gencli.Outcome:
        raise _Missing("openscad is needed")

    code, out, err = _run([], capsys, write=broken)
    assert (code, out, err) == (2, "", "pics.py: openscad is needed\n")


def test_a_generators_own_option_reaches_both_actions(
        capsys: pytest.CaptureFixture[str]) -> None:
    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--parts", default="parts.toml")

    seen = []

    def check(args: argparse.Namespace) -> gencli.Outcome:
        seen.append(args.parts)
        return gencli.Outcome((), "ok")

    code, _, _ = _run(["--check", "--parts", "other.toml"], capsys, check=check, options=options)
    assert (code, seen) == (0, ["other.toml"])
