"""A game's whole state at one moment, as one value (``Game.position``, ``Game.from_position``).

Everything that changes while a game is played, and nothing else: not the
rules, the seat count, the seed or the random source (a game's constants),
nor the log.  ``Game.position()`` reads it; ``Game.from_position`` builds a
game that goes on from it, which is how a test puts the engine in the exact
situation a rule clause talks about.  Piles are bottom first (the top card is
the last); ``melds[i].id == i``.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.cards import Card
from arena.rules.frozen import by_fields
from arena.rules.melds import TableMeld


@dataclass(frozen=True, slots=True)
class Position:
    # the game
    totals: tuple[int, ...]
    in_game: tuple[bool, ...]
    left_in_deal: tuple[int | None, ...]  # the deal an eliminated seat left in (RULES 8)
    forfeited: tuple[int, ...]  # in the order they forfeited
    deal_scores: tuple[tuple[int, ...], ...]
    end_reason: str
    # the deal
    deal_no: int
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]
    discard: tuple[Card, ...]
    melds: tuple[TableMeld, ...]
    dead: tuple[Card, ...]  # hands of seats that forfeited during the deal
    opened: tuple[bool, ...]
    played_before: tuple[bool, ...]
    rebuilds: int
    random_acts: int
    # the turn
    phase: str  # "draw", "play" or "over"
    turn: int  # turns completed in the deal
    current: int
    skip_draw: int | None  # the seat whose first turn skips the draw (RULES 2.4)
    drawn: Card | None
    took_discard: bool

    def card_count(self) -> int:
        """Every card of the deal, wherever it is."""
        return (sum(len(h) for h in self.hands) + len(self.stock) + len(self.discard)
                + sum(len(m.cards) for m in self.melds) + len(self.dead))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)
