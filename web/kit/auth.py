"""The admin file: the admin PIN (hashed and checked) and the session secret.

``<data_dir>/admin.json`` holds the PIN as a salted scrypt hash and a random
session secret, both made on first run (never a fixed default). The file is
written atomically and readable by its owner only; the PIN is read from it
at each check, so ``gg-arbiter set-pin`` takes effect on a running server.

Sessions (:mod:`web.kit.sessions`) are bound to the PIN record and the
``session_epoch`` stored beside it (:func:`pin_fingerprint`), which ``set-pin``
raises: a PIN change ends every session, even one made by another process.
Guessing is limited in :mod:`web.kit.attempts`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from arbiter.errors import PinFormatError as PinFormatError
from arbiter.pinrule import MIN_DIGITS, check_pin_format
from arbiter.storage.durable import write_durably
from web.kit.errors import AdminFileError

ADMIN_FILE = "admin.json"
_GENERATED_DIGITS = MIN_DIGITS
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


#: What the admin pages and API say while admin.json is damaged.
REPAIR_HINT = (
    "the admin file is damaged, so admin access is off; repair it with "
    "`gg-arbiter set-pin` (the running arbiter takes the new PIN at once)"
)


# scrypt takes 128 * r * n bytes (16 MB) from malloc, and glibc keeps a freed buffer in
# the arena of the thread that used it: hashed on the server's threads, every thread
# that once checked a PIN held 16 MB (a table grew from 56 to 473 MB after 40 admin
# requests). Every hash runs on this one thread instead, so one arena holds it, once.
_hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pin-hash")


def _scrypt(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(pin.encode(), salt=salt, n=n, r=r, p=p, dklen=32)


def _hash(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    """scrypt of ``pin``, computed on the one PIN-hashing thread (callers wait their turn)."""
    return _hasher.submit(_scrypt, pin, salt, n, r, p).result()


def _pin_record(pin: str) -> dict[str, Any]:
    salt = secrets.token_bytes(16)
    digest = _hash(pin, salt, **_SCRYPT)
    return {"alg": "scrypt", **_SCRYPT, "salt": salt.hex(), "hash": digest.hex()}


def _matches(record: dict[str, Any], pin: str) -> bool:
    try:
        salt = bytes.fromhex(record["salt"])
        expected = bytes.fromhex(record["hash"])
        digest = _hash(pin, salt, int(record["n"]), int(record["r"]), int(record["p"]))
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(digest, expected)


def _path(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / ADMIN_FILE


def _read(data_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    path = _path(data_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AdminFileError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise AdminFileError(f"{path}: not a JSON object")
    return data


def _write(data_dir: str | os.PathLike[str], data: dict[str, Any]) -> None:
    path = _path(data_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The one durable writer (file and directory fsynced): a power cut right after
        # set-pin keeps the new PIN, never neither.
        write_durably(path, json.dumps(data, indent=2).encode("utf-8"))
    except OSError as exc:
        raise AdminFileError(f"cannot write {path}: {exc}") from None


_file_lock = threading.Lock()


def ensure_admin(
    data_dir: str | os.PathLike[str],
    configured_pin: str | None,
    setting: str = "web.admin_pin",
) -> str | None:
    """Make sure admin.json has a session secret and a PIN hash.

    A ``configured_pin`` (from the config file) replaces the stored one when
    they differ. With none configured and none stored, a PIN is generated.

    :returns: the newly generated PIN, to print once in the console, else None.
    :raises PinFormatError: ``configured_pin`` breaks the PIN rule (the error names
        ``setting``, where it came from).
    :raises AdminFileError: admin.json is unreadable (it is never overwritten blindly).
    """
    if configured_pin is not None:
        check_pin_format(configured_pin, setting)
    with _file_lock:
        data = _read(data_dir) or {}
        changed = False
        generated: str | None = None
        if not isinstance(data.get("secret"), str) or len(data["secret"]) < 32:
            data["secret"] = secrets.token_hex(32)
            changed = True
        record = data.get("pin")
        has_pin = isinstance(record, dict) and "hash" in record
        if configured_pin is not None:
            if not (isinstance(record, dict) and has_pin and _matches(record, configured_pin)):
                data["pin"] = _pin_record(configured_pin)
                changed = True
        elif not has_pin:
            generated = "".join(secrets.choice("0123456789") for _ in range(_GENERATED_DIGITS))
            data["pin"] = _pin_record(generated)
            changed = True
        if changed:
            _write(data_dir, data)
        return generated


def set_pin(data_dir: str | os.PathLike[str], pin: str, setting: str = "set-pin") -> None:
    """Store a new admin PIN (hashed), keeping the session secret.

    Every admin session stops working (the session epoch goes up). A damaged
    admin.json is set aside as ``admin.json.damaged`` and replaced: this is
    the repair the admin pages point to.

    :raises PinFormatError: ``pin`` breaks the PIN rule (the error names ``setting``).
    :raises AdminFileError: admin.json cannot be written.
    """
    check_pin_format(pin, setting)
    with _file_lock:
        try:
            data = _read(data_dir) or {}
        except AdminFileError:
            path = _path(data_dir)
            try:
                os.replace(path, path.with_name(ADMIN_FILE + ".damaged"))
            except OSError as exc:
                raise AdminFileError(f"cannot set {path} aside: {exc}") from None
            data = {}
        if not isinstance(data.get("secret"), str) or len(data["secret"]) < 32:
            data["secret"] = secrets.token_hex(32)
        data["pin"] = _pin_record(pin)
        data["session_epoch"] = _epoch(data) + 1
        _write(data_dir, data)


def _epoch(data: dict[str, Any]) -> int:
    value = data.get("session_epoch", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def admin_problem(data_dir: str | os.PathLike[str]) -> str | None:
    """Why admin access is off (admin.json damaged or without a PIN), else None."""
    try:
        data = _read(data_dir)
    except AdminFileError as exc:
        return f"{REPAIR_HINT} ({exc})"
    record = data.get("pin") if data else None
    if not (isinstance(record, dict) and "hash" in record):
        return f"{REPAIR_HINT} (no PIN stored)"
    return None


def session_secret(data_dir: str | os.PathLike[str]) -> str:
    """The stored session secret.

    :raises AdminFileError: no admin.json yet (call :func:`ensure_admin` first).
    """
    data = _read(data_dir)
    if data is None or not isinstance(data.get("secret"), str):
        raise AdminFileError(f"{_path(data_dir)} has no session secret")
    return str(data["secret"])


def check_pin(data_dir: str | os.PathLike[str], pin: str) -> bool:
    """True when ``pin`` is the stored admin PIN (constant-time compare)."""
    if not pin or len(pin) > 64:
        return False
    try:
        data = _read(data_dir)
    except AdminFileError:
        return False
    record = data.get("pin") if data else None
    return isinstance(record, dict) and _matches(record, pin)


def pin_fingerprint(data_dir: str | os.PathLike[str]) -> str:
    """A short value that changes whenever the PIN is set or the session epoch
    goes up (binds sessions to both); "" when there is no usable PIN record."""
    try:
        data = _read(data_dir)
    except AdminFileError:
        return ""
    record = data.get("pin") if data else None
    if not isinstance(record, dict) or not data:
        return ""
    seed = f"{record.get('salt', '')}:{_epoch(data)}"
    return hashlib.sha256(seed.encode()).hexdigest()[:16]
