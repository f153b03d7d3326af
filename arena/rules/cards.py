"""Cards and their notation (RULES.md section 1).

A card is a small int so that hands, melds and decks are cheap to copy and
compare: ``rank * 4 + suit`` with rank 1 (ace) .. 13 (king) and suit 0..3
(C D H S); the joker is 0.  Equal cards (two decks) are equal ints, which makes
"equal cards are interchangeable" true by construction.

Text form: rank + suit (``7H``, ``TD``, ``AS``) and ``JK``; input is
case-insensitive and ``10`` is accepted for ``T``; output is upper-case.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

Card = int

JOKER: Final[Card] = 0  # Final: compiled, a constant (a plain global is a dict look-up at each use)
RANKS = "A23456789TJQK"
SUITS = "CDHS"
RANK_NAMES: dict[int, str] = {i + 1: r for i, r in enumerate(RANKS)}


class CardError(ValueError):
    """A card, rank or suit written in a way RULES 1 does not allow."""


def make(rank: int, suit: int) -> Card:
    return rank * 4 + suit


def rank_of(card: Card) -> int:
    """1 (ace) .. 13 (king); 0 for the joker."""
    return card >> 2


def suit_of(card: Card) -> int:
    """0..3 for C D H S; meaningless for the joker."""
    return card & 3


def parse_rank(text: str) -> int:
    t = text.strip().upper()
    if t == "10":
        t = "T"
    if len(t) != 1 or t not in RANKS:
        raise CardError(f"{text!r} is not a rank: use one of A 2-9 T J Q K (RULES 1)")
    return RANKS.index(t) + 1


def parse(text: str) -> Card:
    """Parse one card, e.g. ``7h``, ``10H``, ``jk``."""
    card = _CANONICAL.get(text)
    if card is not None:
        return card
    t = text.strip().upper()
    if t in ("JK", "JOKER"):
        return JOKER
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2 or t[0] not in RANKS or t[1] not in SUITS:
        raise CardError(
            f"{text!r} is not a card: write rank + suit like 7H, TD, AS, or JK for a joker (RULES 1)"
        )
    return make(RANKS.index(t[0]) + 1, SUITS.index(t[1]))


_TEXT: list[str] = ["JK"] + [""] * 3 + [r + s for r in RANKS for s in SUITS]


_CANONICAL: dict[str, Card] = {t: i for i, t in enumerate(_TEXT) if t}  # the fast path: upper-case text


def text(card: Card) -> str:
    return _TEXT[card]


def texts(cards: Iterable[Card]) -> list[str]:
    return [_TEXT[c] for c in cards]


def full_deck(decks: int, jokers: int) -> list[Card]:
    """``decks`` 52-card decks plus ``jokers`` jokers, in a fixed order."""
    base = [make(r, s) for s in range(4) for r in range(1, 14)]
    return base * decks + [JOKER] * jokers
