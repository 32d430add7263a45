"""The docs site builds with `mkdocs build --strict`, and that build refuses what it should.

The site (mkdocs.yml over docs/) is built into a temporary folder, never into the
checkout. The refusals are shown on a copy of the site with one fault added: a page
left out of the nav, a link to a missing page, a link to a missing heading. Each
must fail the strict build, naming the fault, or the green build above proves nothing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import missing

ROOT = Path(__file__).resolve().parents[2]
# Material 9.7+ prints a banner about MkDocs 2.0 on every build; it is not a warning
# of the build, and hiding it keeps a failure's output readable.
ENV = dict(os.environ, NO_MKDOCS_2_WARNING="1")


def _require_mkdocs() -> None:
    """In CI a missing docs tool is a broken install: fail. On a laptop: skip."""
    for module in ("mkdocs", "material"):
        if importlib.util.find_spec(module) is None:
            missing(f"{module} is not installed (mkdocs-material)")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    _require_mkdocs()
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent, env=ENV, capture_output=True, text=True, timeout=240,
    )


def _copy_of_the_site(tmp_path: Path) -> Path:
    """mkdocs.yml, docs/ and README.md (the home page takes text from it) in ``tmp_path``."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copy2(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copy2(ROOT / "README.md", root / "README.md")
    return root


def _nav_pages() -> list[str]:
    """Every page the nav of mkdocs.yml names (``docs/``-relative paths)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    return re.findall(r"^\s*- (?:[^\n]*?: )?([\w./-]+\.md)\s*$", nav, flags=re.M)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as committed, built once for this module's tests."""
    out = tmp_path_factory.mktemp("docs") / "site"
    proc = _build(ROOT / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_site_builds_strict_with_every_page_in_the_nav(site: Path) -> None:
    pages = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(_nav_pages()) == pages
    for page in pages:
        stem = page.removesuffix(".md").removesuffix("index").rstrip("/")
        built = site / stem / "index.html"
        assert built.is_file(), f"{page} was not built as {built}"


def test_site_loads_no_web_font(site: Path) -> None:
    fetched = [
        str(html.relative_to(site)) for html in site.rglob("*.html")
        if "fonts.googleapis.com" in html.read_text(encoding="utf-8")
        or "fonts.gstatic.com" in html.read_text(encoding="utf-8")
    ]
    assert not fetched, f"pages that load Google Fonts: {fetched}"


def test_site_home_page_takes_its_commands_from_readme(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", home).replace("&amp;", "&")
    assert "bash setup.sh && .venv/bin/gg-arbiter run" in text
    assert ".venv/bin/ruff check . && .venv/bin/mypy && .venv/bin/pytest -q -n 2" in text


def test_site_build_fails_on_a_page_left_out_of_the_nav(tmp_path: Path) -> None:
    root = _copy_of_the_site(tmp_path)
    (root / "docs" / "play" / "orphan.md").write_text("# Orphan\n\nIn no nav.\n")
    proc = _build(root / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0
    assert "orphan.md" in proc.stdout + proc.stderr


@pytest.mark.parametrize(("link", "named"), [
    ("See [nowhere](no-such-page.md).", "no-such-page.md"),  # a missing page
    ("See [the signals](signals.md#no-such-heading).", "no-such-heading"),  # heading
    ("See [the parts](../../hardware/parts.toml).", "parts.toml"),  # out of docs/
])
def test_site_build_fails_on_a_bad_link(tmp_path: Path, link: str, named: str) -> None:
    root = _copy_of_the_site(tmp_path)
    page = root / "docs" / "play" / "rules.md"
    page.write_text(page.read_text() + f"\n{link}\n")
    proc = _build(root / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0
    assert named in proc.stdout + proc.stderr


def test_site_is_not_committed() -> None:
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "site/index.html"], cwd=ROOT, capture_output=True,
    )
    assert ignored.returncode == 0, ".gitignore does not keep the built site/ out"
    tracked = subprocess.run(
        ["git", "ls-files", "site"], cwd=ROOT, capture_output=True, text=True, check=True,
    )
    assert tracked.stdout == "", f"built site files are committed: {tracked.stdout}"
