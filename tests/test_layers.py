"""The architecture holds: imports only go down the layers, and the core stays pure.

The contracts live in ``pyproject.toml`` ([tool.importlinter]); these tests run
them on the real tree, and on a copy with one upward import added, to show the
check can fail.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
#: Layers that are standard library only (plus lower arbiter layers).
PURE_LAYERS = ("rules", "tunes", "storage", "tournament", "wire")
#: The libraries a pure layer may use beside the standard library: the tournament's
#: Swiss pairing solves its brackets with rustworkx's or networkx's maximum-weight matching.
PURE_LAYER_LIBRARIES = {"tournament": {"networkx", "rustworkx"}}
#: What each layer may import of the arbiter, besides itself and arbiter.errors.
BELOW = {
    "rules": set(),
    "tunes": set(),
    "storage": {"rules"},
    "drivers": {"storage", "rules", "tunes"},
    "fleet": {"storage", "rules", "mqtt", "wire"},
    "device": {"fleet", "drivers", "storage", "rules", "tunes", "wire"},
    "tournament": set(),
    "hub": {"tournament", "rules", "storage", "mqtt", "wire"},
    "mqtt": set(),
    "wire": {"rules"},
}
#: Standard-library-only modules at the package root that every layer may use.
SHARED_ROOT_MODULES = (
    "arbiter.errors", "arbiter.queues", "arbiter.threads", "arbiter.pinrule",
    "arbiter.logthrottle",
)
HARDWARE_LIBRARIES = {
    "gpiozero", "serial", "smbus2", "flask", "RPi", "lgpio", "waitress", "web", "paho",
}


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )


def _copy_tree(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    for name in ("arbiter", "web"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def _prepend(path: Path, line: str) -> None:
    text = path.read_text()
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest)


def test_layers_contracts_kept() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("arbiter/rules/verdict.py", "import arbiter.device.arbiter", "Layers"),
        ("arbiter/storage/journal.py", "import arbiter.drivers.signals", "Layers"),
        ("arbiter/device/arbiter.py", "import arbiter.app.config", "Layers"),
        ("web/kit/present.py", "import arbiter.app.cli", "Layers"),
        ("arbiter/drivers/identify.py", "import web.kit.present", "Layers"),
        ("arbiter/storage/registry.py", "import gpiozero", "Rules, tunes, storage"),
        ("arbiter/device/arbiter.py", "import serial", "Device"),
        ("arbiter/tournament/model.py", "import arbiter.rules.ranks", "Tournament"),
        ("arbiter/hub/ledger.py", "import arbiter.device.arbiter", "Hub"),
        ("arbiter/device/arbiter.py", "import paho.mqtt.client", "Device"),
        ("arbiter/storage/journal.py", "import paho.mqtt.client", "Rules, tunes, storage"),
        ("arbiter/fleet/link.py", "import flask", "Fleet"),
        ("arbiter/fleet/outbox.py", "import arbiter.device.status", "Layers"),
        ("web/hub/views.py", "import arbiter.device.status", "Hub app"),
        ("web/hub/feed.py", "import paho.mqtt.client", "Hub app"),
        ("web/hub/views.py", "import web.table.public", "Layers"),
        ("web/table/public.py", "import web.hub.views", "Layers"),
        ("web/kit/events.py", "import arbiter.device.status", "Web kit"),
        ("web/kit/serve.py", "import web.table", "Layers"),
        ("web/kit/present.py", "import web.hub.views", "Layers"),
        ("arbiter/hub/ledger.py", "import web.hub.views", "Hub"),
        ("arbiter/mqtt/tls.py", "import arbiter.hub.ledger", "MQTT address and TLS"),
        ("arbiter/wire/parse.py", "import arbiter.storage.durable", "Wire format"),
        ("arbiter/wire/topics.py", "import arbiter.fleet.payloads", "Layers"),
        ("web/table/public.py", "import arbiter.hub.ledger", "Table side"),
        ("arbiter/device/arbiter.py", "import arbiter.hub.ledger", "Layers"),
        ("arbiter/hub/ledger.py", "import arbiter.fleet.outbox", "Hub"),
    ],
)
def test_layers_contract_breaks_on_a_forbidden_import(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    copy = _copy_tree(tmp_path)
    _prepend(copy / module, line)
    result = _lint(copy)
    assert result.returncode != 0, result.stdout
    broken = [ln for ln in result.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(ln.startswith(contract) for ln in broken), result.stdout


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _layer_files(layer: str) -> list[Path]:
    module = ROOT / "arbiter" / f"{layer}.py"  # a layer of one module, or a package
    return [module] if module.is_file() else sorted((ROOT / "arbiter" / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(BELOW))
def test_layers_import_only_lower_layers(layer: str) -> None:
    allowed = BELOW[layer] | {layer}
    for path in _layer_files(layer):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "arbiter" or name in ("arbiter", *SHARED_ROOT_MODULES):
                continue
            assert parts[1] in allowed, f"{path.relative_to(ROOT)} imports {name}"


@pytest.mark.parametrize("layer", PURE_LAYERS)
def test_layers_core_imports_only_standard_library(layer: str) -> None:
    for path in _layer_files(layer):
        for name in _imports(path):
            top = name.split(".")[0]
            allowed = PURE_LAYER_LIBRARIES.get(layer, set())
            assert top == "arbiter" or top in sys.stdlib_module_names or top in allowed, (
                f"{path.relative_to(ROOT)} imports {name}"
            )


def test_layers_core_import_loads_no_hardware_module() -> None:
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for layer in PURE_LAYERS
        for p in _layer_files(layer)
    )
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + f"print(sorted(m for m in {sorted(HARDWARE_LIBRARIES)!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_layers_only_app_imports_web() -> None:
    for path in sorted((ROOT / "arbiter").rglob("*.py")):
        if path.is_relative_to(ROOT / "arbiter" / "app"):
            continue
        for name in _imports(path):
            assert name.split(".")[0] != "web", f"{path.relative_to(ROOT)} imports {name}"


#: What a table has and a hub process must never load.
TABLE_ONLY = ("arbiter.device", "arbiter.drivers", "web.table", "serial", "gpiozero", "smbus2",
              "RPi", "lgpio")


def test_layers_hub_process_loads_nothing_of_a_table(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from arbiter.app.cli import main\n"
        "import arbiter.hub.broker_link, arbiter.hub.resend, web.hub, web.hub.organiser\n"
        f"status = main(['hub', '--event', 'e', '--data', {str(tmp_path)!r}, 'players', 'list'])\n"
        "assert not status, status\n"
        f"print(sorted(m for m in sys.modules if m.startswith({TABLE_ONLY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
