"""Ports for a rehearsal's (and the tests') listeners: never one handed out twice."""

from __future__ import annotations

import socket

from arbiter.venue.ports import free_port


def test_ports_asked_one_after_another_are_all_different_and_bindable() -> None:
    # Bound to port 0 and closed 2,000 times, the kernel here gives about 130 ports a second
    # time; a broker given the same port for its plain and TLS listeners fails to start.
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))  # free a moment ago, and still free
