"""The ``[tournament]`` settings: which broker, which event, which table."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from arbiter.errors import ArbiterError

#: Event and table names become topic levels: no ``/``, ``+``, ``#`` or spaces.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")


class SettingsError(ArbiterError, ValueError):
    """A tournament setting that cannot be used; the message names it."""


@dataclass(frozen=True)
class BrokerAddress:
    """``mqtt://[user[:password]@]host[:port]`` or ``mqtts://...`` taken apart."""

    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None = field(repr=False)
    url: str = field(repr=False)

    @classmethod
    def parse(cls, url: str) -> BrokerAddress:
        """:raises SettingsError: not an mqtt:// or mqtts:// URL with a host."""
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise SettingsError(f"broker must be mqtt://host[:port] or mqtts://..., not {url!r}")
        try:
            port = parts.port
        except ValueError:
            raise SettingsError(f"broker {url!r}: bad port") from None
        if not parts.hostname or parts.path not in ("", "/") or parts.query:
            raise SettingsError(f"broker {url!r}: give only [user[:password]@]host[:port]")
        tls = parts.scheme == "mqtts"
        return cls(
            host=parts.hostname,
            port=port or (8883 if tls else 1883),
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            url=url,
        )

    def __str__(self) -> str:  # never the password (it goes to the log)
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


@dataclass(frozen=True)
class TournamentSettings:
    """A table's place in a tournament. ``broker`` None: no tournament (the default)."""

    broker: BrokerAddress | None = None
    event: str = ""
    table: str = ""
    password_file: Path | None = None
    ca_file: Path | None = None
    keepalive: int = 30

    @classmethod
    def build(cls, broker: str, event: str, table: str, *, password_file: str = "",
              ca_file: str = "", keepalive: int = 30) -> TournamentSettings:
        """:raises SettingsError: naming the setting."""
        if not broker:
            return cls(keepalive=keepalive)
        address = BrokerAddress.parse(broker)
        for key, value in (("event", event), ("table", table)):
            if not NAME.fullmatch(value):
                raise SettingsError(
                    f"'{key}' must be 1 to 32 letters, digits, '-', '_' or '.', "
                    f"not {value!r} (it is part of every topic)")
        if ca_file and not address.tls:
            raise SettingsError("'ca_file' is for an mqtts:// broker")
        return cls(address, event, table, Path(password_file) if password_file else None,
                   Path(ca_file) if ca_file else None, keepalive)

    def override(self, *, broker: str | None = None, event: str | None = None,
                 table: str | None = None) -> TournamentSettings:
        """These settings with the command line's ``--broker``, ``--event``, ``--table``.

        :raises SettingsError: naming the setting.
        """
        return TournamentSettings.build(
            broker if broker is not None else (self.broker.url if self.broker else ""),
            event if event is not None else self.event,
            table if table is not None else self.table,
            password_file=str(self.password_file or ""),
            ca_file=str(self.ca_file or ""),
            keepalive=self.keepalive,
        )

    @property
    def configured(self) -> bool:
        return self.broker is not None

    def password(self) -> str | None:
        """The password: from ``password_file`` (first line) if set, else from the URL.

        :raises SettingsError: the file cannot be read.
        """
        if self.password_file is None:
            return self.broker.password if self.broker else None
        try:
            return self.password_file.read_text(encoding="utf-8").splitlines()[0].strip()
        except (OSError, IndexError, UnicodeDecodeError) as exc:
            raise SettingsError(f"password_file {self.password_file}: {exc}") from None
