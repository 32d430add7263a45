"""``gg-arbiter broker-config``: a locked-down Mosquitto for a venue of N tables.

Writes ``mosquitto.conf`` (no anonymous access), ``passwd`` (Mosquitto's
PBKDF2-SHA512 format, the one ``mosquitto_passwd`` writes), ``acl`` (each table
writes only its own four topics, named exactly (so the broker keeps at most four
retained messages of a table's login, whatever it publishes), and reads only its
assignment and resend requests; the hub reads everything of the event and writes the assignments and
resend requests; ``organiser``, the hub's commands run beside it, only writes those;
``hub-table-N``, the hub's session for table N, with the hub's password, reads that
table's events and records),
one password file per user under ``secrets/``, and for each table one small file,
``tables/table-N.toml`` (its ``[tournament]`` settings) beside its password
(``tables/table-N.password``), which ``gg-arbiter join`` (or ``setup.sh --service
--venue``) installs on the table. With ``--tls-cert`` and ``--tls-key`` the broker
also listens with TLS (``mqtts://``) and its plain port serves only its own machine.

Each login is its client id (``use_username_as_clientid``): one table's password
cannot take over the hub's session nor another table's, which a client id chosen by
the client could (MQTT gives a new connection the id's session and drops the old one).
The logins and the ACL are :mod:`arbiter.venue.broker_logins`; this module writes the
broker's configuration and the files.
"""

from __future__ import annotations

import grp
import ipaddress
import os
import pwd
import secrets
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from arbiter.fleet.settings import NAME
from arbiter.mqtt.address import TLS_PORT, BrokerAddress, table_session_login
from arbiter.mqtt.errors import BrokerAddressError
from arbiter.venue.broker_logins import (
    HUB_USER,
    ORGANISER_USER,
    acl_text,
    password_line,
    table_user,
)
from arbiter.venue.errors import BrokerConfigError
from arbiter.wire import (
    MAX_BYTES,
    TABLE_WRITES,
)

#: Messages the broker holds for each of the hub's sessions while it is away. The hub
#: keeps one session per table for that table's events and records
#: (:mod:`arbiter.hub.sessions`), so a table's queue holds its own only: a game has at
#: most 41 challenges (each takes at least one of 42 pieces off the board and the last one
#: left is a Flag), so at most 43 events and a record; 1,000 holds a day of rounds. The
#: hub's main session (statuses, ``online``, every table's events again) may lose messages
#: to a flood: its statuses are retained (sent again at each subscription) and its events
#: are in the tables' sessions.
QUEUE_PER_CLIENT = 1000
#: Messages the main session gets at once when it subscribes, per table: its retained
#: ``online``, ``status``, ``assignment`` and ``resend`` (the broker queues them within the
#: same bound), twice over.
BURST_PER_TABLE = 8
#: Bytes the broker holds per client at most, beside the count: 1,000 events of the wire's
#: largest (4 KiB), or 200 records of a long game (20 KiB); real events are about 300
#: bytes. One login flooding fills its own table's session and the main one: 8 MiB,
#: whatever it sends.
QUEUE_BYTES = 4 * 1024 * 1024
#: The largest MQTT packet a client may send (Mosquitto's ``max_packet_size``, which is
#: global: every topic kind comes over a table's one connection, so no listener split can
#: bound them apart). The wire's largest payload is a record's 64 KiB
#: (:data:`arbiter.wire.MAX_BYTES`); a packet adds its fixed header (5 bytes), the topic
#: (2 + at most about 200 bytes: ``gg/<event>/table/<table>/status``) and a
#: packet id (2): 4 KiB is room to spare. A larger packet disconnects its sender; a
#: payload over its own topic's smaller limit (a 6 KiB event) passes the broker and is
#: refused by the hub (:func:`arbiter.wire.parse`), logged by the one throttle.
MAX_PACKET = max(MAX_BYTES.values()) + 4 * 1024
#: What one table's login can make the broker keep retained, at most: one message on each
#: topic it may write (:data:`arbiter.wire.TABLE_WRITES`, granted by exact name), each at
#: most a packet. Its records share one retained topic (the latest record), so no count
#: of games, nor a flood of topics, grows it.
RETAINED_PER_TABLE = len(TABLE_WRITES) * MAX_PACKET
#: The broker's heap at most (Mosquitto's ``memory_limit``), in bytes: a base, and per
#: table its retained state (at most :data:`RETAINED_PER_TABLE`, 272 KiB; a real status
#: and latest record are about 25 KiB), its hub session's queue while the hub is away (a
#: day of rounds: about 450 events of 300 bytes and 15 records of 20 KiB, under 450 KiB)
#: and its connection. The bound is the backstop, no longer what stops one login: one
#: table's worst (its retained topics, its hub session's queue and the main session's,
#: :data:`QUEUE_BYTES` each) is about 8.3 MiB, well inside the base, so one table alone
#: cannot bring the broker to its limit and make it refuse the others'. Before records
#: shared one topic (one a game, which Mosquitto cannot count per login) a table could
#: fill it, and each table was given 2 MiB for them.
MEMORY_BASE = 32 * 1024 * 1024
MEMORY_PER_TABLE = 1024 * 1024
#: Seconds between saves of the broker's store (retained messages and the hub's sessions
#: with their queues). Not on every change: a store of N MB rewritten per message was the
#: red team's 1.25 GB per 10 s. What a crash loses of the last half minute comes back: the
#: tables publish their retained state again when they reconnect, and the hub asks them
#: for events their status says it lacks (a resend).
AUTOSAVE_SECONDS = 30
#: The user Debian's Mosquitto drops to when started as root, before it reads its files.
BROKER_USER = "mosquitto"


