"""Driving the simulator from lines of text (a terminal or a script).

Commands, one per line (``help`` lists them)::

    attacker W:5*G      seat a piece (also: a W:5*G)
    defender B:SPY      (also: d B:SPY)
    clear attacker      take a piece out (clear defender; clear = both)
    tag attacker 04A1B2C3D48E80
                        hold a bare sticker of that UID (RFID kinds; also: tag d UID)
    enroll              enrollment: pieces seated in the ATTACKER slot get their tags
                        (enroll W:PVT#3 redoes one; enroll next B:SPY: that one
                        next, in your own order; enroll skip; enroll stop)
    new                 NEW GAME
    end draw            declare an ending: end flag_home W | end resignation B | end draw
                        (the side named is the winner)
    status              print the public status
    quit                stop the arbiter

It prints what the device would show: ``[leds]``, ``[tune]``, ``[state]``
and ``[verdict]`` lines, in the order the device showed them. It never prints
a rank it was not given.

With an RFID reader kind (``reader.kind = "mcu"``, the flagship) each piece carries a
simulated sticker (:mod:`arbiter.drivers.readers.sim`): ``attacker W:5*G`` seats it,
enrolled or not, so ``gg-arbiter enroll`` and the status page's enrollment can be
rehearsed.

Typed at a terminal, each command goes in at once (a piece may be moved while
the battle phrase plays, as at the table). A script (``run --script FILE``, or
lines piped in) plays like a person typing: each command waits until the device
has settled, and the end of the script ends the run. An input that ends before
its first line (``/dev/null``, as under systemd) leaves the arbiter serving.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from typing import TextIO

from arbiter.app.stopping import lines_until
from arbiter.device.arbiter import Arbiter, DeviceError
from arbiter.drivers.readers.errors import SimTagError
from arbiter.drivers.readers.sim import SimSlots
from arbiter.queues import put_dropping_oldest
from arbiter.rules.errors import EndingError, PieceError
from arbiter.rules.game import EndingKind
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import parse_side
from arbiter.rules.verdict import Role
from arbiter.threads import BackgroundThread, declare

PRINTER = declare("console-printer", __name__,
                  "prints the simulator's outputs and statuses in the order the device showed them")
READER = declare("console-read", __name__,
                 "reads the simulator's commands (typed or a script) and plays them")
UNFOLLOW = declare("console-unfollow", __name__,
                   "ends the console's printer when the run ends")

log = logging.getLogger(__name__)

HELP = __doc__.split("::", 1)[1].split("\n\nIt prints", 1)[0].rstrip() if __doc__ else ""

_ROLES = {"attacker": Role.ATTACKER, "a": Role.ATTACKER, "defender": Role.DEFENDER,
          "d": Role.DEFENDER}
_ENDINGS = {
    "flag_home": EndingKind.FLAG_HOME,
    "flag-home": EndingKind.FLAG_HOME,
    "resignation": EndingKind.RESIGNATION,
    "resign": EndingKind.RESIGNATION,
    "draw": EndingKind.DRAW,
}


#: Put on the console's queue to end its printer (compared by identity).
_END: JsonDict = {}
#: Seconds to wait for the console's printer to show the last statuses at the end.
DRAIN_TIMEOUT = 10.0


class Feed(enum.Enum):
    """Where the console's lines come from, which decides how they are played."""

    TERMINAL = "terminal"  # a person types: commands go in at once; end of input keeps serving
    FILE = "file"  # a script file: each command settles; its end ends the run
    STREAM = "stream"  # a pipe (or /dev/null): like a file, once a first line came


def feed_of(stream: TextIO) -> Feed:
    """What kind of input ``stream`` is."""
    try:
        if stream.isatty():
            return Feed.TERMINAL
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return Feed.STREAM  # no file descriptor (a test's StringIO): a stream of lines
    return Feed.FILE if stat.S_ISREG(mode) else Feed.STREAM


