"""docs/develop/architecture.md stays true to the tree, the layer contract and the threads."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOC_PATH = ROOT / "docs" / "develop" / "architecture.md"
DOC = DOC_PATH.read_text()


@functools.cache
def _import_map() -> ModuleType:
    """scripts/import_map.py (scripts/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("import_map", ROOT / "scripts" / "import_map.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_architecture_doc_includes_the_generated_import_map() -> None:
    """The diagram and table are the generator's output, committed, included, not stale."""
    import_map = _import_map()
    assert '--8<-- "docs/develop/import-map.txt"' in DOC
    committed = (ROOT / "docs" / "develop" / "import-map.txt").read_text(encoding="utf-8")
    fresh = import_map.render(import_map.Contracts.from_pyproject(ROOT / "pyproject.toml"))
    assert committed == fresh, "docs/develop/import-map.txt is stale: python scripts/import_map.py"
    assert "```mermaid" not in DOC.split("## The path of a challenge")[0], (
        "a hand-drawn layer diagram beside the generated one"
    )


def test_every_package_has_its_layer() -> None:
    """A new package of the arbiter or the web goes into the layers contract, so the diagram
    and the table show it (only the standard-library modules at the root stay outside)."""
    import_map = _import_map()
    contracts = import_map.Contracts.from_pyproject(ROOT / "pyproject.toml")
    outside = import_map.unplaced(contracts)
    assert [m for m in outside if (ROOT / m.replace(".", "/")).is_dir()] == []
    assert "arbiter.errors" in outside


def test_the_import_map_follows_the_contracts(tmp_path: Path) -> None:
    """Read from the contracts, not drawn: forbidding an import takes it out of the table."""
    import_map = _import_map()
    contracts = import_map.Contracts.from_pyproject(ROOT / "pyproject.toml")
    # The contracts' own words: the kit sits above the device but is forbidden it.
    assert not contracts.may_import("web.kit", "arbiter.device")
    assert not contracts.may_import("arbiter.fleet", "arbiter.drivers")
    assert contracts.may_import("web.kit", "arbiter.storage")
    assert not contracts.may_import("arbiter.rules", "arbiter.storage")
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    tighter = text.replace('source_modules = ["web.kit"]\nforbidden_modules = [\n',
                           'source_modules = ["web.kit"]\nforbidden_modules = [\n'
                           '    "arbiter.storage",\n', 1)
    assert tighter != text
    (tmp_path / "pyproject.toml").write_text(tighter, encoding="utf-8")
    changed = import_map.Contracts.from_pyproject(tmp_path / "pyproject.toml")
    assert not changed.may_import("web.kit", "arbiter.storage")
    assert import_map.render(changed) != import_map.render(contracts)


def test_architecture_doc_names_only_files_that_exist() -> None:
    named = set(re.findall(r"`((?:arbiter|web)/[\w/]+\.(?:py|js|toml))`", DOC))
    assert named, "the doc names no file"
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, f"{DOC_PATH.name} names missing files: {missing}"


def test_architecture_doc_linked_from_readme() -> None:
    assert "(docs/develop/architecture.md)" in (ROOT / "README.md").read_text()


def _code() -> dict[str, ast.Module]:
    """Every module of the arbiter and its web apps, parsed, by path."""
    files = sorted((ROOT / "arbiter").rglob("*.py")) + sorted((ROOT / "web").rglob("*.py"))
    return {str(f.relative_to(ROOT)): ast.parse(f.read_text(), str(f)) for f in files}


def _called(node: ast.Call, name: str) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == name) or (
        isinstance(func, ast.Name) and func.id == name
    )


def _literal_parts(node: ast.expr) -> list[str]:
    """The fixed text of a thread's name: a string, or an f-string's literal pieces."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value.strip() for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return []


def test_architecture_doc_maps_every_named_thread() -> None:
    """Each thread the code starts is on the map, by its name (a new one must be added)."""
    spans = re.findall(r"`([^`\n]+)`", DOC)  # names as the doc writes them, in code text
    unnamed, unmapped = [], []
    for path, tree in _code().items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if _called(node, "Thread"):
                name = next((k.value for k in node.keywords if k.arg == "name"), None)
                if name is None:
                    unnamed.append(f"{path}:{node.lineno}")
                    continue
            elif _called(node, "BackgroundThread"):  # arbiter/threads.py: (target, name)
                name = node.args[1] if len(node.args) > 1 else next(
                    k.value for k in node.keywords if k.arg == "name"
                )
            else:
                continue
            parts = [part for part in _literal_parts(name) if len(part) >= 3]
            unmapped += [f"{path}:{node.lineno} {part!r}" for part in parts
                         if not any(part in span for span in spans)]
    assert not unnamed, f"threads started without a name: {unnamed}"
    assert not unmapped, f"threads missing from the threads-and-locks map: {unmapped}"


def test_architecture_doc_maps_every_module_that_makes_a_lock() -> None:
    kinds = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore"}
    makers = sorted(
        path for path, tree in _code().items()
        if any(isinstance(n, ast.Call) and any(_called(n, k) for k in kinds)
               for n in ast.walk(tree))
    )
    assert makers, "no module makes a lock: the scan is broken"
    missing = [path for path in makers if f"`{path}`" not in DOC]
    assert not missing, f"modules with locks missing from the threads-and-locks map: {missing}"
