"""A disposable root for running ``setup.sh --service`` (or ``--hub``) on a machine that
is not a Pi.

setup.sh writes every path under ``$GG_ROOT`` and reads the Pi's model from
``$GG_MODEL_FILE``; the system commands it runs (apt-get, apt-cache, dpkg,
useradd, usermod, userdel, chown, systemctl, udevadm, raspi-config and the
Python that makes the venv) are fakes on ``PATH`` that record each call and
change the fake root the way the real ones would change a real system.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "setup.sh"

#: The fake commands: package tools, account tools, systemd, udev, raspi-config, Python.
COMMANDS = "apt-get apt-cache dpkg useradd usermod userdel chown systemctl udevadm"
COMMANDS += " raspi-config python3"
#: What a Raspberry Pi OS archive offers of the packages setup.sh asks for.
PI_OS_PACKAGES = ("python3-venv", "python3-dev", "gcc", "libc6-dev", "python3-lgpio",
                  "mosquitto")

# One program for every fake command; it acts on its own name. It runs under
# the real interpreter (its #! line), so the fake python3 can hand other work to it.
FAKE_PROGRAM = r"""
import json, os, sys
from pathlib import Path

name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
state = Path(os.environ["FAKE_STATE"])
root = Path(os.environ["GG_ROOT"])
REAL_PYTHON = sys.executable

def record(command):
    with open(state / "calls.jsonl", "a", encoding="utf-8") as log:
        log.write(json.dumps([command, *args]) + "\n")

def lines(path):
    return path.read_text().splitlines() if path.exists() else []

def write_lines(path, rows):
    path.write_text("".join(row + "\n" for row in rows))

def set_members(user, groups):
    rows = []
    for row in lines(root / "etc" / "group"):
        gname, pw, gid, members = (row.split(":") + [""])[:4]
        people = [m for m in members.split(",") if m and m != user]
        if gname in groups:
            people.append(user)
        rows.append(":".join([gname, pw, gid, ",".join(people)]))
    write_lines(root / "etc" / "group", rows)

if name == "python3":
    if args[:2] == ["-m", "venv"]:
        record("python3")
        venv = Path(args[-1])
        (venv / "bin").mkdir(parents=True, exist_ok=True)
        (venv / "bin" / "python").symlink_to(sys.argv[0])
        sys.exit(0)
    os.execv(REAL_PYTHON, [REAL_PYTHON, *args])

if name == "python":  # a fake venv's interpreter
    venv = Path(sys.argv[0]).parent.parent
    if args[:2] == ["-m", "pip"]:
        record("pip")
        command = venv / "bin" / "gg-arbiter"
        # This checkout's gg-arbiter, as pip would have installed it (GG_REPO: its root).
        command.write_text(
            "#!/bin/sh\n"
            f"PYTHONPATH={os.environ['GG_REPO']} exec {REAL_PYTHON} -c "
            "'import sys; from arbiter.app.cli import main; sys.exit(main())' \"$@\"\n")
        command.chmod(0o755)
        sys.exit(0)
    os.execv(REAL_PYTHON, [REAL_PYTHON, *args])

record(name)
installed = state / "dpkg-installed"
if name == "dpkg":
    sys.exit(0 if args[:1] == ["-s"] and args[1] in lines(installed) else 1)
if name == "apt-cache":
    sys.exit(0 if args[:1] == ["show"] and args[1] in lines(state / "apt-available") else 100)
if name == "apt-get":
    if "install" in args:
        wanted = [a for a in args[args.index("install") + 1:] if not a.startswith("-")]
        missing = [p for p in wanted if p not in lines(state / "apt-available")]
        if missing:
            print(f"E: Unable to locate package {missing[0]}", file=sys.stderr)
            sys.exit(100)
        write_lines(installed, lines(installed) + wanted)
        if "mosquitto" in wanted:
            # As Debian's package does: its program, its user, and its own service on
            # /etc/mosquitto, enabled and running.
            program = root / "usr" / "sbin" / "mosquitto"
            program.parent.mkdir(parents=True, exist_ok=True)
            program.write_text("#!/bin/sh\nexit 0\n")
            program.chmod(0o755)
            passwd, group = root / "etc" / "passwd", root / "etc" / "group"
            write_lines(passwd, lines(passwd)
                        + ["mosquitto:x:991:991::/var/lib/mosquitto:/usr/sbin/nologin"])
            write_lines(group, lines(group) + ["mosquitto:x:991:"])
            wants = root / "etc" / "systemd" / "system" / "multi-user.target.wants"
            wants.mkdir(parents=True, exist_ok=True)
            (wants / "mosquitto.service").symlink_to("/lib/systemd/system/mosquitto.service")
            write_lines(state / "active", lines(state / "active") + ["mosquitto.service"])
    sys.exit(0)
if name == "useradd":
    user = args[-1]
    home = args[args.index("--home-dir") + 1]
    shell = args[args.index("--shell") + 1]
    passwd = root / "etc" / "passwd"
    write_lines(passwd, lines(passwd) + [f"{user}:x:990:990::{home}:{shell}"])
    group = root / "etc" / "group"
    write_lines(group, lines(group) + [f"{user}:x:990:"])
    sys.exit(0)
if name == "usermod":
    groups = args[args.index("-G") + 1]
    set_members(args[-1], [g for g in groups.split(",") if g])
    sys.exit(0)