@dataclass(frozen=True)
class TlsListener:
    """The broker's TLS listener: its certificate (chain) and private key, PEM files."""

    cert: Path
    key: Path
    port: int = TLS_PORT


def listener_lines(port: int, tls: TlsListener | None, listen: str = "") -> list[str]:
    """The listeners: plain on ``port``; with TLS, plain only on this machine. ``listen``:
    the address the venue's listener binds ("" every address)."""
    at = f" {listen}" if listen else ""
    if tls is None:
        return [f"listener {port}{at}"]
    return [
        "# Plain MQTT only for programs on this machine: the venue network gets TLS only.",
        f"listener {port} 127.0.0.1",
        "# TLS: tables ([tournament] broker = \"mqtts://HOST:PORT\", ca_file) and the hub",
        "# (--broker mqtts://hub@HOST:PORT --ca-file) check this certificate against the CA",
        "# that signed it; HOST must be a name (or address) the certificate was made for.",
        "# The user mosquitto runs as ('mosquitto' on Debian) must read both files.",
        f"listener {tls.port}{at}",
        f"certfile {tls.cert}",
        f"keyfile {tls.key}",
    ]


def queue_size(tables: int) -> int:
    """``max_queued_messages`` for ``tables`` tables: a day of a table's events, and the
    main session's retained state of every table given at its subscription."""
    return max(QUEUE_PER_CLIENT, BURST_PER_TABLE * tables)


def memory_limit(tables: int) -> int:
    """``memory_limit`` for ``tables`` tables (see MEMORY_BASE)."""
    return MEMORY_BASE + MEMORY_PER_TABLE * tables


def conf_text(out: Path, port: int, tls: TlsListener | None = None, *, tables: int = 1,
              listen: str = "") -> str:
    """The broker's ``mosquitto.conf`` (``tables``: how many it serves, for the comment)."""
    return "\n".join([
        f"# gg-arbiter broker-config: the venue broker for {tables} table(s)"
        " (mosquitto -c this file).",
        *listener_lines(port, tls, listen),
        "allow_anonymous false",
        f"password_file {out / 'passwd'}",
        f"acl_file {out / 'acl'}",
        "# A client's id is its login: no password can take over another's session.",
        "use_username_as_clientid true",
        "# No packet over the wire format's largest message (a 64 KiB record) and its",
        "# topic: a larger one disconnects its sender.",
        f"max_packet_size {MAX_PACKET}",
        "# What the broker holds for each client while it is away: the hub has a session",
        "# per table for its events, so a table's flood fills its own queue, not another's.",
        f"max_queued_messages {queue_size(tables)}",
        f"max_queued_bytes {QUEUE_BYTES}",
        "# The broker's memory at most, a backstop: a table's login keeps at most four",
        "# retained messages (its ACL names its topics exactly) and its hub sessions' queues",
        "# are bounded above, so one table cannot fill it.",
        f"memory_limit {memory_limit(tables)}",
        "# Keep retained status, records and assignments, and the hub's sessions, across a",
        "# broker restart; saved every half minute, never per message (a store rewritten per",
        "# message is gigabytes a minute under a flood). What a crash loses comes back: the",
        "# tables publish their state again and the hub asks them for missing events.",
        "persistence true",
        f"persistence_location {out / 'db'}/",
        "autosave_on_changes false",
        f"autosave_interval {AUTOSAVE_SECONDS}",
        "# Errors, warnings and notices (logins, disconnections); not 'information',",
        "# which says 'Saving in-memory database' at every save.",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "",
    ])


