"""web.auth: the PIN file, CSRF tokens and the attempt limiter (no server needed)."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

import pytest

from web import auth


def test_ensure_admin_generates_pin_once(tmp_path: Path) -> None:
    pin = auth.ensure_admin(tmp_path, None)
    assert pin is not None and pin.isdigit() and len(pin) == 6
    assert auth.check_pin(tmp_path, pin)
    assert auth.ensure_admin(tmp_path, None) is None  # shown once only
    assert auth.check_pin(tmp_path, pin)


def test_ensure_admin_stores_only_a_salted_hash(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path, "135790")
    text = (tmp_path / auth.ADMIN_FILE).read_text()
    assert "135790" not in text
    data = json.loads(text)
    assert data["pin"]["alg"] == "scrypt" and len(bytes.fromhex(data["pin"]["salt"])) == 16
    assert stat.S_IMODE((tmp_path / auth.ADMIN_FILE).stat().st_mode) == 0o600


def test_ensure_admin_secret_is_random_and_kept(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path / "a", None)
    auth.ensure_admin(tmp_path / "b", None)
    first = auth.session_secret(tmp_path / "a")
    assert len(first) >= 32
    assert first != auth.session_secret(tmp_path / "b")
    auth.ensure_admin(tmp_path / "a", "1234")
    auth.set_pin(tmp_path / "a", "98765")
    assert auth.session_secret(tmp_path / "a") == first


def test_ensure_admin_configured_pin_replaces_stored(tmp_path: Path) -> None:
    generated = auth.ensure_admin(tmp_path, None)
    assert generated is not None
    assert auth.ensure_admin(tmp_path, "4321") is None
    assert auth.check_pin(tmp_path, "4321")
    assert not auth.check_pin(tmp_path, generated)


def test_ensure_admin_same_configured_pin_keeps_hash(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path, "4321")
    before = auth.pin_fingerprint(tmp_path)
    auth.ensure_admin(tmp_path, "4321")
    assert auth.pin_fingerprint(tmp_path) == before


@pytest.mark.parametrize("bad", ["", "123", "12ab", "1234567890123", " 1234", "١٢٣٤"])
def test_set_pin_refuses_bad_format(tmp_path: Path, bad: str) -> None:
    with pytest.raises(auth.PinFormatError):
        auth.set_pin(tmp_path, bad)


def test_set_pin_changes_pin_and_fingerprint(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path, "1111")
    before = auth.pin_fingerprint(tmp_path)
    auth.set_pin(tmp_path, "2222")
    assert auth.check_pin(tmp_path, "2222")
    assert not auth.check_pin(tmp_path, "1111")
    assert auth.pin_fingerprint(tmp_path) != before


def test_ensure_admin_refuses_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / auth.ADMIN_FILE).write_text("{not json")
    with pytest.raises(auth.AdminFileError):
        auth.ensure_admin(tmp_path, None)


def test_check_pin_false_without_file(tmp_path: Path) -> None:
    assert not auth.check_pin(tmp_path, "1234")
    with pytest.raises(auth.AdminFileError):
        auth.session_secret(tmp_path)


def test_csrf_token_stable_per_session_and_checked() -> None:
    session: dict[str, object] = {}
    token = auth.csrf_token(session)
    assert auth.csrf_token(session) == token
    assert auth.csrf_ok(session, token)
    assert not auth.csrf_ok(session, token + "x")
    assert not auth.csrf_ok(session, None)
    assert not auth.csrf_ok({}, token)
    assert auth.csrf_token({}) != token


def test_limiter_blocks_after_max_failures() -> None:
    limiter = auth.AttemptLimiter(max_failures=3, window=60)
    for _ in range(3):
        assert not limiter.blocked("a")
        limiter.fail("a")
    assert limiter.blocked("a")
    assert not limiter.blocked("b")
    assert 1 <= limiter.retry_after("a") <= 60


def test_limiter_window_expires() -> None:
    limiter = auth.AttemptLimiter(max_failures=2, window=0.2)
    limiter.fail("a")
    limiter.fail("a")
    assert limiter.blocked("a")
    time.sleep(0.3)
    assert not limiter.blocked("a")
    assert limiter.retry_after("a") == 0


def test_limiter_reset_forgets_client() -> None:
    limiter = auth.AttemptLimiter(max_failures=2, window=60)
    limiter.fail("a")
    limiter.reset("a")
    limiter.fail("a")
    assert not limiter.blocked("a")
