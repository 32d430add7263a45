"""``setup.sh --hub`` and ``--uninstall --hub`` (scripts/appliance/hub.sh): the venue's
broker and hub as systemd services, in a disposable root (tests/support/fake_system.py)."""

from __future__ import annotations

import base64
import contextlib
import grp
import os
import pwd
import re
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.cli import build_parser
from arbiter.venue.broker_logins import password_line
from tests.support.fake_system import ROOT, FakeSystem, Result
from tests.support.mqtt import make_tls, port_open
from tests.support.spawn import free_port
from tests.support.systemd_unit import Unit, one, parse_unit
from tests.support.tools import missing, require_tool
from tests.support.venue import Node
from tests.support.waiting import WAIT, wait_until

HUB_UNIT = "/etc/systemd/system/gg-hub.service"
BROKER_UNIT = "/etc/systemd/system/gg-broker.service"
HUB_ENV = "/etc/gg-hub/hub.env"
HUB_DATA = "/var/lib/gg-hub"
BROKER = "/var/lib/gg-broker"
VENV = "/opt/gg-arbiter/venv"
WANTS = "/etc/systemd/system/multi-user.target.wants"
TABLE_UNIT = "/etc/systemd/system/gg-arbiter.service"
OFF_PI = "QEMU Virtual Machine"
EVENT, TABLES = "open-2026", 3


def install(system: FakeSystem, *more: str) -> Result:
    result = system.run("--hub", "--event", EVENT, "--tables", str(TABLES), *more)
    assert result.returncode == 0, result.output
    return result


def unit(system: FakeSystem, path: str) -> Unit:
    return parse_unit(system.path(path).read_text())


def hub_env(system: FakeSystem) -> dict[str, str]:
    """hub.env as systemd's EnvironmentFile= reads it: KEY=VALUE lines, # comments."""
    rows = system.path(HUB_ENV).read_text().splitlines()
    return dict(row.split("=", 1) for row in rows if row and not row.startswith("#"))


def exec_start(system: FakeSystem) -> list[str]:
    """The hub's command line as systemd runs it: ${NAME} from the unit's EnvironmentFile."""
    service = unit(system, HUB_UNIT)["Service"]
    assert one(service, "EnvironmentFile") == HUB_ENV
    env = hub_env(system)
    return [re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], word)
            for word in shlex.split(one(service, "ExecStart"))]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def hub_notifies() -> bool:
    """Whether ``gg-arbiter hub`` tells systemd READY=1 (as the table's run does)."""
    sources = [ROOT / "arbiter" / "app" / "commands" / "hub.py",
               *sorted((ROOT / "arbiter" / "hub").glob("*.py"))]
    return any("READY=1" in path.read_text(encoding="utf-8") for path in sources)


def logs_in(passwd: str, user: str, password: str) -> bool:
    """Whether Mosquitto's password file lets ``user`` in with ``password`` (PBKDF2-SHA512,
    its salt taken from the file's line)."""
    line = next(row for row in passwd.splitlines() if row.startswith(f"{user}:"))
    salt = base64.b64decode(line.split("$")[3])
    return password_line(user, password, salt) == line


