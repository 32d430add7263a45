"""The tests mirror the source: each folder of tests has its counterpart in the tree.

``tests/<pkg>`` tests ``arbiter/<pkg>`` (``tests/web/<app>`` tests ``web/<app>``), or a
top-level folder of the same name (``docs``, ``firmware``); the few folders whose name
cannot be the source's are listed in ``ALIASES`` with the folder they test.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

#: Test folders named otherwise than what they test, and why.
ALIASES = {
    # Accessibility of both apps' pages (axe-core, with its own package.json).
    "a11y": "web",
}
#: Folders of tests that test nothing by themselves, and folders installed into tests.
HELPERS = {"support", "node_modules", "__pycache__"}


def counterpart(test_dir: Path, root: Path = ROOT) -> Path | None:
    """The source folder ``test_dir`` (a folder under ``root / "tests"``) mirrors, if any."""
    parts = test_dir.relative_to(root / "tests").parts
    first = ALIASES.get(parts[0], parts[0])
    for base in (root / "arbiter", root):
        candidate = base.joinpath(first, *parts[1:])
        if candidate.is_dir():
            return candidate
    return None


def folders_with_tests(tests: Path = TESTS) -> list[Path]:
    """Every folder under ``tests`` that holds a test module, helpers left out."""
    return sorted(
        {path.parent for path in tests.rglob("test_*.py")}
        - {tests}
        - {d for d in tests.rglob("*") if d.is_dir() and HELPERS & set(d.relative_to(tests).parts)}
    )



def test_every_test_folder_mirrors_a_source_folder() -> None:
    folders = folders_with_tests()
    assert {f.relative_to(TESTS).as_posix() for f in folders} >= {"rules", "web/table", "web/hub"}
    orphans = [f.relative_to(ROOT).as_posix() for f in folders if counterpart(f) is None]
    assert not orphans, f"test folders with no source counterpart: {orphans}"


def test_every_alias_names_a_folder_that_exists() -> None:
    for test_dir, source in ALIASES.items():
        assert (TESTS / test_dir).is_dir(), f"ALIASES names tests/{test_dir}, which is gone"
        assert (ROOT / source).is_dir(), f"tests/{test_dir} mirrors {source}/, which is gone"


def test_the_check_finds_an_orphan(tmp_path: Path) -> None:
    """A test folder named after no source folder is caught; its siblings are not."""
    (tmp_path / "arbiter" / "rules").mkdir(parents=True)
    (tmp_path / "web" / "kit").mkdir(parents=True)
    for folder in ("rules", "web/kit", "hubweb", "web/kitt", "support/x"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
        (tmp_path / "tests" / folder / "test_a.py").write_text("")
    (tmp_path / "tests" / "tournament" / "golden").mkdir(parents=True)  # data: no test module
    found = folders_with_tests(tmp_path / "tests")
    orphans = [f.relative_to(tmp_path).as_posix() for f in found
               if counterpart(f, tmp_path) is None]
    assert orphans == ["tests/hubweb", "tests/web/kitt"]
    assert len(found) == 4
