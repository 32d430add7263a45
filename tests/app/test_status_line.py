"""What the table prints of its page (issue 19, finding 16): a phone's address only where
a phone can reach the page, and no single 127.0.0.1 address for a page on every address."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.app.service import status_page_line
from tests.support.rig import write_config
from tests.support.spawn import Session, free_port


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.1.1", "::1", "localhost"])
def test_status_line_bound_to_loopback_offers_no_phone_address(host: str) -> None:
    line = status_page_line(host, 8080, "http://127.0.0.1:8080/", "table-7")
    assert ".local" not in line and "this machine only" in line


def test_status_line_on_every_address_says_so_and_gives_the_phone_address() -> None:
    line = status_page_line("0.0.0.0", 8080, "http://127.0.0.1:8080/", "table-7.lan")
    assert "every address" in line and "http://table-7.local:8080/" in line


def test_status_line_on_a_lan_address_is_reachable_by_phones() -> None:
    line = status_page_line("192.168.1.20", 8080, "http://192.168.1.20:8080/", "t")
    assert line.startswith("Status page: http://192.168.1.20:8080/") and "phone" in line


@pytest.mark.timeout(90)
def test_status_line_printed_by_run_on_127_0_0_1(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    port = free_port()
    run = Session(["run", "--config", str(config), "--data", str(tmp_path / "data"),
                   "--host", "127.0.0.1", "--port", str(port)])
    try:
        at = run.expect(f"Status page: http://127.0.0.1:{port}/")
        assert ".local" not in run.lines[at], run.lines[at]
        run.send("quit")
    finally:
        run.kill()
