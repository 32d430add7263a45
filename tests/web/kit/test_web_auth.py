"""web.kit.auth, sessions and attempts: the PIN file, CSRF tokens and the attempt limiter
(no server needed)."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from arbiter import logthrottle
from tests.support.clock import FakeClock
from web.kit import attempts, auth, sessions
from web.kit.errors import AdminFileError


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
    auth.ensure_admin(tmp_path / "a", "123456")
    auth.set_pin(tmp_path / "a", "987650")
    assert auth.session_secret(tmp_path / "a") == first


def test_ensure_admin_configured_pin_replaces_stored(tmp_path: Path) -> None:
    generated = auth.ensure_admin(tmp_path, None)
    assert generated is not None
    assert auth.ensure_admin(tmp_path, "432187") is None
    assert auth.check_pin(tmp_path, "432187")
    assert not auth.check_pin(tmp_path, generated)


def test_ensure_admin_same_configured_pin_keeps_hash(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path, "432187")
    before = auth.pin_fingerprint(tmp_path)
    auth.ensure_admin(tmp_path, "432187")
    assert auth.pin_fingerprint(tmp_path) == before


@pytest.mark.parametrize(
    "bad", ["", "123", "1234", "12345", "12ab56", "1234567890123", " 123456", "١٢٣٤٥٦"]
)
def test_set_pin_refuses_bad_format(tmp_path: Path, bad: str) -> None:
    with pytest.raises(auth.PinFormatError):
        auth.set_pin(tmp_path, bad)


def test_set_pin_changes_pin_and_fingerprint(tmp_path: Path) -> None:
    auth.ensure_admin(tmp_path, "111111")
    before = auth.pin_fingerprint(tmp_path)
    auth.set_pin(tmp_path, "222222")
    assert auth.check_pin(tmp_path, "222222")
    assert not auth.check_pin(tmp_path, "111111")
    assert auth.pin_fingerprint(tmp_path) != before


def test_ensure_admin_refuses_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / auth.ADMIN_FILE).write_text("{not json")
    with pytest.raises(AdminFileError):
        auth.ensure_admin(tmp_path, None)


def test_check_pin_false_without_file(tmp_path: Path) -> None:
    assert not auth.check_pin(tmp_path, "1234")
    with pytest.raises(AdminFileError):
        auth.session_secret(tmp_path)


def test_csrf_token_stable_per_session_and_checked() -> None:
    session: dict[str, object] = {}
    token = sessions.csrf_token(session)
    assert sessions.csrf_token(session) == token
    assert sessions.csrf_ok(session, token)
    assert not sessions.csrf_ok(session, token + "x")
    assert not sessions.csrf_ok(session, None)
    assert not sessions.csrf_ok({}, token)
    assert sessions.csrf_token({}) != token


def test_limiter_blocks_after_max_failures() -> None:
    limiter = attempts.AttemptLimiter(max_failures=3, window=60)
    for _ in range(3):
        assert not limiter.blocked("a")
        limiter.fail("a")
    assert limiter.blocked("a")
    assert not limiter.blocked("b")
    assert 1 <= limiter.retry_after("a") <= 60


def test_limiter_window_expires() -> None:
    clock = FakeClock()
    limiter = attempts.AttemptLimiter(max_failures=2, window=60, clock=clock)
    limiter.fail("a")
    limiter.fail("a")
    assert limiter.blocked("a")
    clock.advance(59.9)
    assert limiter.blocked("a")
    clock.advance(0.2)
    assert not limiter.blocked("a")
    assert limiter.retry_after("a") == 0


def test_limiter_reset_forgets_client() -> None:
    limiter = attempts.AttemptLimiter(max_failures=2, window=60)
    limiter.fail("a")
    limiter.reset("a")
    limiter.fail("a")
    assert not limiter.blocked("a")


def test_limiter_reserve_counts_checks_in_progress() -> None:
    limiter = attempts.AttemptLimiter(max_failures=3, window=60)
    assert all(limiter.reserve("a") for _ in range(3))  # three checks running, none settled
    assert not limiter.reserve("a")
    assert limiter.blocked("a")
    assert limiter.retry_after("a") >= 59  # as if the running checks all fail
    assert limiter.reserve("b")  # another client has its own budget


def test_limiter_settle_refunds_or_counts() -> None:
    limiter = attempts.AttemptLimiter(max_failures=2, window=60)
    assert limiter.reserve("a") and limiter.reserve("a")
    limiter.settle("a", None)  # not checked (no turn): the attempt is given back
    assert limiter.reserve("a")
    limiter.settle("a", False)
    limiter.settle("a", False)
    assert not limiter.reserve("a")  # two wrong PINs counted
    limiter.reset("a")
    assert limiter.reserve("a")
    limiter.settle("a", True)  # a right PIN forgets the failures
    assert limiter.reserve("a") and limiter.reserve("a")


def test_limiter_reserve_atomic_across_threads() -> None:
    limiter = attempts.AttemptLimiter(max_failures=5, window=60)
    start = threading.Barrier(40)
    taken: list[bool] = []

    def attempt() -> None:
        start.wait(timeout=10)
        taken.append(limiter.reserve("a"))

    threads = [threading.Thread(target=attempt) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert taken.count(True) == 5 and taken.count(False) == 35


class _CheckProbe:
    """Stands in for check_pin: counts the checks running at once.

    Each check waits (up to ``hold`` s) for a third one to join it, so without
    a cap the peak surely passes 2; with the cap each check just waits ``hold``.
    """

    def __init__(self, hold: float = 0.2) -> None:
        self.hold = hold
        self.running = 0
        self.peak = 0
        self.calls = 0
        self._cond = threading.Condition()

    def __call__(self, data_dir: Any, pin: str) -> bool:
        with self._cond:
            self.calls += 1
            self.running += 1
            self.peak = max(self.peak, self.running)
            self._cond.notify_all()
            self._cond.wait_for(lambda: self.running >= 3, timeout=self.hold)
            self.running -= 1
        return False


def test_pin_gate_bounds_concurrent_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    probe = _CheckProbe()
    monkeypatch.setattr(auth, "check_pin", probe)
    gate = attempts.PinGate(limit=2, wait=30)
    results: list[bool | None] = []
    threads = [
        threading.Thread(target=lambda: results.append(gate.check("x", "0000"))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert probe.calls == 8 and results == [False] * 8
    assert probe.peak <= 2


def test_pin_gate_none_when_no_turn_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    inside = threading.Event()

    def slow_check(data_dir: Any, pin: str) -> bool:
        inside.set()
        release.wait(timeout=30)
        return True

    monkeypatch.setattr(auth, "check_pin", slow_check)
    gate = attempts.PinGate(limit=1, wait=0.05)
    holder = threading.Thread(target=gate.check, args=("x", "1234"))
    holder.start()
    try:
        assert inside.wait(timeout=10)
        assert gate.check("x", "1234") is None  # the one turn is taken
    finally:
        release.set()
        holder.join(timeout=10)
    assert gate.check("x", "1234") is True


# -- a PIN set before the 6-digit rule ----------------------------------------------


def _legacy_admin_file(data_dir: Path, pin: str) -> None:
    """admin.json as an older arbiter wrote it for ``pin`` (its documented format: a
    salted scrypt hash, n=2**14, r=8, p=1, 32 bytes), which set_pin would now refuse."""
    import hashlib

    salt = bytes(range(16))
    digest = hashlib.scrypt(pin.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    record = {"alg": "scrypt", "n": 2**14, "r": 8, "p": 1, "salt": salt.hex(),
              "hash": digest.hex()}
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / auth.ADMIN_FILE).write_text(
        json.dumps({"secret": "s" * 64, "pin": record}), encoding="utf-8"
    )


def test_legacy_4_digit_pin_still_logs_in_and_the_log_says_so(
    device: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.support.web import build_app

    _legacy_admin_file(Path(device.config.data_dir), "2468")
    app = build_app(device, ADMIN_PIN=None)
    client = app.test_client()
    with caplog.at_level("WARNING"):
        assert client.post("/api/games", headers={"X-Admin-PIN": "2469"}).status_code == 403
        assert "shorter than 6 digits" not in caplog.text
        assert client.post("/api/games", headers={"X-Admin-PIN": "2468"}).status_code == 201
    assert "admin PIN is shorter than 6 digits" in caplog.text
    assert "gg-arbiter set-pin" in caplog.text


# -- memory: a PIN check's 16 MB is held once, not once per server thread ---------

_RSS_PROBE = """
import sys, tempfile, threading
from web.kit import auth

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise SystemExit("no VmRSS")

