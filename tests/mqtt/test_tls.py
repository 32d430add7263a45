"""TLS to a real Mosquitto: the client's context, and each way TLS can go wrong named
in one line (certificate, host name, plain listener for TLS and the reverse)."""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.mqtt.errors import BrokerTlsError
from arbiter.mqtt.tls import TlsFault, check_listener, client_context, diagnose, listener_problem
from tests.support.mqtt import Mosquitto, make_tls, tls_mosquitto
from tests.support.spawn import free_port
from tests.support.tools import require_tool

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    # The certificate names localhost only: 127.0.0.1 is a name it was not made for.
    with tls_mosquitto(tmp_path / "broker", "localhost") as b:
        yield b


def test_ca_file_missing_empty_or_a_directory_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BrokerTlsError, match=r"CA file .*missing\.pem: cannot read it"):
        client_context(tmp_path / "missing.pem")
    (tmp_path / "empty.pem").write_text("")
    with pytest.raises(BrokerTlsError, match="no PEM certificate"):
        client_context(tmp_path / "empty.pem")
    with pytest.raises(BrokerTlsError, match="cannot read it"):
        client_context(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_ca_file_unreadable_is_one_clear_error(tmp_path: Path) -> None:
    ca = make_tls(tmp_path).ca
    ca.chmod(0)
    with pytest.raises(BrokerTlsError, match="Permission denied"):
        client_context(ca)


def test_context_verifies_certificate_and_name() -> None:
    context = client_context(None)  # the system's trust store
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_right_ca_and_name_find_no_problem_and_paho_connects(broker: Mosquitto) -> None:
    assert broker.tls and broker.tls_port
    context = client_context(broker.tls.ca)
    assert listener_problem("localhost", broker.tls_port, context) is None
    check_listener("localhost", broker.tls_port, context)
    assert listener_problem("127.0.0.1", broker.port, None) is None  # plain on plain
    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.tls_set_context(context)
    assert client.connect("localhost", broker.tls_port) == mqtt.MQTT_ERR_SUCCESS
    client.disconnect()


def test_another_ca_is_refused(broker: Mosquitto, tmp_path: Path) -> None:
    assert broker.tls_port
    other = client_context(make_tls(tmp_path / "other").ca)
    problem = listener_problem("localhost", broker.tls_port, other)
    assert problem is not None and "does not verify" in problem
    assert "give the CA file that signed it" in problem
    with pytest.raises(BrokerTlsError, match="does not verify"):
        check_listener("localhost", broker.tls_port, other)
    # paho on its own refuses it too (the probe only names the cause)
    client = mqtt.Client(CallbackAPIVersion.VERSION2)
    client.tls_set_context(other)
    with pytest.raises(ssl.SSLCertVerificationError):
        client.connect("localhost", broker.tls_port)


def test_a_certificate_for_another_name_is_refused(broker: Mosquitto) -> None:
    assert broker.tls and broker.tls_port
    problem = listener_problem("127.0.0.1", broker.tls_port, client_context(broker.tls.ca))
    assert problem is not None and "is not for the name '127.0.0.1'" in problem


def test_tls_client_on_a_plain_listener_and_the_reverse_are_named(broker: Mosquitto) -> None:
    assert broker.tls and broker.tls_port
    problem = listener_problem("localhost", broker.port, client_context(broker.tls.ca))
    assert problem is not None and "answers plain MQTT, not TLS" in problem
    problem = listener_problem("localhost", broker.tls_port, None)
    assert problem is not None and f"speaks TLS: use mqtts://localhost:{broker.tls_port}" in problem


def test_nothing_listening_is_not_a_tls_problem(broker: Mosquitto) -> None:
    assert broker.tls
    port = free_port()
    assert listener_problem("localhost", port, client_context(broker.tls.ca)) is None
    assert listener_problem("localhost", port, None) is None


@pytest.mark.parametrize(("days", "fault", "words"), [
    ((-10, -1), TlsFault.EXPIRED, "certificate has expired"),
    ((1, 10), TlsFault.NOT_YET_VALID, "certificate is not yet valid"),
], ids=["expired", "not yet valid"])
def test_a_certificate_out_of_its_dates_is_told_from_another_ca(
    days: tuple[int, int], fault: TlsFault, words: str, tmp_path: Path
) -> None:
    require_tool("mosquitto")
    now = datetime.now(UTC)
    tls = make_tls(tmp_path / "tls", "localhost", not_before=now + timedelta(days=days[0]),
                   not_after=now + timedelta(days=days[1]))
    broker = Mosquitto(tmp_path / "broker", tls=tls).start()
    try:
        assert broker.tls_port
        problem = diagnose("localhost", broker.tls_port, client_context(tls.ca))
    finally:
        broker.stop()
    assert problem is not None and problem.fault is fault
    assert words in problem.message and "check the clock here" in problem.message