@dataclass(frozen=True)
class BrokerFiles:
    conf: Path
    passwd: Path
    acl: Path
    secrets: Path
    users: tuple[str, ...]
    #: ``tables/``: each table's ``table-N.toml`` and ``table-N.password``.
    tables: Path
    #: The broker's address as the tables' files give it.
    url: str


def venue_file_text(event: str, table: str, url: str, ca_name: str = "") -> str:
    """A table's file: its ``[tournament]`` section, paths relative to the file."""
    user = table_user(table)
    lines = [
        f"# gg-arbiter broker-config: table {table} of event {event}. On the table, with",
        f"# {user}.password beside this file (its broker password, kept 0600):",
        f"#   sudo bash setup.sh --service --venue {user}.toml   (the appliance)",
        f"#   gg-arbiter join {user}.toml                        (or: any install)",
        "[tournament]",
        f'broker = "{url}"',
        f'event = "{event}"',
        f'table = "{table}"',
        f'password_file = "{user}.password"',
    ]
    if ca_name:
        lines.append(f'ca_file = "{ca_name}"')
    return "\n".join(lines) + "\n"


def table_url(host: str, port: int, tls: TlsListener | None, table: str) -> str:
    """``mqtt[s]://table-N@HOST:PORT``.

    :raises BrokerConfigError: ``host`` is not a host name or address.
    """
    scheme, at = ("mqtts", tls.port) if tls is not None else ("mqtt", port)
    url = f"{scheme}://{table_user(table)}@{host}:{at}"
    try:
        BrokerAddress.parse(url)
    except BrokerAddressError as exc:
        raise BrokerConfigError(f"--host {host!r}: {exc}") from None
    return url


def default_host(listen: str) -> str:
    """The broker's name for the tables: the listen address when it is one, else this
    machine's mDNS name (``HOSTNAME.local``)."""
    if listen and listen not in ("0.0.0.0", "::"):
        return listen
    return f"{socket.gethostname().split('.')[0]}.local"


def write_broker_config(out: Path, *, event: str, tables: int, port: int = 1883,
                        force: bool = False, tls: TlsListener | None = None,
                        listen: str = "", host: str = "",
                        ca_file: Path | None = None) -> BrokerFiles:
    """Write the files for ``tables`` tables named 1..N of ``event`` into ``out``.

    :param listen: the address the broker listens on ("" every address).
    :param host: the broker's name or address as the tables reach it (default:
        :func:`default_host`), for the tables' files.
    :param ca_file: with TLS, the CA that signed the broker's certificate: copied
        beside the tables' files and named in them.
    :raises BrokerConfigError: a bad event or count, files there already (``force``
        replaces them: every password changes), or TLS files that are not there.
    """
    tls = _checked_arguments(event=event, tables=tables, port=port, tls=tls,
                             listen=listen, ca_file=ca_file)
    url_host = host or default_host(listen)
    out = out.resolve()
    passwd = out / "passwd"
    if passwd.exists() and not force:
        raise BrokerConfigError(f"{passwd} exists: --force writes new passwords for everyone")
    names = [str(n) for n in range(1, tables + 1)]
    users = [HUB_USER, ORGANISER_USER, *(table_user(t) for t in names)]
    try:
        _write_files(out, event=event, names=names, users=users, port=port, tls=tls,
                     listen=listen, url_host=url_host, ca_file=ca_file)
    except OSError as exc:
        raise BrokerConfigError(f"cannot write the broker files in {out}: {exc}") from None
    return BrokerFiles(out / "mosquitto.conf", passwd, out / "acl", out / "secrets",
                       tuple(users), out / "tables",
                       table_url(url_host, port, tls, "N").replace("table-N@", ""))