if name == "userdel":
    user = args[-1]
    passwd = root / "etc" / "passwd"
    write_lines(passwd, [r for r in lines(passwd) if not r.startswith(user + ":")])
    group = root / "etc" / "group"
    write_lines(group, [r for r in lines(group) if not r.startswith(user + ":")])
    set_members(user, [])
    sys.exit(0)
if name == "udevadm":
    sys.exit(1 if (state / "udev-down").exists() else 0)
if name == "systemctl":
    # Enabled: a link in multi-user.target.wants; running: a line in the state's "active".
    words = [a for a in args if not a.startswith("-")]
    verb, units = (words[0], words[1:]) if words else ("", [])
    wants = root / "etc" / "systemd" / "system" / "multi-user.target.wants"
    active = lines(state / "active")
    if verb == "is-enabled":
        sys.exit(0 if all((wants / u).is_symlink() for u in units) else 1)
    if verb == "is-active":
        sys.exit(0 if all(u in active for u in units) else 3)
    for unit in units:
        if verb == "enable":
            wants.mkdir(parents=True, exist_ok=True)
            link = wants / unit
            if not link.is_symlink():
                link.symlink_to("/etc/systemd/system/" + unit)
        elif verb == "disable":
            (wants / unit).unlink(missing_ok=True)
        if verb in ("start", "restart") and unit not in active:
            active.append(unit)
        if verb == "stop" or (verb == "disable" and "--now" in args):
            active = [u for u in active if u != unit]
    write_lines(state / "active", active)
    sys.exit(0)
sys.exit(0)  # chown, raspi-config: recorded only
"""


@dataclass
class Result:
    """One setup.sh run: exit status, output and the calls it made."""

    returncode: int
    output: str
    calls: list[list[str]] = field(default_factory=list)

    def called(self, command: str, *args: str) -> bool:
        """Whether some call of ``command`` had all of ``args`` among its arguments."""
        return any(c[0] == command and all(a in c[1:] for a in args) for c in self.calls)

    def lines_with(self, text: str) -> list[str]:
        return [line for line in self.output.splitlines() if text in line]


class FakeSystem:
    """A fake Raspberry Pi (or not) in ``base``: a root, fake commands and their records."""

    def __init__(
        self,
        base: Path,
        *,
        model: str = "Raspberry Pi 4 Model B Rev 1.5",
        groups: Iterable[str] = ("gpio", "i2c", "dialout"),
        available: Iterable[str] = PI_OS_PACKAGES,
        raspi_config: bool = True,
        systemd_running: bool = True,
        udev_running: bool = True,
    ) -> None:
        self.root = base / "root"
        self.state = base / "state"
        self.bin = base / "bin"
        for path in (self.root / "etc", self.state, self.bin):
            path.mkdir(parents=True)
        (self.root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
        (self.root / "etc" / "group").write_text(
            "root:x:0:\n" + "".join(f"{g}:x:{900 + i}:\n" for i, g in enumerate(groups))
        )
        self.model_file = self.state / "model"
        self.model_file.write_bytes(model.encode() + b"\0")  # the device tree's NUL
        (self.state / "apt-available").write_text("".join(f"{p}\n" for p in available))
        if systemd_running:
            (self.root / "run" / "systemd" / "system").mkdir(parents=True)
        if not udev_running:
            (self.state / "udev-down").touch()
        program = self.bin / "fake-command"
        program.write_text(f"#!{sys.executable}\n{FAKE_PROGRAM}")
        program.chmod(0o755)
        for name in COMMANDS.split():
            if name != "raspi-config" or raspi_config:
                (self.bin / name).symlink_to(program)

    def run(self, *args: str) -> Result:
        """``bash setup.sh ARGS`` against this system; never touches the real one."""
        calls_file = self.state / "calls.jsonl"
        calls_file.unlink(missing_ok=True)
        env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "HOME": str(self.state),
            "LANG": "C.UTF-8",
            "GG_ROOT": str(self.root),
            "GG_MODEL_FILE": str(self.model_file),
            "FAKE_STATE": str(self.state),
            "GG_REPO": str(ROOT),
        }
        done = subprocess.run(
            ["bash", str(SETUP), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        calls = (
            [json.loads(line) for line in calls_file.read_text().splitlines()]
            if calls_file.exists()
            else []
        )
        return Result(done.returncode, done.stdout + done.stderr, calls)

    def path(self, absolute: str) -> Path:
        """Where an absolute path of the installed system is in the fake root."""
        return self.root / absolute.lstrip("/")

    def active_units(self) -> list[str]:
        """The units the fake systemd runs now (started and not stopped since)."""
        active = self.state / "active"
        return active.read_text().splitlines() if active.exists() else []

    def group_members(self, group: str) -> list[str]:
        for row in self.path("/etc/group").read_text().splitlines():
            name, _, _, members = row.split(":")
            if name == group:
                return [m for m in members.split(",") if m]
        raise KeyError(group)

    def snapshot(self) -> dict[str, tuple[int, str]]:
        """Every file and link under the root: mode and content (or link target)."""
        seen: dict[str, tuple[int, str]] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in [*dirnames, *filenames]:
                path = Path(dirpath) / name
                rel = str(path.relative_to(self.root))
                mode = path.lstat().st_mode
                if path.is_symlink():
                    seen[rel] = (mode, os.readlink(path))
                elif path.is_file():
                    seen[rel] = (mode, path.read_bytes().hex())
                else:
                    seen[rel] = (mode, "")
        return seen
