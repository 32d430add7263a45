#!/usr/bin/env python3
"""The architecture page's layer diagram and allowed-imports table, from the import contracts.

Reads ``[tool.importlinter]`` in pyproject.toml (the layers contract and the forbidden
contracts) and writes ``docs/develop/import-map.txt``, which docs/develop/architecture.md
includes (pymdownx snippets). A package *may import* another when the layers contract
puts the other lower (and not as an independent sibling) and no forbidden contract of the
package names it. Usage: ``python scripts/import_map.py [--check]``; ``--check`` exits 1
when the committed file differs (tests/docs/test_architecture_doc.py runs the same check).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "develop" / "import-map.txt"


@dataclass(frozen=True)
class Contracts:
    """What the contracts say: layers top to bottom, and what each source may not import."""

    roots: tuple[str, ...]
    #: Each layer: its modules, and whether they are independent (``|``) of each other.
    layers: tuple[tuple[tuple[str, ...], bool], ...]
    #: (source modules, forbidden modules) of each forbidden contract.
    forbidden: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

    @classmethod
    def from_pyproject(cls, pyproject: Path) -> Contracts:
        config: dict[str, Any] = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        linter = config["tool"]["importlinter"]
        layers: list[tuple[tuple[str, ...], bool]] = []
        forbidden: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for contract in linter["contracts"]:
            if contract["type"] == "layers":
                for layer in contract["layers"]:
                    independent = ":" not in layer
                    names = layer.replace(":", "|").split("|")
                    layers.append((tuple(n.strip() for n in names), independent))
            elif contract["type"] == "forbidden":
                forbidden.append((tuple(contract["source_modules"]),
                                  tuple(contract["forbidden_modules"])))
        return cls(tuple(linter["root_packages"]), tuple(layers), tuple(forbidden))

    @property
    def packages(self) -> tuple[str, ...]:
        """Every module the layers contract places, top to bottom."""
        return tuple(name for names, _ in self.layers for name in names)

    def _layer(self, module: str) -> int:
        return next(i for i, (names, _) in enumerate(self.layers) if module in names)

    def _forbids(self, source: str, target: str) -> bool:
        return any(
            source in sources and any(target == f or target.startswith(f + ".") for f in banned)
            for sources, banned in self.forbidden
        )

    def may_import(self, source: str, target: str) -> bool:
        """Whether ``source`` may import ``target`` (two modules of the layers contract)."""
        if source == target:
            return False
        above, below = self._layer(source), self._layer(target)
        if above > below or (above == below and self.layers[above][1]):
            return False
        return not self._forbids(source, target)

    def libraries_forbidden(self, source: str) -> list[str]:
        """The libraries (outside the root packages) a forbidden contract keeps from ``source``."""
        found = {
            f for sources, banned in self.forbidden if source in sources for f in banned
            if f.split(".")[0] not in self.roots
        }
        return sorted(found, key=str.lower)


def _path(module: str, root: Path) -> str:
    """``arbiter.errors`` -> ``arbiter/errors.py``, ``web.kit`` -> ``web/kit/``."""
    relative = module.replace(".", "/")
    return f"{relative}.py" if (root / f"{relative}.py").is_file() else f"{relative}/"


def _node(module: str) -> str:
    return module.replace(".", "_")


def _reduced_edges(contracts: Contracts) -> list[tuple[str, str]]:
    """The allowed imports, less those another allowed path already draws."""
    packages = contracts.packages
    allowed = {(a, b) for a in packages for b in packages if contracts.may_import(a, b)}
    return [
        (a, b) for a, b in sorted(allowed, key=lambda e: (packages.index(e[0]),
                                                            packages.index(e[1])))
        if not any((a, m) in allowed and (m, b) in allowed for m in packages)
    ]


def _misleading_paths(contracts: Contracts, edges: Sequence[tuple[str, str]]) -> list[str]:
    """Pairs the diagram joins by a path of arrows though a contract forbids the import."""
    reach: dict[str, set[str]] = {p: set() for p in contracts.packages}
    for a, b in edges:
        reach[a].add(b)
    changed = True
    while changed:
        changed = False
        for a in reach:
            more = set().union(*(reach[m] for m in reach[a])) - reach[a]
            if more:
                reach[a] |= more
                changed = True
    return sorted(f"{a} -> {b}" for a in reach for b in reach[a]
                  if not contracts.may_import(a, b))


def render(contracts: Contracts, root: Path = ROOT) -> str:
    """The snippet: a mermaid diagram of the layers, then the table of allowed imports."""
    packages = contracts.packages
    edges = _reduced_edges(contracts)
    lines = [
        "<!-- Generated by scripts/import_map.py from [tool.importlinter] in pyproject.toml:",
        "     do not edit; run `python scripts/import_map.py` after changing a contract. -->",
        "",
        "```mermaid",
        "flowchart TB",
    ]
    # Labels are the paths alone: the page's table says what each holds.
    lines += [f'    {_node(p)}["{_path(p, root)}"]' for p in packages]
    lines += [f"    {_node(a)} --> {_node(b)}" for a, b in edges]
    lines += ["```", ""]
    misleading = _misleading_paths(contracts, edges)
    lines += [
        "An arrow is *may import*; the arrows a longer path already implies are left out."
        + (" Beware: a path of arrows also joins " + ", ".join(f"`{m}`" for m in misleading)
           + ", which a contract forbids." if misleading else
           " Every path of arrows is an allowed import."),
        "",
        "| package | may import (of the arbiter) | never imports (libraries) |",
        "|---|---|---|",
    ]
    for p in packages:
        allowed = [f"`{_path(q, root)}`" for q in packages if contracts.may_import(p, q)]
        libraries = [f"`{lib}`" for lib in contracts.libraries_forbidden(p)]
        lines.append(f"| `{_path(p, root)}` | {', '.join(allowed) or 'nothing'} | "
                     f"{', '.join(libraries) or '(no contract)'} |")
    outside = [f"`{_path(m, root)}`" for m in unplaced(contracts, root)]
    if outside:
        lines += ["", "Outside the layers contract: " + ", ".join(outside) + "."]
    return "\n".join(lines) + "\n"


def unplaced(contracts: Contracts, root: Path = ROOT) -> list[str]:
    """The modules and packages just under the root packages that no layer names."""
    found = []
    for package in contracts.roots:
        for child in sorted((root / package).iterdir()):
            if child.name.startswith(("_", ".")):
                continue
            if child.suffix == ".py" or (child / "__init__.py").is_file():
                module = f"{package}.{child.name.removesuffix('.py')}"
                if module not in contracts.packages:
                    found.append(module)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed file is stale, write nothing")
    args = parser.parse_args(argv)
    text = render(Contracts.from_pyproject(ROOT / "pyproject.toml"))
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.is_file() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/import_map.py",
                  file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