def _checked_arguments(*, event: str, tables: int, port: int, tls: TlsListener | None,
                       listen: str, ca_file: Path | None) -> TlsListener | None:
    """Refuse what :func:`write_broker_config` cannot write; ``tls`` with absolute paths.

    :raises BrokerConfigError: a bad event, count or listen address, missing TLS files.
    """
    if not NAME.fullmatch(event):
        raise BrokerConfigError(f"event must be 1 to 32 letters, digits, '-', '_' or '.'; "
                                f"not {event!r}")
    if not 1 <= tables <= 1000:
        raise BrokerConfigError(f"--tables must be 1 to 1000, not {tables}")
    if tls is not None:
        tls = _checked(tls, port)
    if ca_file is not None and (tls is None or not ca_file.is_file()):
        raise BrokerConfigError(f"--tls-ca {ca_file}: " + (
            "no such file" if tls is not None else "goes with --tls-cert and --tls-key"))
    if listen:
        try:
            ipaddress.ip_address(listen)
        except ValueError:
            raise BrokerConfigError(f"--listen {listen!r} is not an IP address of this "
                                    "machine") from None
    return tls


def _write_files(out: Path, *, event: str, names: list[str], users: list[str], port: int,
                 tls: TlsListener | None, listen: str, url_host: str,
                 ca_file: Path | None) -> None:
    """The broker's files (passwords, ACL, config, store) and each table's, in ``out``;
    fresh passwords for every user. Raises OSError as the file system does."""
    passwd, keys, venue = out / "passwd", out / "secrets", out / "tables"
    ca_name = "venue-ca.pem" if ca_file is not None else ""
    keys.mkdir(parents=True, exist_ok=True, mode=0o700)
    venue.mkdir(exist_ok=True, mode=0o700)
    (out / "db").mkdir(exist_ok=True)
    lines = []
    passwords = {}
    for user in users:
        passwords[user] = password = secrets.token_urlsafe(18)
        lines.append(password_line(user, password))
        _private(keys / f"{user}.password", password + "\n")
    # The hub's per-table sessions log in with the hub's password (its one secret file).
    lines += [password_line(table_session_login(HUB_USER, t), passwords[HUB_USER])
              for t in names]
    _private(passwd, "\n".join(lines) + "\n")
    (out / "acl").write_text(acl_text(event, names))
    (out / "mosquitto.conf").write_text(conf_text(out, port, tls, tables=len(names),
                                                  listen=listen))
    if ca_file is not None:
        (venue / ca_name).write_bytes(ca_file.read_bytes())
    for t in names:
        user = table_user(t)
        url = table_url(url_host, port, tls, t)
        (venue / f"{user}.toml").write_text(venue_file_text(event, t, url, ca_name))
        _private(venue / f"{user}.password", passwords[user] + "\n")
    _give_to_broker([passwd, out / "db"])


def _checked(tls: TlsListener, port: int) -> TlsListener:
    """``tls`` with absolute paths (mosquitto may start elsewhere).

    :raises BrokerConfigError: a file that is not there, or the plain port again.
    """
    if tls.port == port:
        raise BrokerConfigError(f"--tls-port {tls.port} is the plain port too: pick another")
    for flag, path in (("--tls-cert", tls.cert), ("--tls-key", tls.key)):
        if not path.is_file():
            raise BrokerConfigError(f"{flag} {path}: no such file")
    return TlsListener(tls.cert.resolve(), tls.key.resolve(), tls.port)


def _broker_user() -> pwd.struct_passwd | None:
    """The user Mosquitto will run as, when this runs as root and that user exists."""
    if os.geteuid() != 0:
        return None  # the broker runs as whoever starts it: the files are theirs
    try:
        return pwd.getpwnam(BROKER_USER)
    except KeyError:
        return None


def _give_to_broker(paths: list[Path]) -> None:
    """Written as root: Mosquitto, which drops to its user first, must read the password
    file (0600) and write its store."""
    user = _broker_user()
    if user is None:
        return
    for path in paths:
        os.chown(path, user.pw_uid, user.pw_gid)


def unreadable_by_broker(paths: list[Path]) -> list[Path]:
    """Those of ``paths`` the broker's user (see BROKER_USER) cannot read; none unless root."""
    user = _broker_user()
    if user is None:
        return []
    groups = {user.pw_gid} | {g.gr_gid for g in _groups() if user.pw_name in g.gr_mem}
    bad = []
    for path in paths:
        st = path.stat()
        readable = (st.st_mode & stat.S_IROTH
                    or (st.st_gid in groups and st.st_mode & stat.S_IRGRP)
                    or (st.st_uid == user.pw_uid and st.st_mode & stat.S_IRUSR))
        if not readable:
            bad.append(path)
    return bad


def _groups() -> list[grp.struct_group]:
    return grp.getgrall()


def _private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
