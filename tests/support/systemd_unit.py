"""A systemd unit file read the way the tests check it."""

from __future__ import annotations

import re

Unit = dict[str, dict[str, list[str]]]


def parse_unit(text: str) -> Unit:
    """A systemd unit as section -> key -> values (a key may repeat, e.g. Environment)."""
    sections: Unit = {}
    current: dict[str, list[str]] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"line {number}: {raw!r}"
        assert not line.endswith("\\"), f"line {number}: continuation lines not expected"
        assert re.fullmatch(r"[A-Za-z]+", key.strip()), f"line {number}: bad key {key!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def one(section: dict[str, list[str]], key: str) -> str:
    """The value of a key that must be set exactly once."""
    values = section[key]
    assert len(values) == 1, f"{key} is set {len(values)} times"
    return values[0]
