"""A client of the running arbiter, for the commands that run beside it.

When the arbiter (usually the service) holds the data directory and the hardware,
``end``, ``selftest`` and ``enroll`` ask it over its local JSON API with the admin PIN
instead of opening them a second time. :func:`service_running` tells which case
holds, taking the data directory's lock when no arbiter runs.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import threading
from typing import Any

from arbiter.app.config import Config
from arbiter.app.errors import CliError, DataInUseError
from arbiter.app.stopping import StopRequests, interruptible, lines_until
from arbiter.pinrule import check_pin_format
from arbiter.rules.ranks import Side
from arbiter.storage.datalock import DataDirLock
from arbiter.storage.errors import StoreError, StoreLockedError
from arbiter.threads import BackgroundThread, declare

SERVICE_INPUT = declare("enroll input (service)", __name__,
                        "reads the typed commands of an enrollment the running arbiter does")


def ask_pin(prompt: str, hint: str) -> str:
    """Ask for a PIN at the terminal; with none, fail with ``hint`` (how to give it)."""
    import getpass
    import warnings

    # getpass falls back to standard input with a GetPassWarning when there is
    # no terminal (a script, cron, systemd): a PIN must not be read that way.
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        raise CliError(f"no PIN given and no terminal to ask for it: {hint}") from None
    with warnings.catch_warnings(), interruptible():
        warnings.simplefilter("ignore", getpass.GetPassWarning)
        try:
            return getpass.getpass(prompt)
        except (EOFError, OSError):
            raise CliError(f"no PIN given: {hint}") from None


def hold_data_dir(config: Config) -> DataDirLock | None:
    """Take the data directory's lock (as the arbiter does) so no arbiter starts meanwhile.

    :returns: the held lock, or None when no arbiter has used the directory yet.
    :raises DataInUseError: the running arbiter holds it.
    :raises CliError: it cannot be opened (another account's, e.g. the service's).
    """
    data_dir = config.data_dir
    try:
        return DataDirLock.take(data_dir, create=False)
    except StoreLockedError:
        raise DataInUseError(
            f"data directory {data_dir} is in use by a running gg-arbiter"
        ) from None
    except StoreError as exc:  # the lock file cannot be opened
        cause = exc.__cause__
        reason = cause.strerror if isinstance(cause, OSError) else str(exc)
        raise CliError(
            f"cannot open {data_dir} ({reason}): if it is the service's, run as its "
            "account (sudo -u gg-arbiter gg-arbiter ...) or give --data DIR"
        ) from None


class ServiceApi:
    """The running arbiter's local JSON API, with the admin PIN (``X-Admin-PIN``).

    Used when the arbiter holds the data directory and the hardware: the command
    asks it instead of opening them a second time.
    """

    def __init__(self, port: int, pin: str) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self._pin = pin

    @staticmethod
    def answers(port: int) -> bool:
        """True when an arbiter's status page answers on ``port`` of this machine."""
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=3) as r:
                return "game_id" in json.load(r)
        except (OSError, ValueError):
            return False

    def call(self, method: str, path: str, body: object = None, timeout: float = 15) -> Any:
        """One request; the answer's JSON.

        :raises CliError: refused (with the arbiter's own reason) or no answer.
        """
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base}{path}", data=data, method=method,
            headers={"Content-Type": "application/json", "X-Admin-PIN": self._pin},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return json.load(reply)
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read()).get("error", exc.reason)
            except ValueError:
                detail = exc.reason
            raise CliError(f"the running arbiter refused: {detail}") from None
        except (OSError, ValueError) as exc:
            raise CliError(
                f"the arbiter is running but its page does not answer at {self.base}: {exc}"
            ) from None


def service_api(config: Config, args: argparse.Namespace) -> ServiceApi:
    # A PIN sent to log in: a legacy 4-digit PIN still opens an old admin.json.
    if getattr(args, "pin", None):
        pin = check_pin_format(args.pin, "--pin", new=False)
    elif os.environ.get("GG_ARBITER_PIN"):
        pin = check_pin_format(os.environ["GG_ARBITER_PIN"], "GG_ARBITER_PIN", new=False)
    else:
        pin = check_pin_format(ask_pin(
            "Admin PIN of the running arbiter: ", "pass --pin PIN or set GG_ARBITER_PIN"
        ), "the PIN typed", new=False)
    port = args.port if getattr(args, "port", None) is not None else config.web.port
    return ServiceApi(port, pin)


def service_running(
    config: Config, args: argparse.Namespace
) -> tuple[bool, DataDirLock | None]:
    """Whether the arbiter runs (holds the data directory); if not, the lock, held
    (release it before building an arbiter here, which takes it again).

    :raises CliError: the data directory cannot be opened and no arbiter answers.
    """
    try:
        return False, hold_data_dir(config)
    except DataInUseError:
        return True, None
    except CliError:
        port = args.port if getattr(args, "port", None) is not None else config.web.port
        if ServiceApi.answers(port):  # the service's own account owns the directory
            return True, None
        raise