data = tempfile.mkdtemp()
auth.ensure_admin(data, "246813")
auth.check_pin(data, "246813")  # the first 16 MB (and glibc's raised mmap threshold)
before = rss_mb()
threads = int(sys.argv[1])
all_checked = threading.Barrier(threads + 1)

def server_thread():
    assert auth.check_pin(data, "246813")
    all_checked.wait()  # alive, like a server's worker, while RSS is read

workers = [threading.Thread(target=server_thread) for _ in range(threads)]
for worker in workers:
    worker.start()
all_checked.wait()
print(rss_mb() - before)
for worker in workers:
    worker.join()
"""


def test_pin_checks_on_many_threads_leave_memory_flat() -> None:
    """Eight long-lived threads each check a PIN (as eight waitress workers do): the
    process grows by far less than one 16 MB scrypt buffer per thread (it grew
    8 x 16 MB when each thread hashed itself). In a child process, so RSS is its own."""
    import subprocess
    import sys

    threads = 8
    scrypt_mb = 128 * 8 * 2**14 / 2**20  # 128 * r * n bytes: 16 MB
    result = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(threads)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    growth = float(result.stdout)
    assert growth < 2 * scrypt_mb, f"RSS grew {growth:.0f} MB over {threads} threads"


# -- the attempt limit across all addresses -------------------------------------------


def test_limiter_shared_bucket_caps_guesses_across_clients() -> None:
    clock = FakeClock()
    limiter = attempts.AttemptLimiter(
        max_failures=5, window=300, clock=clock, global_burst=4, global_interval=30
    )
    for client in ("a", "b", "c", "d"):  # four clients, one guess each: the burst
        assert limiter.reserve(client)
        limiter.settle(client, False)
    assert not limiter.reserve("e")  # a fifth address has its own budget, not the bucket's
    assert limiter.blocked("e") and limiter.retry_after("e") == 30
    clock.advance(29.9)
    assert not limiter.reserve("e")
    clock.advance(0.1)
    assert limiter.reserve("e")
    limiter.settle("e", True)  # a right PIN gives its token back ...
    assert limiter.reserve("f")
    limiter.settle("f", None)  # ... and so does a check that never ran
    assert limiter.reserve("f")
    limiter.settle("f", False)
    assert not limiter.reserve("g")


def test_forty_addresses_cannot_multiply_the_guesses(device: Any) -> None:
    """The real app on a fake clock: 40 addresses x 5 wrong PINs once got 200 checks
    in 33 s; now the app checks its burst (10) and then one per 30 s, in turn."""
    from tests.support.web import build_app

    clock = FakeClock()
    app = build_app(device, ADMIN_CLOCK=clock)
    burst, interval = app.config["PIN_GLOBAL_BURST"], app.config["PIN_GLOBAL_INTERVAL"]
    assert app.config["PIN_MAX_FAILURES"] == 5 and burst == 10 and interval == 30
    client = app.test_client()

    def guess(address: int, pin: str = "000000") -> Any:
        return client.post("/api/games", headers={"X-Admin-PIN": pin},
                           environ_base={"REMOTE_ADDR": f"10.0.0.{address}"})

    codes = [guess(address).status_code for address in range(40) for _ in range(5)]
    assert codes.count(403) == burst and codes.count(429) == 200 - burst
    # Addresses 0 and 1 took the burst (5 each); 2 to 39 were refused, never checked.
    refused = guess(41)  # waits in turn behind the 38 refused before it
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) == (38 + 1) * interval
    clock.advance(33)  # 33 s: one more checked guess, not 200, and it goes in turn
    assert [guess(42).status_code, guess(3).status_code] == [429, 429]
    assert guess(2).status_code == 403  # the first refused, never checked
    assert guess(2).status_code == 429  # and no more


def test_three_guessers_cannot_lock_the_organiser_out(
    device: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27: three addresses sending one wrong PIN a second each kept the shared
    bucket empty, and the right PIN got 429 for 180 s. The tokens go in turn, the client
    checked longest ago (never) first: the organiser's right PIN passes with the next
    token, at the time its 429 says, and the guessers get no more checks than before."""
    from tests.support.web import PIN, build_app

    clock = FakeClock()
    app = build_app(device, ADMIN_CLOCK=clock)
    interval = app.config["PIN_GLOBAL_INTERVAL"]
    client = app.test_client()

    def guess(address: int, pin: str = "000000") -> Any:
        return client.post("/api/games", headers={"X-Admin-PIN": pin},
                           environ_base={"REMOTE_ADDR": f"10.0.0.{address}"})

    wrong = 0
    for _second in range(20):  # the burst is gone within seconds
        wrong += sum(guess(a).status_code == 403 for a in (1, 2, 3))
        clock.advance(1)
    first = guess(99, PIN)
    assert first.status_code == 429
    retry = int(first.headers["Retry-After"])
    assert 1 <= retry <= interval
    for _second in range(retry):  # the guessers go on, once a second each
        wrong += sum(guess(a).status_code == 403 for a in (1, 2, 3))
        clock.advance(1)
    assert guess(99, PIN).status_code == 201  # in, at the time it was told
    for _second in range(120):
        wrong += sum(guess(a).status_code == 403 for a in (1, 2, 3))
        clock.advance(1)
    # Checked: the burst, then one per interval at most (and 5 per address per window).
    assert wrong <= min(15, app.config["PIN_GLOBAL_BURST"] + (140 + retry) // interval + 1)
    # Each refusal is logged within the one rule: ~480 refusals, a few lines per address.
    refusals = [r for r in caplog.records if "PIN check" in r.getMessage()
                or "wrong admin PIN" in r.getMessage()]
    assert 3 <= len(refusals) <= 4 * logthrottle.FIRST


def test_limiter_gives_the_next_token_to_the_client_checked_longest_ago() -> None:
    clock = FakeClock()
    limiter = attempts.AttemptLimiter(max_failures=5, window=300, clock=clock, global_burst=1,
                                  global_interval=30)
    assert limiter.reserve("a")
    limiter.settle("a", False)
    for client in ("a", "b", "c"):  # all wait: the bucket is empty
        assert not limiter.reserve(client)
    assert [limiter.retry_after(c) for c in ("b", "c", "a")] == [30, 60, 90]
    clock.advance(30)
    assert not limiter.reserve("a")  # checked before: behind the two never checked
    assert limiter.reserve("b")
    limiter.settle("b", False)
    clock.advance(30)
    assert not limiter.reserve("b") and limiter.reserve("c")
    limiter.settle("c", False)
    clock.advance(30)
    assert limiter.reserve("a")  # checked longest ago of those waiting
    limiter.settle("a", False)
    clock.advance(attempts.ASKING_FORGET)  # b stopped asking long ago: it has lost its place
    assert limiter.reserve("d") is True
