"""The venue broker's logins and what each may read and write: Mosquitto's password lines
and the ACL that ``gg-arbiter broker-config`` (:mod:`arbiter.venue.brokerconf`) writes.

The hub reads everything of the event and writes only the assignments and resend
requests; ``organiser``, the hub's commands run beside it, only writes those;
``hub-table-N``, the hub's session for table N, reads that table's events and records;
each table writes only its own topics, named exactly (so the broker keeps at most one
retained message of each, whatever it publishes), and reads only its assignment and
resend requests.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from arbiter.mqtt.address import table_session_login
from arbiter.wire import (
    TABLE_WRITES,
    Topic,
    event_filter,
    table_filter,
    table_pattern,
    topic,
)

#: Mosquitto 2's password hash: PBKDF2 with SHA-512, this many rounds, a 12-byte salt.
ROUNDS = 101
SALT_BYTES = 12
HUB_USER = "hub"
#: The login of the hub's commands (``hub assign``, ``publish``, ``gaps --resend``) while
#: the hub serves: client ids are logins, so they must not log in as the hub itself.
ORGANISER_USER = "organiser"


def password_line(user: str, password: str, salt: bytes | None = None) -> str:
    """``user:$7$101$salt$hash``, as ``mosquitto_passwd`` writes it."""
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, ROUNDS)
    b64 = base64.b64encode
    return f"{user}:$7${ROUNDS}${b64(salt).decode()}${b64(digest).decode()}"


def table_user(table: str) -> str:
    return f"table-{table}"


def acl_text(event: str, tables: list[str]) -> str:
    """The ACL: a hub that reads all, assigns and asks for resends; each table writing its
    own topics (:data:`arbiter.wire.TABLE_WRITES`) by exact name, no pattern."""
    lines = [
        f"# gg-arbiter broker-config: event {event}, {len(tables)} tables.",
        "# Each table writes only its own four topics, named exactly (the broker keeps at",
        "# most one retained message of each: its records share one topic, the latest),",
        "# and reads only its assignment and resend requests; the hub writes only those",
        "# two, never a table's own topics.",
        f"user {HUB_USER}",
        f"topic read {event_filter(event)}",
        f"topic write {table_filter(event, Topic.ASSIGNMENT)}",
        f"topic write {table_filter(event, Topic.RESEND)}",
        "",
        "# The hub's commands beside the serving hub (assign, publish, gaps --resend).",
        f"user {ORGANISER_USER}",
        f"topic write {table_filter(event, Topic.ASSIGNMENT)}",
        f"topic write {table_filter(event, Topic.RESEND)}",
        "",
    ]
    for table in tables:
        lines += [
            "# The hub's session for this table's events and records alone: its queue holds",
            "# nothing of another table's (one table's flood cannot push another's out).",
            f"user {table_session_login(HUB_USER, table)}",
            f"topic read {table_pattern(event, table, Topic.EVENTS)}",
            f"topic read {table_pattern(event, table, Topic.RECORD)}",
            "",
            f"user {table_user(table)}",
            *(f"topic write {topic(event, table, kind)}" for kind in TABLE_WRITES),
            *(f"topic read {table_pattern(event, table, kind)}"
              for kind in (Topic.ASSIGNMENT, Topic.RESEND)),
            "",
        ]
    return "\n".join(lines)
