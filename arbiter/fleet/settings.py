"""The ``[tournament]`` settings: which broker, which event, which table."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from arbiter.fleet.errors import SettingsError
from arbiter.mqtt.address import BrokerAddress
from arbiter.mqtt.errors import BrokerAddressError

__all__ = ["NAME", "BrokerAddress", "SettingsError", "TournamentSettings"]

#: Event and table names become topic levels: no ``/``, ``+``, ``#`` or spaces.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")


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
        """:raises SettingsError: naming the setting.

        With no ``broker`` there is no tournament, but ``password_file`` and ``ca_file``
        are kept: ``run --broker`` may name the broker and leave them to the file.
        """
        if not broker:
            return cls(password_file=Path(password_file) if password_file else None,
                       ca_file=Path(ca_file) if ca_file else None, keepalive=keepalive)
        try:
            address = BrokerAddress.parse(broker)
        except BrokerAddressError as exc:
            raise SettingsError(str(exc)) from None
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
                 table: str | None = None, ca_file: str | None = None,
                 password_file: str | None = None) -> TournamentSettings:
        """These settings with the command line's ``--broker``, ``--event``, ``--table``,
        ``--ca-file``, ``--password-file`` (each, when given, wins over the file).

        :raises SettingsError: naming the setting.
        """
        return TournamentSettings.build(
            broker if broker is not None else (self.broker.url if self.broker else ""),
            event if event is not None else self.event,
            table if table is not None else self.table,
            password_file=(password_file if password_file is not None
                           else str(self.password_file or "")),
            ca_file=ca_file if ca_file is not None else str(self.ca_file or ""),
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
