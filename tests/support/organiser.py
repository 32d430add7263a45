"""The organiser's login through the hub's pages, as a browser does it (the Flask
test client): the CSRF token each form carries, and a logged-in session."""

from __future__ import annotations

from typing import Any

from tests.support.web import PIN
from tests.support.web import csrf_field as csrf

__all__ = ["csrf", "login"]


def login(client: Any) -> str:
    """Log ``client`` in with the test PIN; the organiser page's CSRF token."""
    token = csrf(client.get("/organiser/login").get_data(as_text=True))
    response = client.post("/organiser/login", data={"pin": PIN, "csrf": token})
    assert response.status_code == 302 and response.headers["Location"].endswith("/organiser")
    return csrf(client.get("/organiser").get_data(as_text=True))
