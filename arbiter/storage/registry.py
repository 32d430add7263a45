"""The tag registry: which RFID tag sits in which physical piece, kept in ``tags.json``.

Each of the 42 physical pieces (:mod:`arbiter.rules.army`) has at most one tag and
each tag names at most one piece. Tag ids are hex text, stored upper case.
Every change is written atomically (temporary file, fsync, rename, fsync of
the directory), so a power cut leaves either the old or the new file. A file
that cannot be read raises :class:`RegistryCorruptError`; it is never reset
silently.

File format::

    {"format": "gg-arbiter-tags", "version": 1,
     "tags": {"62E3086CED": "W:5*G", "100086F444": "W:PVT#1"}}
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece
from arbiter.storage.durable import write_durably
from arbiter.storage.errors import (
    InvalidTagError,
    PieceAlreadyEnrolledError,
    RegistryCorruptError,
    TagAlreadyEnrolledError,
)

#: The registry's file name inside the data directory.
FILENAME = "tags.json"

_FORMAT = "gg-arbiter-tags"
_VERSION = 1
_TAG_RE = re.compile(r"[0-9A-F]{2,40}")


def normalize_tag(tag: str) -> str:
    """The stored form of a tag id: stripped, upper case.

    :raises InvalidTagError: unless it is 2 to 40 hex digits.
    """
    text = tag.strip().upper()
    if not _TAG_RE.fullmatch(text):
        raise InvalidTagError(f"not a tag id (2-40 hex digits): {tag!r}")
    return text


class TagRegistry:
    """Tag id -> physical piece, persisted in the JSON file at ``path``.

    Loads the file at once (a missing file is an empty registry).

    :raises RegistryCorruptError: if the file exists but is not a valid registry.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self._lock = threading.RLock()
        self._by_tag: dict[str, PhysicalPiece] = {}
        self.reload()

    @classmethod
    def in_directory(cls, data_dir: str | os.PathLike[str]) -> TagRegistry:
        """The registry kept as ``tags.json`` in ``data_dir``."""
        return cls(Path(data_dir) / FILENAME)

    @property
    def path(self) -> Path:
        return self._path

    def reload(self) -> None:
        """Read the file again (another process, e.g. ``gg-arbiter enroll``, may have changed it).

        :raises RegistryCorruptError: as the constructor.
        """
        with self._lock:
            self._by_tag = self._load()

    # -- queries -------------------------------------------------------------

    def lookup(self, tag: str) -> Piece | None:
        """The piece carrying ``tag``, or None if it is not enrolled (or not a tag id)."""
        physical = self.lookup_physical(tag)
        return physical.piece if physical else None

    def lookup_physical(self, tag: str) -> PhysicalPiece | None:
        """The physical piece carrying ``tag``, or None."""
        try:
            key = normalize_tag(tag)
        except InvalidTagError:
            return None
        with self._lock:
            return self._by_tag.get(key)

    def tag_of(self, piece: PhysicalPiece) -> str | None:
        """The tag enrolled for ``piece``, or None."""
        with self._lock:
            for tag, owner in self._by_tag.items():
                if owner == piece:
                    return tag
        return None

    def pieces_missing(self) -> list[PhysicalPiece]:
        """Physical pieces with no tag yet, in the guided enrollment order."""
        with self._lock:
            enrolled = set(self._by_tag.values())
        return [p for p in all_physical_pieces() if p not in enrolled]

    def items(self) -> list[tuple[str, PhysicalPiece]]:
        """(tag, piece) pairs in the guided order of the pieces."""
        with self._lock:
            pairs = list(self._by_tag.items())
        return sorted(pairs, key=lambda pair: pair[1].order)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_tag)

    def __contains__(self, tag: object) -> bool:
        return isinstance(tag, str) and self.lookup_physical(tag) is not None

    # -- changes -------------------------------------------------------------

    def enroll(self, tag: str, piece: PhysicalPiece | Piece) -> PhysicalPiece:
        """Give ``piece`` the tag ``tag`` and save; returns the physical piece.

        A plain :class:`Piece` means its first instance without a tag (any
        Private will do). Enrolling a tag to the piece it already names does
        nothing.

        :raises InvalidTagError: for a malformed tag id.
        :raises TagAlreadyEnrolledError: if the tag belongs to a different piece.
        :raises PieceAlreadyEnrolledError: if the piece has another tag, or a
            plain piece has no instance left without a tag.
        """
        key = normalize_tag(tag)
        with self._lock:
            current = self._by_tag.get(key)
            physical = self._resolve(piece, current)
            if current == physical:
                return physical
            if current is not None:
                raise TagAlreadyEnrolledError(key, current)
            old = self.tag_of(physical)
            if old is not None:
                raise PieceAlreadyEnrolledError(physical, old)
            updated = dict(self._by_tag)
            updated[key] = physical
            self._commit(updated)
            return physical

    def reenroll(self, piece: PhysicalPiece, tag: str) -> str | None:
        """Give ``piece`` a new tag, replacing its old one; returns the old tag or None.

        :raises InvalidTagError: for a malformed tag id.
        :raises TagAlreadyEnrolledError: if the new tag belongs to another piece
            (forget it first).
        """
        key = normalize_tag(tag)
        with self._lock:
            current = self._by_tag.get(key)
            if current is not None and current != piece:
                raise TagAlreadyEnrolledError(key, current)
            old = self.tag_of(piece)
            if old == key:
                return old
            updated = {t: p for t, p in self._by_tag.items() if p != piece}
            updated[key] = piece
            self._commit(updated)
            return old

    def forget(self, tag: str) -> PhysicalPiece | None:
        """Remove ``tag``; returns the piece it named, or None if it was not enrolled."""
        try:
            key = normalize_tag(tag)
        except InvalidTagError:
            return None
        with self._lock:
            if key not in self._by_tag:
                return None
            updated = dict(self._by_tag)
            piece = updated.pop(key)
            self._commit(updated)
            return piece

    # -- internals -----------------------------------------------------------

    def _resolve(
        self, piece: PhysicalPiece | Piece, current: PhysicalPiece | None
    ) -> PhysicalPiece:
        if isinstance(piece, PhysicalPiece):
            return piece
        if current is not None and current.piece == piece:
            return current
        missing = [p for p in self.pieces_missing() if p.piece == piece]
        if not missing:
            last = PhysicalPiece(piece, piece.rank.count)
            raise PieceAlreadyEnrolledError(last, self.tag_of(last) or "?")
        return missing[0]

    def _commit(self, updated: dict[str, PhysicalPiece]) -> None:
        """Write ``updated`` to disk, then make it current (memory unchanged on failure)."""
        document = {
            "format": _FORMAT,
            "version": _VERSION,
            "tags": {
                tag: str(piece)
                for tag, piece in sorted(updated.items(), key=lambda pair: pair[1].order)
            },
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        write_durably(self._path, (json.dumps(document, indent=2) + "\n").encode())
        self._by_tag = updated

    def _load(self) -> dict[str, PhysicalPiece]:
        try:
            text = self._path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise RegistryCorruptError(self._path, f"cannot read: {exc}") from exc
        try:
            document: object = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RegistryCorruptError(self._path, f"not JSON: {exc}") from exc
        if not isinstance(document, dict) or document.get("format") != _FORMAT:
            raise RegistryCorruptError(self._path, f"not a {_FORMAT} file")
        if document.get("version") != _VERSION:
            raise RegistryCorruptError(
                self._path, f"unsupported version {document.get('version')!r}"
            )
        tags = document.get("tags")
        if not isinstance(tags, dict):
            raise RegistryCorruptError(self._path, '"tags" is not an object')
        by_tag: dict[str, PhysicalPiece] = {}
        seen: dict[PhysicalPiece, str] = {}
        for raw_tag, raw_piece in tags.items():
            try:
                tag = normalize_tag(raw_tag)
                if not isinstance(raw_piece, str):
                    raise PieceError(repr(raw_piece), "not a piece")
                piece = PhysicalPiece.parse(raw_piece)
            except (InvalidTagError, PieceError) as exc:
                raise RegistryCorruptError(self._path, str(exc)) from exc
            if tag in by_tag:
                raise RegistryCorruptError(self._path, f"tag {tag} appears twice")
            if piece in seen:
                raise RegistryCorruptError(
                    self._path, f"{piece} has two tags ({seen[piece]} and {tag})"
                )
            by_tag[tag] = piece
            seen[piece] = tag
        return by_tag
