"""One exception root, and unique names: each error class of the project is named once."""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from pathlib import Path

from arbiter.errors import ArbiterError

ROOT = Path(__file__).resolve().parents[1]


def _error_classes() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for top in ("arbiter", "web"):
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                    found[node.name].append(module.removesuffix(".__init__"))
    return found


def test_errors_each_name_is_defined_once() -> None:
    found = _error_classes()
    assert len(found) > 30  # the scan did look
    twice = {name: where for name, where in found.items() if len(where) > 1}
    assert not twice, f"error names defined more than once: {twice}"


def test_errors_all_derive_from_the_one_root() -> None:
    for name, (module, *_rest) in _error_classes().items():
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, ArbiterError), f"{module}.{name} is not an ArbiterError"


def test_errors_live_in_their_packages_errors_module() -> None:
    """A newcomer finds every error of a package in its ``errors.py`` (a module at the
    package root, such as ``arbiter/pinrule.py``, keeps its errors in ``arbiter/errors.py``)."""
    elsewhere = {
        name: where for name, where in _error_classes().items()
        if not all(module.endswith(".errors") or module == "arbiter.errors" for module in where)
    }
    assert not elsewhere, f"error classes outside an errors.py: {elsewhere}"
