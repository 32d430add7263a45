"""docs/develop/architecture.md stays true to the tree, the layer contract and the threads."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_PATH = ROOT / "docs" / "develop" / "architecture.md"
DOC = DOC_PATH.read_text()


def _mermaid_blocks() -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", DOC, flags=re.S)


def _layers_contract() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    layers: list[str] = next(c for c in contracts if c["type"] == "layers")["layers"]
    return layers


def test_architecture_doc_draws_every_layer_folder() -> None:
    drawn = set(re.findall(r'subgraph \w+\["((?:arbiter|web)/\w+):', _mermaid_blocks()[0]))
    folders = {
        f"{top}/{p.name}"
        for top in ("arbiter", "web")
        for p in (ROOT / top).iterdir()
        if (p / "__init__.py").exists()
    }
    assert drawn == folders


def test_architecture_doc_order_matches_the_contract() -> None:
    chain = re.search(r"^\s*(\w+(?: --> \w+)+)\s*$", _mermaid_blocks()[0], flags=re.M)
    assert chain, "the layer chain (a --> b --> ...) is missing"
    drawn = chain.group(1).split(" --> ")
    contract = [
        name.strip().removeprefix("arbiter.").replace(".", "_")
        for layer in _layers_contract()
        for name in layer.split("|")
    ]
    # The contract lists independent layers (web.table | web.hub, rules | tunes)
    # together; the chain draws the table's line down to rules, the hub's app
    # hangs off app and tunes off hardware.
    assert [n for n in contract if n in drawn] == drawn
    assert set(contract) - set(drawn) == {"tunes", "web_hub"}


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
