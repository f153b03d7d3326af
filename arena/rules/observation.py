"""What one seat may see (docs/ARCHITECTURE.md section 2): its own hand, the
table, the discard pile, the stock size, hand sizes, totals, and whose turn it is.

``Observation`` uses int cards for in-process policies; its protocol form is
``protocol.messages.Observation`` (cards as text), converted both ways in
``arena.referee.wire``, so a bot behind the protocol and a policy inside the
engine decide from the same information.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.cards import Card
from arena.rules.frozen import by_fields
from arena.rules.melds import TableMeld
from arena.rules.turn import TurnView


@dataclass(slots=True, init=False)
class Observation:
    seat: int
    deal: int
    turn: int  # the turn being played in this deal, from 1
    phase: str  # "draw" | "play"
    dealer: int
    current: int
    hand: list[Card]
    drawn: Card | None
    took_discard: bool
    discard: list[Card]  # bottom -> top
    stock_size: int
    hand_sizes: list[int]
    totals: list[int]
    in_game: list[bool]
    opened: list[bool]
    melds: list[TableMeld]
    opening_requirement: int
    rebuilds: int
    must_go_out_to_meld: bool
    played_before: bool
    legal_draws: list[str]

    def __init__(self, seat: int, deal: int, turn: int, phase: str, dealer: int, current: int, hand: list[Card],
                 drawn: Card | None, took_discard: bool, discard: list[Card], stock_size: int, hand_sizes: list[int],
                 totals: list[int], in_game: list[bool], opened: list[bool], melds: list[TableMeld],
                 opening_requirement: int, rebuilds: int, must_go_out_to_meld: bool, played_before: bool,
                 legal_draws: list[str]) -> None:
        # written out: mypyc compiles it (arena/rules/actions.py says why)
        self.seat, self.deal, self.turn, self.phase, self.dealer, self.current = seat, deal, turn, phase, dealer, current
        self.hand, self.drawn, self.took_discard, self.discard = hand, drawn, took_discard, discard
        self.stock_size, self.hand_sizes, self.totals, self.in_game = stock_size, hand_sizes, totals, in_game
        self.opened, self.melds, self.opening_requirement, self.rebuilds = opened, melds, opening_requirement, rebuilds
        self.must_go_out_to_meld, self.played_before, self.legal_draws = must_go_out_to_meld, played_before, legal_draws

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)  # compiled, its __new__ runs __init__ (frozen.py)

    def turn_view(self) -> TurnView:
        return TurnView(
            self.seat, self.deal, self.hand, self.melds, self.opened[self.seat],
            self.opening_requirement, self.drawn, self.took_discard, self.played_before,
        )
