"""docs/architecture.md stays true to the tree and to the layer contract."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()


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
    assert not missing, f"docs/architecture.md names missing files: {missing}"


def test_architecture_doc_linked_from_readme() -> None:
    assert "docs/architecture.md" in (ROOT / "README.md").read_text()
