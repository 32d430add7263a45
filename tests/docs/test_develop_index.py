"""docs/develop/index.md's "Where things are" names every package, root module and
top-level folder of the tree, each with a page that explains it, and nothing that is gone."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "develop" / "index.md"
#: The code's root packages: each of their packages, and their own modules, get a row.
PACKAGES = ("arbiter", "web")


def rows(page: str) -> dict[str, str]:
    """The table's rows by the path in their first cell (the rest of the row as text)."""
    section = page.split("## Where things are", 1)[1]
    found = re.findall(r"^\| `([^`]+)` \|(.*)$", section, flags=re.M)
    return {path: rest for path, rest in found}


def _ignored(root: Path) -> list[str]:
    """The folder patterns .gitignore leaves out (``.venv/``, ``/site/``...)."""
    lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [ln.strip().strip("/") for ln in lines if ln.strip().endswith("/")]


def expected(root: Path) -> set[str]:
    """Every path the table must name, from the tree."""
    names = set()
    for package in PACKAGES:
        base = root / package
        names |= {f"{p.parent.relative_to(root).as_posix()}/"
                  for p in base.rglob("__init__.py") if p.parent != base}
        names |= {f"{package}/{p.name}" for p in base.glob("*.py") if p.name != "__init__.py"}
    ignored = _ignored(root)
    names |= {
        f"{d.name}/" for d in root.iterdir()
        if d.is_dir() and not d.name.startswith(".") and d.name not in PACKAGES
        and not any(fnmatch.fnmatch(d.name, pattern) for pattern in ignored)
    }
    return names


def check(root: Path, page: str) -> list[str]:
    """What is wrong with the table: rows missing, rows for nothing, rows with no page."""
    named = rows(page)
    problems = [f"missing from the page: {p}" for p in sorted(expected(root) - set(named))]
    problems += [f"named but not in the tree: {p}" for p in sorted(named)
                 if not (root / p).exists()]
    problems += [f"no page linked for {p}" for p, rest in sorted(named.items())
                 if not re.search(r"\]\([\w./#-]+\)", rest)]
    return problems


def test_where_things_are_matches_the_tree() -> None:
    problems = check(ROOT, PAGE.read_text(encoding="utf-8"))
    assert not problems, "docs/develop/index.md, Where things are:\n" + "\n".join(problems)


def test_the_check_sees_a_new_package_a_gone_one_and_a_row_without_a_page(
    tmp_path: Path,
) -> None:
    for folder in ("arbiter/rules", "arbiter/hub", "web/kit", "bench", ".ci", "site"):
        (tmp_path / folder).mkdir(parents=True)
    for package in ("arbiter", "arbiter/rules", "arbiter/hub", "web", "web/kit"):
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "arbiter" / "wire.py").write_text("")
    (tmp_path / ".gitignore").write_text("/site/\n*.egg-info/\n")
    page = (
        "## Where things are\n\n| path | holds | explained in |\n|---|---|---|\n"
        "| `arbiter/rules/` | the game | [Rules](../play/rules.md) |\n"
        "| `arbiter/fleet/` | gone | [Fleet](fleet.md) |\n"
        "| `arbiter/wire.py` | the wire format | no page |\n"
        "| `web/kit/` | shared | [Kit](kit.md) |\n"
        "| `bench/` | benchmarks | [Benchmarks](benchmarks.md) |\n"
    )
    assert check(tmp_path, page) == [
        "missing from the page: arbiter/hub/",
        "named but not in the tree: arbiter/fleet/",
        "no page linked for arbiter/wire.py",
    ]
