"""Every software command of the build guide, in its order, against the simulator.

docs/build/guide.md is read, not copied, so the guide cannot drift from the program.
The conventions it is read by (they hold for any rewrite of the guide):

- A **command** is a code span or a line of a fenced code block that starts with
  ``gg-arbiter`` (after an optional ``sudo -u gg-arbiter `` or ``sudo ``). They run in
  the order the guide gives them, each as its own process, as the builder types them.
- ``sudo systemctl stop gg-arbiter`` / ``start`` / ``restart`` (a code span or a block
  line) stop and start the simulated service. The guide begins with it running (step
  "Install the arbiter" installs and starts it).
- ``<!-- expect: TEXT -->`` (an HTML comment, invisible on the page) after a command and
  before the next one: that command must print TEXT (stdout or stderr). Several may
  follow one command. Each command must also exit 0 and print what its own contract
  says (:data:`CONTRACT`).
- What the builder's hands do while a command runs is simulated per subcommand
  (:class:`Hands`): ``monitor`` puts a piece in each slot, then lifts it; ``enroll`` puts
  in each piece it names; ``selftest --range`` holds a sticker where it says; ``record``
  follows the first game (White's Spy against Black's Five-star General). ``selftest``
  runs with both slots empty: two pieces seated after enrollment are a challenge, the
  game has begun, and the running arbiter refuses a self-test during a game. A
  subcommand with no hands here fails the test, except :data:`NOT_REHEARSED` (with
  the reason).

The simulated appliance: the flagship's config (``reader.kind = "mcu"``) in a temporary
directory, given by ``GG_ARBITER_CONFIG`` as ``/etc/gg-arbiter/config.toml`` is on the
Pi, with the admin PIN in ``GG_ARBITER_PIN``. The serial port is the one substitution:
``reader.mcu_port`` (``/dev/gg-slots`` on the Pi) names the pty of a simulated Pico
(:class:`~arbiter.drivers.fakes.FakePico`, its read range stated in
``arbiter/drivers/readrange.py``), which the commands that open the Pico (``monitor``,
``selftest --range``, ``enroll`` while the service is stopped) read through the real
reader code. The service (``gg-arbiter run``, no GPIO here: the simulator) seats
pieces as simulated stickers with the same UIDs, through its simulator API (and
enrolls them in its own ``sim-tags.json``: the monitor then names them "tag not
enrolled", as it would a sticker enrolled nowhere).
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readers.sim import SIM_TAGS, sticker_uid
from arbiter.rules.army import PhysicalPiece
from arbiter.storage.registry import TagRegistry
from tests.support.rig import FAST_TAPS
from tests.support.spawn import free_port, gg_arbiter

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "build" / "guide.md"
PIN = "246802"
#: Seconds one command may take (enrolling 42 pieces through the service is the longest).
COMMAND_TIMEOUT = 180.0

#: What each subcommand prints when it succeeded (besides exiting 0).
CONTRACT: dict[str, str] = {
    "selftest": "PASS",
    "selftest --range": "PASS",
    "enroll": "",  # checked by its hands: every piece it asked for went in
    "monitor": "settled  PRESENT",
    "record": "challenge(s)",
    "judge": "",
    "tune": "",
}
#: Subcommands the guide may name that this test does not run, and why.
NOT_REHEARSED = {
    "set-pin": "it asks for a new PIN twice at a terminal; the test sets one (GG_ARBITER_PIN)",
}


# -- reading the guide -----------------------------------------------------------------


@dataclass
class Step:
    """One thing the guide has the builder do: a command or a service switch."""

    text: str
    expect: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        words = shlex.split(self.text)
        if words[:3] == ["sudo", "-u", "gg-arbiter"]:  # as the service's account
            words = words[3:]
        elif words[:1] == ["sudo"]:
            words = words[1:]
        return words[1:] if words[:1] == ["gg-arbiter"] else words

    @property
    def subcommand(self) -> str:
        argv = self.argv
        if self.text.startswith("sudo systemctl"):
            return "systemctl"
        name = argv[0] if argv else ""
        return "selftest --range" if name == "selftest" and "--range" in argv else name


_TOKENS = re.compile(r"```[^\n]*\n(?P<block>.*?)```|<!--\s*expect:\s*(?P<expect>.*?)\s*-->"
                     r"|`(?P<span>[^`]+)`", re.S)
_COMMAND = re.compile(r"^(sudo( -u gg-arbiter)? )?gg-arbiter\s+\S"
                      r"|^sudo systemctl (stop|start|restart) gg-arbiter$")


def guide_steps(text: str) -> list[Step]:
    """The commands and service switches of ``text``, in order, with their expectations."""
    steps: list[Step] = []
    for match in _TOKENS.finditer(text):
        if match.group("expect") is not None:
            assert steps and steps[-1].subcommand != "systemctl", \
                f"an expect marker follows no command: {match.group(0)}"
            steps[-1].expect.append(match.group("expect"))
            continue
        lines = (match.group("block") or "").splitlines() or [match.group("span") or ""]
        for line in lines:
            command = " ".join(line.split())
            if _COMMAND.match(command):
                steps.append(Step(command))
    return steps


def test_the_guide_is_read_by_its_conventions() -> None:
    text = """Run `sudo -u gg-arbiter gg-arbiter
monitor` then:

