"""Swiss pairing by the FIDE Dutch system (Handbook C.04.3, 2024), in modules:

* :mod:`.entrants`: the players as the pairing sees them (scores, colours, floats; E1-E5);
* :mod:`.criteria`: who may meet (C1-C3) and the weight of each pair (C4-C21);
* :mod:`.matching` and :mod:`.matcher`: the maximum-weight matchings and the graph they solve;
* :mod:`.dutch`: the bracket walk, whose docstring states the rules as implemented;
* here: :func:`swiss_round`, the public entry, and the size check.
"""

from __future__ import annotations

from collections.abc import Sequence

from arbiter.tournament.errors import (
    EventTooLargeError,
    NoLegalPairingError,
    PairingError,
    UnknownPlayerError,
)
from arbiter.tournament.model import (
    Bye,
    Colour,
    Game,
    Pairing,
    Player,
    check_unique,
    initial_colour,
)
from arbiter.tournament.swiss.criteria import Criteria
from arbiter.tournament.swiss.dutch import Dutch
from arbiter.tournament.swiss.entrants import INITIAL_COLOUR, Float, colour_against, read_entrants
from arbiter.tournament.swiss.matching import (
    HAVE_NATIVE,
    NATIVE_BITS,
    Edge,
    compress_weights,
    max_weight_matching,
)

__all__ = [
    "BYTES_PER_PAIR",
    "HAVE_NATIVE",
    "INITIAL_COLOUR",
    "NATIVE_BITS",
    "PAIRING_MEMORY",
    "Edge",
    "Float",
    "check_size",
    "compress_weights",
    "max_weight_matching",
    "swiss_round",
]

#: The memory a round's pairing may take. The weights of every pair of players are held
#: at once, so it grows with the square of the players: 640 bytes a pair keeps a margin
#: over what bench/bench_swiss.py measures (98 MB at 500 players, 249 MB at 1,000, 30 MB
#: of it the interpreter: about 440 bytes a pair). 1 GiB keeps a 2 GB Raspberry Pi clear
#: of the out-of-memory killer and pairs up to 1,832 players; the pairing process's
#: address space (apart.PAIRING_ADDRESS_SPACE) stops any pairing that still outgrows it.
PAIRING_MEMORY = 1 << 30
BYTES_PER_PAIR = 640


def check_size(players: int) -> None:
    """EventTooLargeError when pairing ``players`` would need more than PAIRING_MEMORY."""
    need = BYTES_PER_PAIR * players * (players - 1) // 2
    if need > PAIRING_MEMORY:
        most = 2
        while BYTES_PER_PAIR * (most + 1) * most // 2 <= PAIRING_MEMORY:
            most += 1
        raise EventTooLargeError(players, need >> 20, PAIRING_MEMORY >> 20, most)


def swiss_round(
    players: Sequence[Player],
    games: Sequence[Game],
    round_number: int,
    total_rounds: int | None = None,
    initial: Colour | None = None,
) -> list[Pairing]:
    """The pairings of ``round_number`` for ``players`` (seed order) after ``games``.

    ``total_rounds`` (the event's number of rounds) lets the final round use the
    topscorers' exception to the colour criterion; without it none applies.
    ``initial``: the top seed's colour in the first round (TRF ``XXC``) while no game
    shows it; the games played show it (model.initial_colour); White without either.
    Raises :class:`NoLegalPairingError` when no pairing keeps the absolute criteria.
    """
    check_unique(players)
    known = {p.name for p in players}
    for g in games:
        for name in (g.pairing.white, g.pairing.black):
            if name is not None and name not in known:
                raise UnknownPlayerError(f"{name!r} played but is not a player")
    people = read_entrants(players, games, round_number - 1)
    # A bye the organiser gave for this round (full, half, zero points) keeps a player out.
    away = {
        g.pairing.white
        for g in games
        if g.pairing.round == round_number and g.pairing.is_bye and g.bye is not Bye.PAIRING
    }
    active = [
        e for e, p in zip(people, players, strict=True) if not p.withdrawn and p.name not in away
    ]
    if len(active) < 2:
        raise PairingError("a round needs two players or more")
    check_size(len(active))
    dutch = Dutch(Criteria(people, active, round_number - 1, total_rounds))
    try:
        pairs, bye = dutch.pair()
    except NoLegalPairingError as exc:
        raise NoLegalPairingError(round_number, exc.reason) from None
    earlier = [g for g in games if g.pairing.round < round_number]
    if initial is None or any(g.pairing.black is not None for g in earlier):
        initial = initial_colour(players, earlier)
    # E5 counts pairing numbers as bbpPairings does: leaving out the players who have
    # not yet taken part in a pairing and are kept out of this one.
    took_part = {n for g in earlier if g.played or g.forfeit or (g.pairing.is_bye and
                 g.bye is Bye.PAIRING) for n in (g.pairing.white, g.pairing.black)}
    number: dict[int, int] = {}
    for e, p in zip(people, players, strict=True):
        if p.name in took_part or not (p.withdrawn or p.name in away):
            number[e.index] = len(number)
    return _boards(dutch, pairs, bye, round_number, initial, number)


def _boards(
    dutch: Dutch, pairs: list[tuple[int, int]], bye: int | None, round_number: int,
    initial: Colour, number: dict[int, int],
) -> list[Pairing]:
    """Colours by E1-E5 and boards by the higher player's score, the lower's, then rank."""
    order = dutch.criteria.order
    out: list[tuple[tuple[int, int, int], Pairing]] = []
    for a, b in pairs:
        high, low = (order[a], order[b]) if a < b else (order[b], order[a])
        # As the engines do: colours are decided from the side of the lower pairing number.
        first, second = (high, low) if high.index < low.index else (low, high)
        colour = colour_against(
            first, second, ranks_above=first is high, initial=initial, number=number
        )
        white, black = (first, second) if colour is Colour.WHITE else (second, first)
        key = (-high.score2, -low.score2, high.index)
        out.append((key, Pairing(round_number, 0, white.name, black.name)))
    out.sort(key=lambda kp: kp[0])
    boards = [
        Pairing(round_number, board, p.white, p.black)
        for board, (_, p) in enumerate(out, start=1)
    ]
    if bye is not None:
        boards.append(Pairing(round_number, len(boards) + 1, order[bye].name, None))
    return boards