def test_hub_install_off_a_pi(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    result = install(system, "--host", "hall.local")

    # Mosquitto and a venv from Debian; no compilers (no Pi pin libraries to build).
    assert result.called("apt-get", "install", "mosquitto")
    assert result.called("apt-get", "install", "python3-venv")
    assert not result.called("apt-get", "install", "gcc")
    src = system.path("/opt/gg-arbiter/src")
    assert result.called("pip", "install", "--require-hashes", "-r", f"{src}/requirements.lock")
    assert not result.lines_with("not a Raspberry Pi")

    # The broker: broker-config's files, run by their own unit as Debian's mosquitto user.
    conf = system.path(f"{BROKER}/mosquitto.conf").read_text()
    assert "allow_anonymous false" in conf and f"password_file {system.path(BROKER)}/passwd" in conf
    broker = unit(system, BROKER_UNIT)
    service = broker["Service"]
    assert one(service, "ExecStart") == f"/usr/sbin/mosquitto -c {BROKER}/mosquitto.conf"
    assert one(service, "User") == "mosquitto"
    assert one(service, "Type") == "notify"  # Debian's Mosquitto tells systemd when it listens
    assert one(service, "Restart") == "on-failure"
    # Its store, where broker-config's conf puts it, is the one place it may write.
    writable = one(service, "ReadWritePaths").split()
    assert writable == [f"{BROKER}/db"]
    if re.search(r"^persistence true$", conf, re.M):
        store = re.search(r"^persistence_location (\S+)$", conf, re.M)
        assert store is not None
        store_path = "/" + str(Path(store.group(1)).relative_to(system.root))
        assert any(store_path.rstrip("/").startswith(path) for path in writable)
    assert one(service, "ProtectSystem") == "strict"
    assert one(service, "NoNewPrivileges") == "yes"

    # The hub: its own user, after the broker, restarted whenever it stops unasked.
    hub = unit(system, HUB_UNIT)
    service = hub["Service"]
    assert one(service, "User") == "gg-hub"
    assert "gg-broker.service" in one(hub["Unit"], "After").split()
    assert "gg-broker.service" in one(hub["Unit"], "Wants").split()
    assert one(service, "Restart") == "on-failure"
    assert one(hub["Unit"], "StartLimitIntervalSec") == "0"  # never gives up
    assert one(service, "Type") == ("notify" if hub_notifies() else "exec")
    if hub_notifies():  # from the hub itself (gg-arbiter hub is the main process)
        assert one(service, "NotifyAccess") == "main"
        assert int(one(service, "WatchdogSec")) >= 10  # fed at half of it; no hair trigger
    assert one(service, "ProtectSystem") == "strict"
    assert one(service, "NoNewPrivileges") == "yes"
    assert HUB_DATA in one(service, "ReadWritePaths").split()
    assert one(service, "StateDirectoryMode") == "0700"
    for text in (system.path(HUB_UNIT).read_text(), system.path(BROKER_UNIT).read_text()):
        assert not re.search(r"@[A-Z]+@", text)  # every placeholder filled

    # Its command line is the hub's own, serving this event from this broker as `hub`.
    argv = exec_start(system)
    assert argv[0] == f"{VENV}/bin/gg-arbiter"
    args = build_parser().parse_args(argv[1:])
    assert (args.command, args.hub_command) == ("hub", None)
    assert args.event == EVENT and args.data == HUB_DATA and args.port == 8088
    assert args.broker == "mqtt://hub@127.0.0.1:1883"
    assert args.password_file == f"{HUB_DATA}/hub.password"

    # Passwords: the hub's two logins copied to its data, 0600 and gg-hub's; they are the
    # ones the broker's password file lets in.
    data = system.path(HUB_DATA)
    assert mode(data) == 0o700 and result.called("chown", "gg-hub:gg-hub", str(data))
    passwd = system.path(f"{BROKER}/passwd")
    for user in ("hub", "organiser"):
        secret = data / f"{user}.password"
        assert mode(secret) == 0o600
        assert result.called("chown", "gg-hub:gg-hub", str(secret))
        assert logs_in(passwd.read_text(), user, secret.read_text().strip()), user
    assert mode(passwd) == 0o600 and result.called("chown", "mosquitto:mosquitto", str(passwd))
    db = system.path(f"{BROKER}/db")
    assert mode(db) == 0o700 and result.called("chown", "-R", "mosquitto:mosquitto", str(db))
    assert mode(system.path(BROKER)) == 0o750
    assert result.called("chown", "root:mosquitto", str(system.path(BROKER)))
    # The tables' files (join files and passwords) and every secret: root's, 0600.
    tables = system.path(f"{BROKER}/tables")
    assert sorted(p.name for p in tables.iterdir()) == sorted(
        f"table-{n}.{ext}" for n in range(1, TABLES + 1) for ext in ("toml", "password"))
    for directory in (tables, system.path(f"{BROKER}/secrets")):
        assert mode(directory) == 0o700
        assert result.called("chown", "-R", "root:root", str(directory))
        for path in directory.iterdir():
            assert mode(path) == 0o600, path
    assert 'broker = "mqtt://table-1@hall.local:1883"' in (tables / "table-1.toml").read_text()
    # hub.env: no secret in it, readable by all.
    env_text = system.path(HUB_ENV).read_text()
    assert mode(system.path(HUB_ENV)) == 0o644
    for secret in system.path(f"{BROKER}/secrets").iterdir():
        assert secret.read_text().strip() not in env_text

    # Enabled and running; Debian's own broker (port 1883 too) stopped and disabled.
    for name in ("gg-broker.service", "gg-hub.service"):
        assert system.path(f"{WANTS}/{name}").is_symlink()
        assert name in system.active_units()
    assert not system.path(f"{WANTS}/mosquitto.service").is_symlink()
    assert "mosquitto.service" not in system.active_units()
    assert result.lines_with("disabled Debian's mosquitto.service")


def test_hub_rerun_changes_nothing(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    before = system.snapshot()
    again = system.run("--hub")  # the event and tables from hub.env
    assert again.returncode == 0, again.output
    assert system.snapshot() == before  # the same logins: the tables keep theirs
    assert again.lines_with("nothing changed")
    assert not again.called("pip") and not again.called("useradd")
    assert not again.called("apt-get", "install")
    assert again.called("systemctl", "start", "gg-broker.service")
    assert again.called("systemctl", "start", "gg-hub.service")
    assert not again.called("systemctl", "restart")
    assert not again.called("systemctl", "disable")

    # Disabled by hand: a rerun enables it again, and says it changed something.
    system.path(f"{WANTS}/gg-hub.service").unlink()
    third = system.run("--hub")
    assert third.returncode == 0, third.output
    assert system.path(f"{WANTS}/gg-hub.service").is_symlink()
    assert not third.lines_with("nothing changed")


def restarted(result: Result) -> set[str]:
    return {unit for call in result.calls if call[:2] == ["systemctl", "restart"]
            for unit in call[2:]}


def test_hub_rerun_restarts_what_changed(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    # A unit edited by hand is put back as the project has it, and only its service
    # restarted (the hub reconnects to a restarted broker by itself).
    for path, unit_name in ((HUB_UNIT, "gg-hub.service"), (BROKER_UNIT, "gg-broker.service")):
        unit_file = system.path(path)
        unit_file.write_text(unit_file.read_text().replace("RestartSec=", "RestartSec=1"))
        result = system.run("--hub")
        assert result.returncode == 0, result.output
        assert "RestartSec=1" not in unit_file.read_text()
        assert restarted(result) == {unit_name}
        assert result.called("systemctl", "start")  # the other one, running already

    password = system.path(f"{HUB_DATA}/hub.password")
    password.write_text("stale\n")
    result = system.run("--hub")
    assert result.returncode == 0, result.output
    assert password.read_text() == system.path(f"{BROKER}/secrets/hub.password").read_text()
    assert restarted(result) == {"gg-hub.service"}


def test_hub_rerun_for_another_venue_is_refused(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    before = system.snapshot()
    cert = tmp_path / "cert.pem"
    cert.write_text("x")
    for change in (("--event", "other"), ("--tables", "4"), ("--broker-port", "1884"),
                   ("--host", "venue.lan"), ("--tls-cert", str(cert), "--tls-key", str(cert))):
        result = system.run("--hub", *change)
        assert result.returncode != 0, change
        assert result.lines_with(f"the venue here is event {EVENT}, {TABLES} tables"), change
        assert result.lines_with("--uninstall --hub --purge")
        assert system.snapshot() == before
        assert result.calls == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--hub",), "the first --hub install needs --event SLUG and --tables N"),
        (("--hub", "--event", "open"), "needs --event SLUG and --tables N"),
        (("--hub", "--event", "a/b", "--tables", "2"), "--event must be 1 to 32"),
        (("--hub", "--event", "open", "--tables", "0"), "--tables must be 1 to 1000"),
        (("--hub", "--event", "open", "--tables", "2", "--broker-port", "70000"),
         "--broker-port must be 1 to 65535"),
        (("--hub", "--event", "open", "--tables", "2", "--host", "a b"), "--host must be"),
    ],
)
def test_hub_bad_values_are_refused_before_anything_changes(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    result = system.run(*args)
    assert result.returncode != 0
    assert says in result.output
    assert result.calls == []
    assert not system.path("/opt/gg-arbiter").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--event", "open"), "go with --hub"),
        (("--uninstall", "--hub", "--tables", "3"), "go with --hub"),
        (("--hub", "--service"), "separate runs"),
        (("--hub", "--dev"), "separate runs"),
        (("--uninstall", "--hub", "--service"), "separate runs"),
        (("--hub", "--event"), "--event needs a value"),
        (("--hub", "--event", "e", "--tables", "2", "--tls-cert", "/etc/passwd"),
         "give --tls-cert and --tls-key together"),
        (("--hub", "--event", "e", "--tables", "2", "--tls-cert", "/nope.pem", "--tls-key",
          "/etc/passwd"), "--tls-cert /nope.pem: no such file"),
    ],
)
def test_hub_bad_options_are_refused(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    system = FakeSystem(tmp_path)
    result = system.run(*args)
    assert result.returncode == 2
    assert says in result.output
    assert result.calls == []


def test_hub_with_tls(tmp_path: Path) -> None:
    """The certificate and key copied where the broker (as mosquitto) may read them, the
    tables' files for mqtts:// with the CA, the hub on the plain port of this machine."""
    tls = make_tls(tmp_path / "tls", "venue-pi.local")
    system = FakeSystem(tmp_path / "venue", model=OFF_PI)
    result = install(system, "--host", "venue-pi.local", "--tls-cert", str(tls.cert),
                     "--tls-key", str(tls.key), "--tls-ca", str(tls.ca))
    copies = system.path(f"{BROKER}/tls")
    assert mode(copies) == 0o750
    assert result.called("chown", "root:mosquitto", str(copies))
    for name, original, want in (("broker.pem", tls.cert, 0o644), ("broker.key", tls.key, 0o640)):
        assert (copies / name).read_bytes() == original.read_bytes()
        assert mode(copies / name) == want
        assert result.called("chown", "root:mosquitto", str(copies / name))
    conf = system.path(f"{BROKER}/mosquitto.conf").read_text().splitlines()
    assert f"certfile {copies}/broker.pem" in conf and f"keyfile {copies}/broker.key" in conf
    assert "listener 1883 127.0.0.1" in conf  # plain MQTT for the hub beside it only
    assert hub_env(system)["GG_HUB_BROKER"] == "mqtt://hub@127.0.0.1:1883"
    tables = system.path(f"{BROKER}/tables")
    table = (tables / "table-2.toml").read_text()
    assert 'broker = "mqtts://table-2@venue-pi.local:8883"' in table
    assert 'ca_file = "venue-ca.pem"' in table
    assert (tables / "venue-ca.pem").read_bytes() == tls.ca.read_bytes()
    assert mode(tables / "venue-ca.pem") == 0o600

    # A renewed certificate: a rerun puts it in place and restarts the broker alone.
    logins = system.path(f"{BROKER}/passwd").read_text()
    renewed = make_tls(tmp_path / "renewed", "venue-pi.local")
    again = system.run("--hub", "--tls-cert", str(renewed.cert), "--tls-key", str(renewed.key))
    assert again.returncode == 0, again.output
    assert (copies / "broker.key").read_bytes() == renewed.key.read_bytes()
    assert restarted(again) == {"gg-broker.service"}
    assert system.path(f"{BROKER}/passwd").read_text() == logins
    assert system.run("--hub").lines_with("nothing changed")


def test_hub_on_a_pi_shares_the_tables_venv(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    assert system.run("--service").returncode == 0
    result = install(system)
    # The Pi's lock (the table's service runs from the same venv), already installed.
    assert result.lines_with("is this checkout already")
    assert not result.called("pip")

    # Removing the table keeps what the hub runs from, and the other way round.
    table_gone = system.run("--uninstall")
    assert table_gone.returncode == 0, table_gone.output
    assert system.path(f"{VENV}/bin/gg-arbiter").exists()
    assert system.path("/usr/local/bin/gg-arbiter").is_symlink()
    assert system.path(HUB_UNIT).exists()
    assert system.run("--service").returncode == 0
    hub_gone = system.run("--uninstall", "--hub")
    assert hub_gone.returncode == 0, hub_gone.output
    assert system.path(f"{VENV}/bin/gg-arbiter").exists()
    assert system.path(TABLE_UNIT).exists()
    assert "gg-arbiter.service" in system.active_units()


def test_hub_on_a_pi_alone_installs_the_pi_lock(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path)
    result = install(system)
    src = system.path("/opt/gg-arbiter/src")
    assert result.called("pip", "install", "--require-hashes", "-r",
                         f"{src}/requirements-pi.lock")
    assert result.called("apt-get", "install", "gcc")  # RPi.GPIO is built


def test_hub_uninstall_keeps_the_ledger_and_logins(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    (system.path(HUB_DATA) / "hub.sqlite").write_text("kept")
    logins = system.path(f"{BROKER}/passwd").read_text()
    result = system.run("--uninstall", "--hub")
    assert result.returncode == 0, result.output
    assert result.called("systemctl", "disable", "--now", "gg-hub.service", "gg-broker.service")
    for gone in (HUB_UNIT, BROKER_UNIT, "/opt/gg-arbiter", "/usr/local/bin/gg-arbiter",
                 f"{WANTS}/gg-hub.service", f"{WANTS}/gg-broker.service"):
        assert not system.path(gone).exists() and not system.path(gone).is_symlink(), gone
    assert system.active_units() == []
    assert (system.path(HUB_DATA) / "hub.sqlite").read_text() == "kept"
    assert not result.called("userdel")
    assert result.lines_with("sudo systemctl enable --now mosquitto")
    # Installing again carries on: same event, same logins, same ledger.
    again = system.run("--hub")
    assert again.returncode == 0, again.output
    assert system.path(f"{BROKER}/passwd").read_text() == logins
    assert (system.path(HUB_DATA) / "hub.sqlite").read_text() == "kept"


def test_hub_purge_removes_ledger_logins_and_user(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    result = system.run("--uninstall", "--hub", "--purge")
    assert result.returncode == 0, result.output
    for gone in (HUB_DATA, BROKER, "/etc/gg-hub", HUB_UNIT, BROKER_UNIT):
        assert not system.path(gone).exists(), gone
    assert result.called("userdel", "gg-hub")
    passwd = system.path("/etc/passwd").read_text()
    assert "gg-hub:" not in passwd
    assert "mosquitto:" in passwd  # Debian's package's user


def test_hub_in_a_chroot_is_enabled_for_next_boot(tmp_path: Path) -> None:
    system = FakeSystem(tmp_path, model=OFF_PI, systemd_running=False)
    result = install(system)
    assert result.called("systemctl", f"--root={system.root}", "enable", "gg-broker.service",
                         "gg-hub.service")
    assert not result.called("systemctl", "start") and not result.called("systemctl", "restart")
    assert result.called("systemctl", f"--root={system.root}", "disable", "mosquitto.service")
    assert result.lines_with("start at the next boot")
    assert system.path(f"{WANTS}/gg-hub.service").is_symlink()
    assert not system.path(f"{WANTS}/mosquitto.service").is_symlink()


def test_rendered_units_verify(tmp_path: Path) -> None:
    analyze = require_tool("systemd-analyze")
    system = FakeSystem(tmp_path, model=OFF_PI)
    install(system)
    # verify checks that each command is an executable file of the root (the fake venv's
    # gg-arbiter, the fake package's mosquitto: nothing else, such as a kill that a minimal
    # Debian lacks) and loads the units they depend on: this machine's, seen from the root.
    units = "/usr/lib/systemd/system"
    shutil.copytree(units, system.path(units), symlinks=True)
    done = subprocess.run(
        [analyze, "verify", f"--root={system.root}", HUB_UNIT, BROKER_UNIT],
        capture_output=True, text=True, timeout=60, check=False)
    problems = [line for line in (done.stdout + done.stderr).splitlines()
                if "gg-" in line or "Unknown" in line]
    assert done.returncode == 0 and not problems, done.stdout + done.stderr
    # Hardened: systemd's own review rates each under 2 of 10 (venue.md says so).
    for path in (HUB_UNIT, BROKER_UNIT):
        review = subprocess.run(
            [analyze, "security", "--offline=true", f"--root={system.root}", path],
            capture_output=True, text=True, timeout=60, check=False)
        level = re.search(r"Overall exposure level for \S+: ([\d.]+)", review.stdout)
        assert level is not None, review.stdout + review.stderr
        assert float(level.group(1)) < 2.0, review.stdout


def replay_chown(result: Result, users: dict[str, str]) -> None:
    """Give the files the owners the install's (recorded) chown calls named, with this
    machine's accounts; ``users`` maps an account it lacks to one it has."""
    for call in (c for c in result.calls if c[0] == "chown"):
        recursive = "-R" in call
        owner, *paths = [a for a in call[1:] if a != "-R"]
        user, group = (users.get(name, name) for name in owner.split(":"))
        uid, gid = pwd.getpwnam(user).pw_uid, grp.getgrnam(group).gr_gid
        for path in map(Path, paths):
            for each in [path, *(path.rglob("*") if recursive else [])]:
                os.chown(each, uid, gid)


@contextlib.contextmanager
def installed_broker(system: FakeSystem, result: Result, port: int,
                     workdir: Path) -> Iterator[Path]:
    """Mosquitto on the installed conf as the unit runs it: as root here, the files given
    to their owners and the broker run as Debian's ``mosquitto``, which must read its
    config and logins and write its store; else as this user. Yields its log."""
    conf = system.path(f"{BROKER}/mosquitto.conf")
    as_user = os.geteuid() == 0
    if as_user:
        try:
            pwd.getpwnam("mosquitto")
        except KeyError:
            missing("the user mosquitto (Debian's package mosquitto makes it)")
        replay_chown(result, {"gg-hub": "root"})  # the hub runs as this test's user
    log = workdir / "broker.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [require_tool("mosquitto"), "-c", str(conf)], stdout=out, stderr=subprocess.STDOUT,
            user="mosquitto" if as_user else None, group="mosquitto" if as_user else None,
            extra_groups=[] if as_user else None)
    try:
        wait_until(lambda: port_open(port) or proc.poll() is not None, what="the broker")
        assert proc.poll() is None, log.read_text()
        if as_user:
            assert os.stat(f"/proc/{proc.pid}").st_uid == pwd.getpwnam("mosquitto").pw_uid
        yield log
    finally:
        proc.terminate()
        proc.wait(WAIT)


def test_installed_hub_logs_in_to_the_installed_broker() -> None:
    """The installed files run: Mosquitto (as its own user, when this runs as root) on the
    conf, logins and store the install wrote with their owners and modes, and the hub
    with the unit's command line (hub.env, the copied password)."""
    port = free_port()
    # Under /tmp, where the mosquitto user can reach the root (pytest's are private).
    with tempfile.TemporaryDirectory(prefix="hub-install-", dir="/tmp") as tmp:
        base = Path(tmp)
        base.chmod(0o755)
        system = FakeSystem(base / "venue", model=OFF_PI)
        result = install(system, "--broker-port", str(port), "--host", "127.0.0.1")
        # The unit's command, on this machine: this checkout's gg-arbiter, the root's data.
        argv = [word.replace(HUB_DATA, str(system.path(HUB_DATA)))
                for word in exec_start(system)]
        web = free_port()
        argv[argv.index("--port") + 1] = str(web)
        hub = Node([*argv[1:], "--host", "127.0.0.1"], web, "hub web on")
        with installed_broker(system, result, port, base) as log:
            try:
                hub.start()
                wait_until(lambda: "u'hub'" in log.read_text(), what="the hub logged in")
                assert isinstance(hub.call("GET", "/api/venue"), dict)
            finally:
                hub.stop()
            text = log.read_text()
        # (The hub's check of the listener before it logs in shows as a protocol error.)
        assert "not authorised" not in text.lower() and "denied" not in text.lower(), text
        # It saved its store where the unit lets it write (on its stop, at the latest).
        conf = system.path(f"{BROKER}/mosquitto.conf").read_text()
        if re.search(r"^persistence true$", conf, re.M):
            assert list(system.path(f"{BROKER}/db").iterdir()), text
