"""JSON objects: the game's views, the journal's records; the one place ``Any`` is meant."""

from __future__ import annotations

from typing import Any, TypeAlias

#: A JSON object: string keys, any JSON value (the journal's records, the views the web sends).
JsonDict: TypeAlias = dict[str, Any]