def end_through_service(config: Config, args: argparse.Namespace, winner: Side | None) -> int:
    """The arbiter is running: ask it over its local API (it holds the record)."""
    api = service_api(config, args)
    game_id = api.call("GET", "/api/status")["game_id"]
    api.call("POST", f"/api/games/{game_id}/end",
             {"reason": args.reason, "winner": winner.letter if winner else None})
    print(f"game {game_id} ended: {args.reason}" + (f", {winner.title} wins" if winner else ""))
    return 0


def selftest_through_service(config: Config, args: argparse.Namespace) -> int:
    """The arbiter runs and holds the outputs: it runs the test and sends the report."""
    api = service_api(config, args)
    print(f"self-test (through the running arbiter at {api.base}):")
    # The arbiter waits up to 180 s for its worker (every tune, Taps included).
    report = api.call("POST", "/api/admin/selftest", {"tunes": args.tune}, timeout=200)
    for line in report["lines"]:
        print(f"  {line}")
    for fault in report["faults"]:
        print(f"FAIL: reader {fault}")
    print("PASS" if report["passed"] else "FAIL")
    return 0 if report["passed"] else 1


def enroll_through_service(config: Config, args: argparse.Namespace,
                           requests: StopRequests | None = None) -> int:
    """The arbiter runs and holds the readers: it enrolls; this shows its prompts.

    Typed commands as in the terminal walk: s + Enter skips a piece, q + Enter stops,
    a piece's name (``B:SPY``) is the one enrolled next; a stop request (``requests``:
    Ctrl-C, SIGTERM) stops as q does.
    """
    api = service_api(config, args)
    walk = _ServiceEnrollment(api, api.call("POST", "/api/admin/enrollment", {"only": args.piece}))
    print(f"Enrolling through the running arbiter at {api.base}: "
          "s + Enter skips a piece, q + Enter stops; type a piece's name (B:SPY) to enroll "
          "that one next.")
    typed: queue.Queue[str] = queue.Queue()

    def read_commands(stopping: threading.Event) -> None:
        for line in lines_until(sys.stdin, stopping):
            typed.put(line.strip().lower())
        typed.put("eof")

    reading = BackgroundThread(read_commands, SERVICE_INPUT)
    reading.start()
    if requests is not None:
        requests.watch(lambda: typed.put("q"))
    try:
        walk.follow(typed)
    except KeyboardInterrupt:
        walk.status = api.call("DELETE", "/api/admin/enrollment")
    finally:
        reading.stop()
    walk.show_last()
    print("Enrollment ended; the arbiter judges again.")
    return 0


class _ServiceEnrollment:
    """The running arbiter's enrollment as this terminal follows it: its last ``status``
    and the prompt and result already shown."""

    def __init__(self, api: ServiceApi, status: dict[str, Any]) -> None:
        self.api = api
        self.status = status
        self.shown = ("", "")

    def follow(self, typed: queue.Queue[str]) -> None:
        """Show each new prompt and carry out each typed command until the enrollment
        ends, or q (a stop request, the end of input) stops it."""
        while self.status.get("active"):
            self.show_prompt()
            try:
                # Also the pace of asking: each ask checks the PIN (a slow hash).
                command = typed.get(timeout=0.5)
            except queue.Empty:
                command = ""
            if not self.carry_out(command):
                return

    def show_prompt(self) -> None:
        """Print the last result and the prompt, if either changed."""
        now = (self.status.get("prompt", ""), self.status.get("last", ""))
        if now == self.shown:
            return
        if now[1] and now[1] != self.shown[1]:
            print(now[1])
        done, total = self.status.get("progress", [0, 0])
        print(f"[{done}/{total}] {now[0]}")
        self.shown = now

    def carry_out(self, command: str) -> bool:
        """One typed command (or "" to look again); False once q has stopped it."""
        api = self.api
        if command in ("q", "quit"):
            self.status = api.call("DELETE", "/api/admin/enrollment")
            return False
        if command in ("s", "skip"):
            self.status = api.call("POST", "/api/admin/enrollment/skip")
        elif ":" in command:
            try:
                self.status = api.call("POST", "/api/admin/enrollment/next",
                                       {"piece": command.upper()})
            except CliError as exc:  # no such piece, or it has its tag: say so, go on
                print(exc)
        else:
            self.status = api.call("GET", "/api/admin/enrollment")
        return True

    def show_last(self) -> None:
        """The last result, if the enrollment ended before it was shown."""
        if self.status.get("last") and self.status.get("last") != self.shown[1]:
            print(self.status["last"])
