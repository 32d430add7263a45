"""``mqtt://[user[:password]@]host[:port]`` or ``mqtts://...``: the one broker URL parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from arbiter.mqtt.errors import BrokerAddressError

PLAIN_PORT, TLS_PORT = 1883, 8883


@dataclass(frozen=True)
class BrokerAddress:
    """A broker URL taken apart. ``tls``: mqtts://, verified against a CA, never plain."""

    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None = field(repr=False)
    url: str = field(repr=False)

    @classmethod
    def parse(cls, url: str) -> BrokerAddress:
        """``host[:port]`` alone means mqtt://.

        :raises BrokerAddressError: not an mqtt:// or mqtts:// URL with a host.
        """
        parts = urlsplit(url if "://" in url else f"mqtt://{url}")
        if parts.scheme not in ("mqtt", "mqtts"):
            raise BrokerAddressError(
                f"broker must be mqtt://host[:port] or mqtts://..., not {url!r}")
        try:
            port = parts.port
        except ValueError:
            raise BrokerAddressError(f"broker {url!r}: bad port") from None
        if not parts.hostname or parts.path not in ("", "/") or parts.query:
            raise BrokerAddressError(f"broker {url!r}: give only [user[:password]@]host[:port]")
        tls = parts.scheme == "mqtts"
        return cls(
            host=parts.hostname,
            port=port or (TLS_PORT if tls else PLAIN_PORT),
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password is not None else None,
            url=url,
        )

    def __str__(self) -> str:  # never the password (it goes to the log)
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def table_session_login(user: str, table: str) -> str:
    """The login (and so the client id) of the hub's own session for ``table``'s events,
    beside its main one as ``user`` (see :mod:`arbiter.hub.sessions`): broker-config writes
    one per table, with the hub's password, allowed to read that table's events only."""
    return f"{user}-table-{table}"
