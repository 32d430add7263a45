"""Driving the simulator from lines of text (a terminal or a script).

Commands, one per line (``help`` lists them)::

    attacker W:5*G      seat a piece (also: a W:5*G)
    defender B:SPY      (also: d B:SPY)
    clear attacker      take a piece out (clear defender; clear = both)
    new                 NEW GAME
    end draw            declare an ending: end flag_home W | end resignation B | end draw
                        (the side named is the winner)
    status              print the public status
    quit                stop the arbiter

It prints what the device would show: ``[leds]``, ``[tune]``, ``[state]``
and ``[verdict]`` lines. It never prints a rank it was not given.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable

from arbiter.device.arbiter import Arbiter, DeviceError
from arbiter.hardware.readers.sim import SimSlots
from arbiter.rules.game import EndingError, EndingKind
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import PieceError, parse_side
from arbiter.rules.verdict import Role

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


class SimConsole:
    """Reads commands, calls the device, and prints what it shows."""

    def __init__(self, arbiter: Arbiter, print_fn: Callable[[str], object] = print) -> None:
        if arbiter.sim is None:
            raise DeviceError("the simulator console needs the simulator (run --sim)")
        self.arbiter = arbiter
        self._sim: SimSlots = arbiter.sim
        self.print = print_fn
        self._last_outputs: tuple[str, ...] | None = None
        self._last_state: tuple[object, ...] | None = None
        self._last_tune: float | None = None
        self._stop = threading.Event()

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

    def show_status(self, status: JsonDict) -> None:
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

    def follow(self) -> None:
        """Print status changes until :meth:`stop` (runs on a thread)."""
        q = self.arbiter.subscribe()
        try:
            while not self._stop.is_set():
                try:
                    status = q.get(timeout=0.5)
                except Exception:
                    continue
                self.show_status(status)
        finally:
            self.arbiter.unsubscribe(q)

    def stop(self) -> None:
        self._stop.set()

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
            elif verb in ("clear", "remove", "c"):
                roles = [_ROLES[a.lower()] for a in args] if args else list(Role)
                for role in roles:
                    sim.clear(role)
            elif verb in ("new", "newgame"):
                self.print(f"[game] new game {self.arbiter.new_game()}")
            elif verb == "end":
                self._end(args)
            elif verb == "status":
                self.print(json.dumps(self.arbiter.status()))
            else:
                self.print(f"unknown command {verb!r}: type help")
        except (PieceError, EndingError, DeviceError) as exc:
            self.print(f"[refused] {exc}")
        except KeyError as exc:
            self.print(f"[refused] unknown slot {exc.args[0]!r}: attacker or defender")
        except Exception as exc:  # the console must keep reading whatever one command does
            log.exception("simulator command %r failed", verb)
            self.print(f"[error] {verb}: {exc}")
        return True

    def _end(self, args: list[str]) -> None:
        if not args or args[0].lower() not in _ENDINGS:
            self.print("usage: end flag_home W | end resignation B | end draw")
            return
        kind = _ENDINGS[args[0].lower()]
        winner = parse_side(args[1]) if len(args) > 1 else None
        self.arbiter.declare_end(kind, winner)

    def run(self, lines: Iterable[str]) -> None:
        """Carry out lines until ``quit`` or the end of input."""
        for line in lines:
            if not self.command(line.strip()):
                break
