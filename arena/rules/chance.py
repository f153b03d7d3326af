"""Where a game's randomness comes from (RULES 2.3): one shuffler per random act.

A ``Game`` asks its ``RandomSource`` for a fresh ``Shuffler`` at each random
act: the first-dealer draw, each deal's deck, and the k-th later random act of
a deal (a reinserted wild, a reshuffled stock).  ``SeededSource`` is the
source of every real game: each shuffler is a ``random.Random`` seeded from
(seed, what the act is), so a deal replays exactly under any seating.  Tests
that need chosen decks pass a source of their own instead.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from arena.rules.cards import Card
from arena.rules.frozen import by_fields


class Shuffler(Protocol):
    """What one random act may use (``random.Random`` is one)."""

    def shuffle(self, x: list[Card]) -> None: ...

    def randint(self, a: int, b: int) -> int: ...


class RandomSource(Protocol):
    def first_dealer(self, attempt: int) -> Shuffler:
        """The deck shuffled for the first-dealer draw; ``attempt`` > 0 when ties used it up (RULES 2.2)."""
        ...

    def deal(self, deal: int) -> Shuffler:
        """The deck of deal ``deal`` (1 first) (RULES 2.3, 2.4)."""
        ...

    def act(self, deal: int, k: int) -> Shuffler:
        """The k-th random act (0 first) of deal ``deal`` after its deck (RULES 2.3, 2.5, 6.3)."""
        ...


@dataclass(frozen=True, slots=True)
class SeededSource:
    """Every shuffler a function of the game seed and the act (RULES 2.3)."""

    seed: int

    def _rng(self, *parts: object) -> random.Random:
        return random.Random("/".join(str(p) for p in (self.seed, *parts)))

    def first_dealer(self, attempt: int) -> Shuffler:
        return self._rng("first-dealer") if attempt == 0 else self._rng("first-dealer", attempt)

    def deal(self, deal: int) -> Shuffler:
        return self._rng("deal", deal)

    def act(self, deal: int, k: int) -> Shuffler:
        return self._rng("deal", deal, "act", k)

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)
