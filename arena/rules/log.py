"""The entries of a game's log: typed, frozen, tagged on ``e`` (docs/ARCHITECTURE.md section 2).

``Game.log`` holds these, in the order things happened; a record file is one
JSON line per entry, written by ``msgspec.json`` from these structs, so the
field order here is the byte order of a record line.  Cards are text (as on
the wire); actions and melds are the protocol's own structs
(``protocol.messages``), so a play entry holds exactly what a bot sends.

The referee writes two things the engine does not: a decision's latency
beside its draw or play entry, and ``failure`` entries (``arena.referee.entries``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from arena.rules.cards import texts
from arena.rules.melds import TableMeld as EngineMeld
from protocol.messages import Action, TableMeld


class _Entry(msgspec.Struct, frozen=True, tag_field="e"):
    pass


class GameStart(_Entry, frozen=True, tag="game_start"):
    seed: int
    players: int
    first_dealer_draws: list[list[str]]  # the cards drawn for first dealer, round by round (RULES 2.2)
    dealer: int


class DealStart(_Entry, frozen=True, tag="deal_start"):
    deal: int
    dealer: int
    hands: list[list[str]]
    upcard: str
    returned_wilds: list[str]  # upcards that were wilds and went back into the stock (RULES 2.5)
    stock_size: int


class DrawEntry(_Entry, frozen=True, tag="draw", omit_defaults=True):
    seat: int
    source: str
    card: str | None = None  # None: the stock was empty and could not be rebuilt (RULES 6.3)


class MeldEffect(msgspec.Struct, frozen=True, tag_field="kind", tag="meld"):
    meld: TableMeld  # as it was put down


class LayoffEffect(msgspec.Struct, frozen=True, tag_field="kind", tag="layoff"):
    meld: int
    cards: list[str]


class SwapEffect(msgspec.Struct, frozen=True, tag_field="kind", tag="swap"):
    meld: int
    card: str
    wild: str


Effect = MeldEffect | LayoffEffect | SwapEffect


class PlayEntry(_Entry, frozen=True, tag="play", omit_defaults=True):
    seat: int
    actions: list[Action]
    discard: str | None
    effects: list[Effect] = []  # what the actions did, in order


class Rebuild(_Entry, frozen=True, tag="rebuild"):
    stock_size: int
    upcard: str | None


class DealEnd(_Entry, frozen=True, tag="deal_end"):
    deal: int
    out: int | None
    rummy: bool
    reason: str
    hands: list[list[str]]
    hand_values: list[int]
    scores: list[int]
    totals: list[int]
    eliminated: list[int]


class GameEnd(_Entry, frozen=True, tag="game_end"):
    reason: str
    totals: list[int]
    placings: list[int]


class ForfeitEntry(_Entry, frozen=True, tag="forfeit"):
    seat: int
    failure: str
    reason: str


Entry = GameStart | DealStart | DrawEntry | PlayEntry | Rebuild | DealEnd | GameEnd | ForfeitEntry
ACTIONS = (DrawEntry, PlayEntry, ForfeitEntry)


class EntryError(ValueError):
    """An entry object that is not an engine entry of the right shape."""


def entry_from_data(data: dict[str, Any]) -> Entry:
    """The typed entry of a record line's object (unknown fields, such as the referee's ``ms``, are ignored)."""
    try:
        entry: Entry = msgspec.convert(data, Entry)
    except msgspec.ValidationError as e:
        raise EntryError(str(e)) from None
    return entry


def wire_meld(m: EngineMeld) -> TableMeld:
    """The protocol form of a meld; kept on the meld and rebuilt only when its shape changed."""
    shape = (len(m.cards), m.low, tuple(m.wild))
    if m.wire is not None and m.wire[0] == shape:
        return m.wire[1]
    wire = TableMeld(id=m.id, owner=m.owner, kind=m.kind, cards=texts(m.cards),  # type: ignore[arg-type]
                     wilds=[m.wild_text(i) for i in range(len(m.cards))])
    m.wire = (shape, wire)
    return wire
