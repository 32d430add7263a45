"""Ports for a rehearsal's (and the tests') listeners: never one handed out twice, none of
the kernel's ephemeral range, none another share's."""

from __future__ import annotations

import random
import socket

import pytest

from arbiter.venue.errors import RehearsalError
from arbiter.venue.ports import LOWEST, PortPool, ephemeral_start, free_port


def test_ports_asked_one_after_another_are_all_different_and_bindable() -> None:
    # Bound to port 0 and closed 2,000 times, the kernel here gives about 130 ports a second
    # time; a broker given the same port for its plain and TLS listeners fails to start.
    ports = [free_port() for _ in range(2000)]
    assert len(set(ports)) == len(ports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))  # free a moment ago, and still free


def test_ports_come_from_below_the_kernels_ephemeral_range() -> None:
    # The kernel gives ephemeral ports to every outgoing connection and every bind to port
    # 0: one of them could take a port chosen for a broker that has not bound it yet.
    top = ephemeral_start()
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        assert top == int(f.read().split()[0])
    assert all(LOWEST <= free_port() < top for _ in range(500))


def test_two_shares_never_meet_and_each_skips_a_port_in_use() -> None:
    first, second = PortPool(0, 2, rng=random.Random(1)), PortPool(1, 2, rng=random.Random(1))
    a = {first.take() for _ in range(300)}
    b = {second.take() for _ in range(300)}
    assert not a & b
    assert max(a) < second.first <= min(b)
    with socket.socket() as busy:
        pool = PortPool(0, 1, rng=random.Random(7))
        probe = PortPool(0, 1, rng=random.Random(7))  # the same start: the same next port
        busy.bind(("127.0.0.1", probe.take()))
        assert pool.take() != busy.getsockname()[1]


def test_a_pool_says_so_when_its_ports_run_out_or_there_are_none() -> None:
    pool = PortPool(0, (ephemeral_start() - LOWEST) // 20)  # a share of 20 ports
    taken = []
    with pytest.raises(RehearsalError, match="no free port left"):
        while True:
            taken.append(pool.take())
    assert len(set(taken)) == len(taken) <= 20
    with pytest.raises(RehearsalError, match="no ports to share"):
        PortPool(0, 10_000)
    with pytest.raises(RehearsalError, match="share 3 of 2"):
        PortPool(3, 2)
