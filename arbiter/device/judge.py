"""The seated pair put to the rules: both pieces identified, checked, recorded.

The one place the device asks the game record about a challenge.
"""

from __future__ import annotations

from arbiter.drivers.identify import PieceIdentifier
from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import SameTagError
from arbiter.rules.game import Challenge
from arbiter.storage.journal import GameStore


class Judge:
    """Turns the slots' tokens into a checked, then recorded, challenge.

    :param store: the game record; its current game is the one judged.
    :param identifier: maps the readers' tokens to pieces.
    """

    def __init__(self, store: GameStore, identifier: PieceIdentifier) -> None:
        self._store = store
        self._identifier = identifier

    def identify(self, attacker_token: str, defender_token: str) -> Contenders:
        """Both pieces, with their tags when the readers read tags.

        :raises UnknownPieceError: a token names no piece.
        :raises SameTagError: one tagged piece reads in both slots (a misread).
        """
        attacker = self._identifier.identify(attacker_token)
        defender = self._identifier.identify(defender_token)
        if attacker_token == defender_token and attacker.tag is not None:
            raise SameTagError("one tag reads in both slots")
        return Contenders(attacker, defender)

    def check(self, contenders: Contenders) -> None:
        """Refuse a pair the rules refuse, before the battle phrase; records nothing.

        :raises ChallengeRefusedError: with a ``public_reason`` naming no rank.
        """
        self._store.current.check(contenders)

    def record(self, contenders: Contenders) -> Challenge:
        """Judge the pair and make the challenge durable.

        :raises ChallengeRefusedError: refused after all (the game changed meanwhile).
        :raises StoreError: the record cannot be written; nothing was recorded.
        """
        return self._store.accept(contenders)