class SimConsole:
    """Reads commands, calls the device, and prints what it shows."""

    def __init__(
        self, arbiter: Arbiter, print_fn: Callable[[str], object] = print, *,
        printer: bool = False,
    ) -> None:
        """:param printer: a thread of :func:`start_console` shows the statuses; a
        script's :meth:`settle` waits for it too."""
        if arbiter.sim is None:
            raise DeviceError("the simulator console needs the simulator (run --sim)")
        self.arbiter = arbiter
        self._sim: SimSlots = arbiter.sim
        self._print = print_fn
        self._print_lock = threading.Lock()
        self._last_outputs: tuple[str, ...] | None = None
        self._last_state: tuple[object, ...] | None = None
        self._last_tune: float | None = None
        self._printer = printer
        self._shown = threading.Condition()
        self._shown_seq = 0  # the newest status shown
        self._last_enroll: tuple[object, ...] | None = None

    def print(self, line: str) -> None:
        """Print one whole line (threads never run two lines together)."""
        with self._print_lock:
            self._print(line)

    # -- what the device shows --------------------------------------------

    def show_outputs(self, outputs: JsonDict) -> None:
        leds = outputs["leds"]
        key = tuple(leds[name]["mode"] for name in ("attacker", "defender", "status"))
        if key != self._last_outputs:
            self._last_outputs = key
            self.print(f"[leds] attacker={key[0]} defender={key[1]} status={key[2]}")
        playing = outputs.get("playing")
        if playing and playing.get("started") != self._last_tune:
            self._last_tune = playing.get("started")
            self.print(f"[tune] {playing['name']}")

    def show_enrollment(self) -> None:
        """``[enroll]`` lines when the enrollment's prompt or last result changed (this
        console is the admin's: prompts name pieces)."""
        now = self.arbiter.enrollment_status()
        key = (now["active"], now["prompt"], now["last"])
        if key == self._last_enroll:
            return
        before = self._last_enroll
        self._last_enroll = key
        if now["last"] and (before is None or before[2] != now["last"]):
            self.print(f"[enroll] {now['last']}")
        if now["active"]:
            done, total = now["progress"]
            self.print(f"[enroll] [{done}/{total}] {now['prompt']}")
        elif before is not None and before[0]:
            self.print("[enroll] enrollment ended: the arbiter judges again")

    def show_status(self, status: JsonDict) -> None:
        try:
            self._show_status(status)
            self.show_enrollment()
        finally:
            with self._shown:
                self._shown_seq = max(self._shown_seq, int(status.get("seq", 0)))
                self._shown.notify_all()

    def _show_status(self, status: JsonDict) -> None:
        key = (status["state"], status["challenge_count"], status["message"], status["ending"])
        if key == self._last_state:
            return
        previous = self._last_state
        self._last_state = key
        if previous is not None and status["challenge_count"] > previous[1]:
            verdict = status["last_verdict"]
            words = {"attacker": "ATTACKER survives", "defender": "DEFENDER survives",
                     "split": "SPLIT: both eliminated"}.get(verdict, str(verdict))
            self.print(f"[verdict] challenge {status['challenge_count']}: {words}")
        self.print(f"[state] {status['state']}")
        if status["message"]:
            self.print(f"[error] {status['message']}")
        if status["ending"] and (previous is None or previous[3] != status["ending"]):
            ending = status["ending"]
            winner = {"W": "White", "B": "Black"}.get(ending["winner"] or "", "nobody")
            self.print(f"[game over] {ending['kind']}: {winner} wins"
                       if ending["winner"] else f"[game over] {ending['kind']}")

    # -- commands -----------------------------------------------------------

    def command(self, line: str) -> bool:
        """Carry out one line; False when it asks to quit."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return True
        verb, args = words[0].lower(), words[1:]
        sim = self._sim
        try:
            if verb in ("quit", "exit", "q"):
                return False
            if verb in ("help", "?", "h"):
                self.print(HELP)
            elif verb in _ROLES:
                if len(args) != 1:
                    self.print(f"usage: {verb} SIDE:RANK, e.g. {verb} W:5*G")
                else:
                    sim.seat(_ROLES[verb], args[0])
            elif verb == "tag":
                if len(args) != 2:
                    self.print("usage: tag attacker|defender UID, e.g. tag a 04A1B2C3D48E80")
                else:
                    sim.hold(_ROLES[args[0].lower()], args[1])
            elif verb in ("clear", "remove", "c"):
                roles = [_ROLES[a.lower()] for a in args] if args else list(Role)
                for role in roles:
                    sim.clear(role)
            elif verb == "enroll":
                self._enroll(args)
            elif verb in ("new", "newgame"):
                self.print(f"[game] new game {self.arbiter.new_game()}")
            elif verb == "end":
                self._end(args)
            elif verb == "status":
                self.print(json.dumps(self.arbiter.status()))
            else:
                self.print(f"unknown command {verb!r}: type help")
        except (PieceError, EndingError, DeviceError, SimTagError) as exc:
            self.print(f"[refused] {exc}")
        except KeyError as exc:
            self.print(f"[refused] unknown slot {exc.args[0]!r}: attacker or defender")
        except Exception as exc:  # the console must keep reading whatever one command does
            log.exception("simulator command %r failed", verb)
            self.print(f"[error] {verb}: {exc}")
        return True

    def _enroll(self, args: list[str]) -> None:
        word = args[0].lower() if args else ""
        if word == "stop":
            self.arbiter.stop_enrollment()
        elif word == "skip":
            self.arbiter.skip_enrollment()
        elif word == "next" and len(args) == 2:
            self.arbiter.choose_enrollment(args[1])
        else:
            self.arbiter.start_enrollment(args[0] if args else None)
        self.show_enrollment()

    def _end(self, args: list[str]) -> None:
        if not args or args[0].lower() not in _ENDINGS:
            self.print("usage: end flag_home W | end resignation B | end draw")
            return
        kind = _ENDINGS[args[0].lower()]
        winner = parse_side(args[1]) if len(args) > 1 else None
        self.arbiter.declare_end(kind, winner)

    def run(self, lines: Iterable[str], *, settle: bool = False) -> tuple[bool, int]:
        """Carry out lines until ``quit`` or the end of input.

        :param settle: after each command, wait until the device has handled it
            (a script: the next line never lands while a battle phrase plays).
        :returns: whether ``quit`` ended it, and how many lines were read.
        """
        count = 0
        for line in lines:
            count += 1
            if not self.command(line.strip()):
                return True, count
            if settle and not self.settle():
                return True, count
        return False, count

    def settle(self) -> bool:
        """Wait until the device has handled every command so far; False if it shut down."""
        try:
            self.arbiter.settle()
        except DeviceError as exc:  # shut down, or hung: the script cannot go on
            self.print(f"[error] {exc}")
            return False
        if self._printer:  # and what it showed is printed before the next command's lines
            seq = int(self.arbiter.status()["seq"])
            with self._shown:
                self._shown.wait_for(lambda: self._shown_seq >= seq, DRAIN_TIMEOUT)
        return True


def start_console(
    arbiter: Arbiter,
    stdin: TextIO,
    stop: threading.Event,
    request_stop: Callable[[], None],
    out: Callable[[str], object],
) -> SimConsole:
    """Play ``stdin`` on the simulator (threads of its own).

    ``request_stop`` asks the service to end the run (a finished script, ``quit``);
    ``stop`` is set by the service once it is ending.

    The device's outputs and statuses go through one queue to one printer
    thread, so lines come out in the order the device showed them.
    """
    console = SimConsole(arbiter, out, printer=True)
    updates = arbiter.subscribe()
    # The outputs join the status queue: one printer sees both in the order they came.
    arbiter.add_output_listener(lambda outputs: put_dropping_oldest(updates, outputs))
    feed = feed_of(stdin)

    def show() -> None:
        while True:
            item = updates.get()
            if item is _END:
                return
            if "leds" in item:
                console.show_outputs(item)
            else:
                console.show_status(item)

    printer = BackgroundThread(lambda _stopping: show(), PRINTER,
                               wake=lambda: put_dropping_oldest(updates, _END))

    def finish() -> None:
        """Let the printer show every status so far, then end the run."""
        arbiter.unsubscribe(updates)
        put_dropping_oldest(updates, _END)
        printer.join(timeout=DRAIN_TIMEOUT)
        request_stop()

    def read() -> None:
        console.print(
            "simulator: type 'help' for commands (attacker W:5*G, defender B:SPY, clear, ...)"
        )
        quit_, count = console.run(lines_until(stdin, stop), settle=feed is not Feed.TERMINAL)
        if quit_ or feed is Feed.FILE or (feed is Feed.STREAM and count):
            finish()
        else:  # no script (stdin is /dev/null under systemd), or Ctrl-D at a terminal
            console.print("simulator: end of input; still serving (stop with Ctrl-C)")

    def unfollow() -> None:
        stop.wait()
        arbiter.unsubscribe(updates)
        put_dropping_oldest(updates, _END)

    printer.start()
    BackgroundThread(lambda _stopping: read(), READER).start()
    BackgroundThread(lambda _stopping: unfollow(), UNFOLLOW, wake=stop.set).start()
    return console
