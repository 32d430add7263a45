"""TLS for a broker connection: the client's context, and what went wrong, in one line.

paho-mqtt retries a failed connection without saying why, and a TLS client
on a plain listener (or the reverse) only sees the connection drop. So a
client that cannot connect asks :func:`listener_problem`, which repeats the
connection by itself and names the cause: a certificate that does not
verify, one for another host name, a listener that speaks the other
protocol. Nothing here ever falls back to plain MQTT.
"""

from __future__ import annotations

import enum
import socket
import ssl
import time
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt

from arbiter.mqtt.errors import BrokerTlsError

#: Seconds a probe waits for each step (connect, handshake, an answer).
PROBE_TIMEOUT = 3.0
#: OpenSSL's verify codes for a certificate of another host name or IP address.
NAME_MISMATCH = (62, 64)
#: OpenSSL's verify codes for a certificate not valid yet, and one expired: on a Pi
#: without a clock battery or network time, most often the Pi's clock is wrong.
NOT_YET_VALID, EXPIRED = 9, 10
#: An MQTT 3.1.1 CONNECT (clean session, no client id): a plain broker answers CONNACK.
_CONNECT = b"\x10\x0c\x00\x04MQTT\x04\x02\x00\x0a\x00\x00"
_CONNACK = 0x20


class TlsFault(enum.Enum):
    """What kind of TLS problem: its value is the cause in a few plain words (a page footer)."""

    WANTS_TLS = "the broker wants TLS (mqtts://)"
    NOT_SIGNED = "certificate not signed by the CA file"
    NOT_YET_VALID = "certificate not valid yet: is this table's clock right?"
    EXPIRED = "certificate expired (or this table's clock is wrong)"
    OTHER_NAME = "certificate made for another name"
    NOT_TLS = "the broker's port is not TLS"
    HANDSHAKE = "TLS handshake failed"


@dataclass(frozen=True)
class TlsProblem:
    """Why TLS keeps a client from the broker: ``fault`` in short, ``message`` in full."""

    fault: TlsFault
    message: str


def client_context(ca_file: Path | None) -> ssl.SSLContext:
    """A context that verifies the broker's certificate and host name: against ``ca_file``
    (the CA that signed it) if given, else against the system's trust store.

    :raises BrokerTlsError: the CA file is missing, unreadable or holds no certificate.
    """
    if ca_file is None:
        return ssl.create_default_context()
    try:
        return ssl.create_default_context(cafile=str(ca_file))
    except ssl.SSLError:  # an OSError too: first
        raise BrokerTlsError(f"CA file {ca_file}: no PEM certificate in it") from None
    except OSError as exc:
        raise BrokerTlsError(f"CA file {ca_file}: cannot read it ({exc.strerror})") from None


def secure(client: mqtt.Client, context: ssl.SSLContext | None) -> None:
    """Make ``client`` speak TLS with ``context`` (None: plain MQTT, as asked)."""
    if context is not None:
        client.tls_set_context(context)


def listener_problem(host: str, port: int, context: ssl.SSLContext | None,
                     timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why a client with ``context`` (None: plain) cannot talk to ``host:port``, if TLS is why.

    None when the set-up fits the listener, or when nothing answers at all (an
    unreachable broker is not a TLS matter: the caller says that its own way).
    """
    problem = diagnose(host, port, context, timeout)
    return problem.message if problem is not None else None


def diagnose(host: str, port: int, context: ssl.SSLContext | None,
             timeout: float = PROBE_TIMEOUT) -> TlsProblem | None:
    """:func:`listener_problem`, with the kind of fault too (for a short display)."""
    where = f"{host}:{port}"
    if context is None:
        if _speaks_tls(host, port, timeout):
            return TlsProblem(TlsFault.WANTS_TLS,
                              f"the broker at {where} speaks TLS: use mqtts://{where} with "
                              "the CA file that signed its certificate")
        return None
    try:
        raw = socket.create_connection((host, port), timeout)
    except OSError:
        return None
    try:
        with context.wrap_socket(raw, server_hostname=host):
            return None
    except ssl.SSLCertVerificationError as exc:
        if exc.verify_code in NAME_MISMATCH:
            return TlsProblem(TlsFault.OTHER_NAME,
                              f"the broker's certificate at {where} is not for the name "
                              f"{host!r} ({exc.verify_message}): connect by a name it was "
                              "made for")
        if exc.verify_code in (NOT_YET_VALID, EXPIRED):
            return TlsProblem(TlsFault.NOT_YET_VALID if exc.verify_code == NOT_YET_VALID
                              else TlsFault.EXPIRED,
                              f"the broker's certificate at {where} does not verify "
                              f"({exc.verify_message}): check the clock here "
                              f"({_now_utc()}), or renew the certificate")
        return TlsProblem(TlsFault.NOT_SIGNED,
                          f"the broker's certificate at {where} does not verify "
                          f"({exc.verify_message}): give the CA file that signed it")
    except OSError as exc:  # ssl.SSLError, reset, EOF, timeout: not a TLS listener?
        if _speaks_plain_mqtt(host, port, timeout):
            return TlsProblem(TlsFault.NOT_TLS,
                              f"the broker at {where} answers plain MQTT, not TLS: "
                              "use mqtt:// or the broker's TLS port")
        return TlsProblem(TlsFault.HANDSHAKE,
                          f"TLS handshake with the broker at {where} failed: {exc}")
    finally:
        raw.close()


def check_listener(host: str, port: int, context: ssl.SSLContext | None,
                   timeout: float = PROBE_TIMEOUT) -> None:
    """:raises BrokerTlsError: :func:`listener_problem` found one."""
    problem = listener_problem(host, port, context, timeout)
    if problem is not None:
        raise BrokerTlsError(problem)


def _now_utc() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def _speaks_tls(host: str, port: int, timeout: float) -> bool:
    """A TLS handshake (any certificate: this only asks which protocol) succeeds."""
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    probe.check_hostname = False
    probe.verify_mode = ssl.CERT_NONE
    try:
        with (socket.create_connection((host, port), timeout) as raw,
              probe.wrap_socket(raw, server_hostname=host)):
            return True
    except OSError:
        return False


def _speaks_plain_mqtt(host: str, port: int, timeout: float) -> bool:
    """A plain MQTT CONNECT gets a CONNACK (accepted or not: only the protocol matters)."""
    try:
        with socket.create_connection((host, port), timeout) as raw:
            raw.sendall(_CONNECT)
            return raw.recv(1) == bytes([_CONNACK])
    except OSError:
        return False
