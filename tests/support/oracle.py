"""The rules of RULES.md restated over rank codes, independently of arbiter.rules.verdict.

Tests derive expected verdicts from :func:`oracle`, never from the code under test.
"""

from __future__ import annotations

OFFICERS = ["5*G", "4*G", "3*G", "2*G", "1*G", "COL", "LTC", "MAJ", "CPT", "1LT", "2LT", "SGT"]
CODES = [*OFFICERS, "PVT", "SPY", "FLG"]


def oracle(a: str, d: str) -> tuple[str, str | None]:
    """(survivor, fallen flag slot) by the seven rules."""
    if a == d == "FLG":  # rule 6: flag vs flag, the challenger wins
        return "attacker", "defender"
    if d == "FLG":  # rule 5: any piece eliminates the Flag
        return "attacker", "defender"
    if a == "FLG":
        return "defender", "attacker"
    if a == d:  # rule 7: equal ranks split
        return "none", None

    def eliminates(x: str, y: str) -> bool:
        if x in OFFICERS and y in OFFICERS:  # rule 1
            return OFFICERS.index(x) < OFFICERS.index(y)
        if x in OFFICERS and y == "PVT":  # rule 2
            return True
        if x == "SPY" and y in OFFICERS:  # rule 3
            return True
        return x == "PVT" and y == "SPY"  # rule 4

    if eliminates(a, d):
        return "attacker", None
    if eliminates(d, a):
        return "defender", None
    raise AssertionError(f"the rules do not decide {a} vs {d}")