```sh
sudo systemctl stop gg-arbiter
gg-arbiter selftest --range
```
<!-- expect: gain: keep 33 dB -->
<!-- expect: PASS -->
`systemctl is-active gg-arbiter` and `gg-arbiter enroll --piece W:PVT#3`."""
    steps = guide_steps(text)
    assert [(s.text, s.subcommand, s.expect) for s in steps] == [
        ("sudo -u gg-arbiter gg-arbiter monitor", "monitor", []),
        ("sudo systemctl stop gg-arbiter", "systemctl", []),
        ("gg-arbiter selftest --range", "selftest --range", ["gain: keep 33 dB", "PASS"]),
        ("gg-arbiter enroll --piece W:PVT#3", "enroll", []),
    ]
    assert steps[0].argv == ["monitor"] and steps[3].argv == ["enroll", "--piece", "W:PVT#3"]


def test_the_guide_names_the_flagship_commands_it_must() -> None:
    names = {s.subcommand for s in guide_steps(GUIDE.read_text(encoding="utf-8"))}
    assert {"monitor", "enroll", "selftest"} <= names
    unknown = names - set(CONTRACT) - set(NOT_REHEARSED) - {"systemctl"}
    assert not unknown, f"the guide names commands this rehearsal has no hands for: {unknown}"


# -- the simulated appliance -------------------------------------------------------------


class Terminal:
    """One command's process: what it printed (stdout and stderr, as it comes, prompts
    without their newline too), and a way to type."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([*gg_arbiter(), *argv], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        self.text = ""
        self._seen = 0
        self._changed = threading.Condition()
        self._done = False
        threading.Thread(target=self._read, daemon=True, name="terminal").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            select.select([fd], [], [])
            chunk = os.read(fd, 4096)
            with self._changed:
                if not chunk:
                    self._done = True
                    self._changed.notify_all()
                    return
                self.text += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def next(self, pattern: str, timeout: float = COMMAND_TIMEOUT) -> re.Match[str] | None:
        """The next match of ``pattern`` after the last one taken, or None at the end."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = re.compile(pattern, re.M).search(self.text, self._seen)
                if found:
                    self._seen = found.end()
                    return found
                if self._done:
                    return None
                left = deadline - time.monotonic()
                assert left > 0, f"never printed {pattern!r}:\n{self.text}"
                self._changed.wait(left)

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # it ended meanwhile: what it printed says why

    def finish(self) -> int:
        code = self.proc.wait(COMMAND_TIMEOUT)
        with self._changed:
            self._changed.wait_for(lambda: self._done, 10)
        return code


class Appliance:
    """The flagship as installed: its config, its data, the service, the Pico."""

    def __init__(self, tmp: Path) -> None:
        from web.kit.auth import set_pin

        self.pico = FakePico()
        self.port = free_port()
        self.data = tmp / "data"
        self.config = tmp / "config.toml"
        self.config.write_text(
            f'data_dir = "{self.data}"\n[reader]\nkind = "mcu"\nmcu_port = "{self.pico.path}"\n'
            f'[web]\nhost = "127.0.0.1"\nport = {self.port}\n[signals]\nbattle_phrase = false\n'
            # fast tunes: each self-test plays them all (the rehearsal checks no tempo)
            f'[tunes]\ntaps = "{FAST_TAPS}"\nbattle = "Charge:d=8,o=5,b=600:g4,c,e,4g.,e,2g"\n'
            'error = "Error:d=16,o=4,b=600:c,p,c"\nready = "Ready:d=16,o=5,b=600:c,e,g"\n'
            'fault = "Fault:d=16,o=4,b=600:c,p,c"\n',
            encoding="utf-8")
        self.env = dict(os.environ, GG_ARBITER_CONFIG=str(self.config), GG_ARBITER_PIN=PIN,
                        GG_ARBITER_LOG="WARNING")
        self.env.pop("GG_ARBITER_DATA", None)
        set_pin(self.data, PIN)
        self.service: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        if self.service is not None:
            return
        self.service = subprocess.Popen([*gg_arbiter(), "run"], env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.api("GET", "/api/status")
                return
            except OSError:
                assert self.service.poll() is None, "the service did not start"
                assert time.monotonic() < deadline, "the service never answered"
                time.sleep(0.1)

    def stop(self) -> None:
        if self.service is None:
            return
        self.service.terminate()  # as systemctl stop: SIGTERM
        self.service.wait(30)
        self.service = None

    @property
    def running(self) -> bool:
        return self.service is not None

    def api(self, method: str, path: str, body: object = None) -> dict[str, object]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Admin-PIN": PIN})
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer: dict[str, object] = json.load(reply)
            return answer

    def seat(self, slot: str, piece: str | None) -> None:
        """The builder's hand at a slot: with the service, through its simulator;
        without, on the Pico (the piece's sticker, seated)."""
        if self.running:
            if piece is None:
                self.api("DELETE", f"/api/sim/slots/{slot}")
            else:
                self.api("PUT", f"/api/sim/slots/{slot}", {"piece": piece})
            return
        letter = slot[0].upper()
        self.pico.stickers.pop(letter, None)
        self.pico.place(letter, None if piece is None else
                        sticker_uid(PhysicalPiece.parse(piece)))

    def all_enrolled(self) -> bool:
        # enrolled by the service (the simulator here: its stickers are kept apart) or,
        # with the service stopped, from the Pico
        return any(not TagRegistry(self.data / name).pieces_missing()
                   for name in (SIM_TAGS, "tags.json"))

    def close(self) -> None:
        self.stop()
        self.pico.unplug()


@pytest.fixture
def appliance(tmp_path: Path) -> Iterator[Appliance]:
    world = Appliance(tmp_path)
    yield world
    world.close()


# -- the builder's hands ----------------------------------------------------------------------


def _wait(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


class Hands:
    """What the builder does while each subcommand runs; before, beside and after it."""

    def __init__(self, world: Appliance) -> None:
        self.world = world

    def before(self, step: Step) -> None:
        if step.subcommand == "record":
            self.first_game()

    def during(self, step: Step, term: Terminal) -> None:
        if step.subcommand == "monitor":
            self.monitor(term)
        elif step.subcommand == "enroll":
            self.enroll(term)
        elif step.subcommand == "selftest --range":
            self.range_check(term)

    def first_game(self) -> None:
        """Step "The first game": White's Spy attacks Black's Five-star General."""
        world = self.world
        assert world.running, "the first game needs the arbiter running"
        before = int(str(world.api("GET", "/api/status")["challenge_count"]))
        world.seat("attacker", "W:SPY")
        world.seat("defender", "B:5*G")
        _wait(lambda: int(str(world.api("GET", "/api/status")["challenge_count"])) > before,
              "the challenge was judged")
        world.seat("attacker", None)
        world.seat("defender", None)

    def monitor(self, term: Terminal) -> None:
        world = self.world
        term.next(r"q \+ Enter")
        uid = sticker_uid(PhysicalPiece.parse("W:SPY#1"))
        for letter, slot in (("A", "attacker"), ("D", "defender")):
            world.pico.stickers.clear()
            world.pico.place(letter, uid, 0.0)
            term.next(rf"^{slot}\s+settled\s+PRESENT {uid}")
            world.pico.lift(letter, 45.0)  # held high above the slot: no reading
            term.next(rf"^{slot}\s+settled\s+EMPTY")
        world.pico.place("D", None)
        term.type("q")

    def enroll(self, term: Terminal) -> None:
        world = self.world
        while True:
            found = term.next(r"\[\d+/\d+\] Put (\S+) in the ATTACKER slot|Enrollment (ended|"
                              r"finished)|^Take the piece out")
            if found is None or found.group(2):
                break
            if found.group(0).startswith("Take"):
                world.seat("attacker", None)
                continue
            world.seat("attacker", found.group(1))
        if world.running:
            world.seat("attacker", None)

    def range_check(self, term: Terminal) -> None:
        pico = self.world.pico
        while True:
            found = term.next(r"(Empty both slots|hold the sticker (\d+) mm above the "
                              r"(ATTACKER|DEFENDER) slot's floor), then Enter: ")
            pico.stickers.clear()
            if found is None:  # done: the sticker goes back on its piece
                pico.place("A", None)
                return
            if found.group(2):
                pico.place(found.group(3)[0], "04A1B2C3D48E80", float(found.group(2)))
            else:
                pico.place("A", None)
            term.type("")


# -- the rehearsal -------------------------------------------------------------------------------


def rehearse(steps: list[Step], world: Appliance) -> list[tuple[str, str]]:
    """Every step in order; (command, output) of each command run."""
    hands = Hands(world)
    ran: list[tuple[str, str]] = []
    for step in steps:
        if step.subcommand == "systemctl":
            verb = step.argv[1]
            if verb in ("stop", "restart"):
                world.stop()
            if verb in ("start", "restart"):
                world.start()
            continue
        if step.subcommand in NOT_REHEARSED:
            continue
        hands.before(step)
        term = Terminal(step.argv, world.env)
        hands.during(step, term)
        code = term.finish()
        out = term.text
        assert code == 0, f"{step.text} exited {code}:\n{out}"
        for text in [CONTRACT[step.subcommand], *step.expect]:
            assert text in out, f"{step.text} did not print {text!r}:\n{out}"
        ran.append((step.text, out))
    return ran


def test_every_software_command_of_the_guide_runs_in_order(appliance: Appliance) -> None:
    steps = guide_steps(GUIDE.read_text(encoding="utf-8"))
    ran = rehearse(steps, appliance)
    assert [text for text, _ in ran] == [
        s.text for s in steps if s.subcommand not in ("systemctl", *NOT_REHEARSED)]
    assert appliance.all_enrolled(), "the guide's enrollment left pieces without a tag"


def test_a_command_that_prints_other_than_the_guide_says_fails(appliance: Appliance) -> None:
    steps = guide_steps("`gg-arbiter judge spy 5*g`\n<!-- expect: defender survives -->")
    with pytest.raises(AssertionError, match="did not print 'defender survives'"):
        rehearse(steps, appliance)
    assert "attacker (Spy) survives" in rehearse(guide_steps("`gg-arbiter judge spy 5*g`"),
                                                 appliance)[0][1]


def test_the_range_check_and_monitor_as_the_guide_should_run_them(appliance: Appliance) -> None:
    text = """
```sh
sudo systemctl stop gg-arbiter
gg-arbiter selftest --range
```
<!-- expect: ATTACKER: first reads 20 mm above its floor; the DEFENDER slot never reads it -->
<!-- expect: gain: keep 33 dB (reader.rx_gain_db = 33) -->
`gg-arbiter monitor` <!-- expect: attacker  settled  PRESENT -->
`sudo systemctl start gg-arbiter`"""
    ran = rehearse(guide_steps(text), appliance)
    assert [t for t, _ in ran] == ["gg-arbiter selftest --range", "gg-arbiter monitor"]
    assert appliance.running
