"""What one seat may see (docs/ARCHITECTURE.md section 2): its own hand, the
table, the discard pile, the stock size, hand sizes, totals, and whose turn it is.

``Observation`` uses int cards for in-process policies; ``to_data`` gives the
protocol's JSON form and ``from_data`` reads it back, so a bot behind the
protocol and a policy inside the engine decide from the same information.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.rules.cards import Card, parse, rank_of, suit_of, texts
from arena.rules.melds import RUN, SET, TableMeld
from arena.rules.turn import TurnView


@dataclass(slots=True)
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

    def turn_view(self) -> TurnView:
        return TurnView(
            self.seat, self.deal, self.hand, self.melds, self.opened[self.seat],
            self.opening_requirement, self.drawn, self.took_discard, self.played_before,
        )

    def to_data(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "deal": self.deal,
            "turn": self.turn,
            "phase": self.phase,
            "dealer": self.dealer,
            "current": self.current,
            "hand": texts(self.hand),
            "drawn": None if self.drawn is None else texts((self.drawn,))[0],
            "took_discard": self.took_discard,
            "discard": texts(self.discard),
            "stock_size": self.stock_size,
            "hand_sizes": self.hand_sizes,
            "totals": self.totals,
            "in_game": self.in_game,
            "opened": self.opened,
            "melds": [meld_to_data(m) for m in self.melds],
            "opening_requirement": self.opening_requirement,
            "rebuilds": self.rebuilds,
            "must_go_out_to_meld": self.must_go_out_to_meld,
            "played_before": self.played_before,
            "legal_draws": self.legal_draws,
        }

    @classmethod
    def from_data(cls, d: dict[str, Any]) -> Observation:
        drawn = d.get("drawn")
        return cls(
            seat=d["seat"],
            deal=d["deal"],
            turn=d["turn"],
            phase=d["phase"],
            dealer=d["dealer"],
            current=d["current"],
            hand=[parse(c) for c in d["hand"]],
            drawn=None if drawn is None else parse(drawn),
            took_discard=bool(d.get("took_discard")),
            discard=[parse(c) for c in d["discard"]],
            stock_size=d["stock_size"],
            hand_sizes=list(d["hand_sizes"]),
            totals=list(d["totals"]),
            in_game=list(d["in_game"]),
            opened=list(d["opened"]),
            melds=[meld_from_data(m) for m in d["melds"]],
            opening_requirement=d["opening_requirement"],
            rebuilds=d.get("rebuilds", 0),
            must_go_out_to_meld=bool(d.get("must_go_out_to_meld")),
            played_before=bool(d.get("played_before")),
            legal_draws=list(d.get("legal_draws", ["stock"])),
        )


def meld_to_data(m: TableMeld) -> dict[str, Any]:
    """The wire form of a meld; kept on the meld and rebuilt only when its shape changed."""
    shape = (len(m.cards), m.low, tuple(m.wild))
    if m.wire is not None and m.wire[0] == shape:
        return m.wire[1]
    data = {
        "id": m.id,
        "owner": m.owner,
        "kind": m.kind,
        "cards": texts(m.cards),
        "wilds": [m.wild_text(i) for i in range(len(m.cards))],
    }
    m.wire = (shape, data)
    return data


def meld_from_data(d: dict[str, Any]) -> TableMeld:
    cards = [parse(c) for c in d["cards"]]
    stands = d["wilds"]
    wild = [s is not None for s in stands]
    m = TableMeld(d["id"], d["owner"], d["kind"], cards, wild)
    if m.kind == SET:
        m.rank = next(rank_of(c) for c, w in zip(cards, wild) if not w)
    else:
        assert m.kind == RUN
        m.suit = next(suit_of(c) for c, w in zip(cards, wild) if not w)
        m.low = rank_of(parse(stands[0])) if wild[0] else rank_of(cards[0])
    return m

