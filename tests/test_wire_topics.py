"""The wire's topics: built and split by arbiter/wire/topics.py alone, both ways, for every kind.

The expected names are docs/tournament/mqtt.md's (prefix P = ``gg/<event>/table/<table>/``, then the
topic; an earlier release's ``record/<game>`` is still read); the filters are checked with
paho's own matcher.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from paho.mqtt.client import topic_matches_sub

from arbiter import wire
from arbiter.wire import Topic

ROOT = Path(__file__).resolve().parents[1]
#: docs/tournament/mqtt.md's topic of each kind, for event ``demo``, table ``7``.
DOCUMENTED = {
    Topic.ONLINE: "gg/demo/table/7/online",
    Topic.STATUS: "gg/demo/table/7/status",
    Topic.EVENTS: "gg/demo/table/7/events",
    Topic.RECORD: "gg/demo/table/7/record",
    Topic.ASSIGNMENT: "gg/demo/table/7/assignment",
    Topic.RESEND: "gg/demo/table/7/resend",
}


def test_every_kind_is_documented() -> None:
    assert set(DOCUMENTED) == set(Topic)


@pytest.mark.parametrize("kind", list(Topic))
def test_each_topic_is_built_as_documented_and_split_back(kind: Topic) -> None:
    name = wire.topic("demo", "7", kind)
    assert name == DOCUMENTED[kind]
    assert wire.split("demo", name) == wire.TopicName("demo", "7", kind, None, kind.value)


@pytest.mark.parametrize("kind", list(Topic))
@pytest.mark.parametrize(("event", "table", "game"), [
    ("demo", "7", "12"), ("spring-open_2026", "T12", "g.1-x"), ("e", "a", 0),
])
def test_round_trip_of_every_kind(kind: Topic, event: str, table: str, game: int | str) -> None:
    split = wire.split(event, wire.topic(event, table, kind))
    assert split is not None
    assert (split.event, split.table, split.topic, split.game) == (event, table, kind, None)
    # An earlier release's record topic, one a game: still read, naming its game.
    legacy = wire.split(event, wire.legacy_record_topic(event, table, game))
    assert legacy is not None
    assert (legacy.table, legacy.topic, legacy.game) == (table, Topic.RECORD, str(game))


def test_a_legacy_record_topic_needs_a_game_that_is_a_topic_level() -> None:
    assert wire.legacy_record_topic("demo", "7", 12) == "gg/demo/table/7/record/12"
    with pytest.raises(ValueError):
        wire.legacy_record_topic("demo", "7", "a/b")


def test_a_table_writes_one_topic_of_each_kind_it_writes() -> None:
    """Its records share the one ``record`` topic: no topic names a game (issue 27)."""
    assert {wire.topic("demo", "7", k) for k in wire.TABLE_WRITES} == {
        "gg/demo/table/7/online", "gg/demo/table/7/status", "gg/demo/table/7/events",
        "gg/demo/table/7/record"}


@pytest.mark.parametrize("name", [
    "gg/other/table/7/events",  # another event's
    "gg/demo/hub/7/events",
    "gg/demo/table/7",  # no topic after the table
    "gg/demo/table//events",
    "xx/demo/table/7/events",
    "",
])
def test_topics_not_of_a_table_of_the_event(name: str) -> None:
    assert wire.split("demo", name) is None


@pytest.mark.parametrize("rest", ["shout", "events/extra", "record/", "record/a/b", "status/1"])
def test_a_tables_topic_not_of_the_format(rest: str) -> None:
    assert wire.split("demo", f"gg/demo/table/7/{rest}") == wire.TopicName(
        "demo", "7", None, None, rest)


@pytest.mark.parametrize("kind", list(Topic))
def test_filters_match_exactly_their_topics(kind: Topic) -> None:
    name = DOCUMENTED[kind]
    assert topic_matches_sub(wire.event_filter("demo"), name)
    assert not topic_matches_sub(wire.event_filter("other"), name)
    assert topic_matches_sub(wire.table_filter("demo"), name)
    for other in Topic:
        assert topic_matches_sub(wire.table_filter("demo", other), name) == (other is kind)
        assert topic_matches_sub(wire.table_filter("demo", other),
                                 "gg/demo/table/7/record/12") == (other is Topic.RECORD)
        assert topic_matches_sub(wire.table_pattern("demo", "7", other), name) == (
            other is kind)
        assert not topic_matches_sub(wire.table_pattern("demo", "8", other), name)


# --- nothing else builds or parses a topic ----------------------------------------------

#: The code that ships; arbiter/wire/topics.py is the one owner. (The benches and the tests name
#: broker topics of their own making: a spy's, a flood's.)
SCANNED = ("arbiter", "web")
OWNER = ROOT / "arbiter" / "wire" / "topics.py"


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                     ast.Constant):
                out.add(id(body[0].value))
    return out


def _is_prefix(node: ast.expr) -> bool:
    """A table's topic prefix: ``prefix(...)``, ``wire.prefix(...)`` or a ``.prefix``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id in ("prefix", "table_prefix")
    return isinstance(node, ast.Attribute) and node.attr in ("prefix", "_prefix",
                                                             "table_prefix")


def topic_builders(path: Path) -> list[str]:
    """Where ``path`` writes a topic by hand: a ``gg/...`` literal, an f-string joining
    the root to a value, or a table's prefix joined to a topic's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    found = []
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docs and (node.value.startswith(f"{wire.ROOT}/")
                                         or "/table/+" in node.value):
                found.append(f"{where}: {node.value[:40]!r}")
        elif isinstance(node, ast.JoinedStr):
            for part, after in zip(node.values, [*node.values[1:], None], strict=True):
                if (isinstance(part, ast.Constant) and isinstance(part.value, str)
                        and part.value.endswith(f"{wire.ROOT}/")
                        and isinstance(after, ast.FormattedValue)):
                    found.append(f"{where}: an f-string joins {wire.ROOT}/ to a value")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
                _is_prefix(node.left) or _is_prefix(node.right)):
            found.append(f"{where}: a prefix joined by hand")
    return found


def test_only_wire_builds_topics() -> None:
    files = [p for d in SCANNED for p in sorted((ROOT / d).rglob("*.py")) if p != OWNER]
    assert len(files) > 50  # the scan sees the tree
    assert [hit for p in files for hit in topic_builders(p)] == []


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The ownership test can fail: each way the code used to build topics is caught."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'def f(event, table, link):\n'
        '    """gg/<event>/table/<table>/ in a docstring is prose."""\n'
        '    a = f"gg/{event}/table/+/#"\n'
        '    b = link.prefix + "events"\n'
        '    c = prefix(event, table) + "assignment"\n'
        '    d = "gg/demo/table/+/status"\n'
        '    return a, b, c, d\n', encoding="utf-8")
    hits = topic_builders(sample)
    assert sorted({h.split(":")[1] for h in hits}) == ["3", "4", "5", "6"], hits
