"""Actions a player submits, and their protocol form.

A turn is two decisions (RULES 3): a ``Draw`` (``stock`` or ``discard``) and a
``Play``: an ordered list of table actions (``Meld``, ``LayOff``, ``Swap``) and
the discard (``None`` when table play empties the hand).  Cards are ints here;
``play_to_wire`` / ``play_from_wire`` convert to and from the protocol's
action structs (``protocol.messages``: ``Meld | Layoff | Swap``, cards as
text, a trailing ``*`` marking a card of the wild rank used as a wild).  The
engine needs both for its records (a play entry holds the protocol actions,
and replay reads them back); the referee uses ``play_from_wire`` for a bot's
``play`` through ``arena.referee.wire``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from arena.rules.cards import Card, CardError, parse, text
from arena.rules.frozen import by_fields
from protocol import messages as wire


class IllegalAction(ValueError):
    """An action the rules do not allow now; the message names the rule (e.g. RULES 5.2).

    ``whatever_the_discard``: set by ``simulate_play`` when the play's table actions are refused
    before its discard is looked at, so the same table actions with any other discard are refused
    too (a policy need not try them).
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.whatever_the_discard = False  # set in __init__: compiled, a class default would not reach instances


STOCK: Final = "stock"  # Final: compiled, constants (cards.py)
DISCARD: Final = "discard"


# The hot dataclasses of the engine write their ``__init__`` out (``init=False``): mypyc compiles
# it, where the one ``dataclass`` generates would run interpreted, several times slower (a frozen
# one sets its fields through ``object.__setattr__``, as the generated one does).  The actions
# and ``Play`` write out ``__eq__`` and ``__hash__`` too, as ``dataclass`` makes them (the fields
# compared in order, the hash of their tuple): policies compare plays and keep them in sets.
NO_MARKS: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True, init=False)
class Meld:
    cards: tuple[Card, ...]
    marked: frozenset[int]
    kind: str | None

    def __init__(self, cards: tuple[Card, ...], marked: frozenset[int] = NO_MARKS, kind: str | None = None) -> None:
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "marked", marked)
        object.__setattr__(self, "kind", kind)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Meld:
            return NotImplemented
        return self.cards == other.cards and self.marked == other.marked and self.kind == other.kind

    def __hash__(self) -> int:
        return hash((self.cards, self.marked, self.kind))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


@dataclass(frozen=True, slots=True, init=False)
class LayOff:
    meld: int
    cards: tuple[Card, ...]
    marked: frozenset[int]
    end: str | None

    def __init__(self, meld: int, cards: tuple[Card, ...], marked: frozenset[int] = NO_MARKS,
                 end: str | None = None) -> None:
        object.__setattr__(self, "meld", meld)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "marked", marked)
        object.__setattr__(self, "end", end)

    def __eq__(self, other: object) -> bool:
        if type(other) is not LayOff:
            return NotImplemented
        return self.meld == other.meld and self.cards == other.cards and self.marked == other.marked and self.end == other.end

    def __hash__(self) -> int:
        return hash((self.meld, self.cards, self.marked, self.end))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


@dataclass(frozen=True, slots=True, init=False)
class Swap:
    meld: int
    card: Card
    wild: Card | None

    def __init__(self, meld: int, card: Card, wild: Card | None = None) -> None:
        object.__setattr__(self, "meld", meld)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "wild", wild)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Swap:
            return NotImplemented
        return self.meld == other.meld and self.card == other.card and self.wild == other.wild

    def __hash__(self) -> int:
        return hash((self.meld, self.card, self.wild))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


TableAction = Meld | LayOff | Swap


@dataclass(frozen=True, slots=True, init=False)
class Play:
    actions: tuple[TableAction, ...]
    discard: Card | None

    def __init__(self, actions: tuple[TableAction, ...] = (), discard: Card | None = None) -> None:
        object.__setattr__(self, "actions", actions)
        object.__setattr__(self, "discard", discard)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Play:
            return NotImplemented
        return self.actions == other.actions and self.discard == other.discard

    def __hash__(self) -> int:
        return hash((self.actions, self.discard))

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)


def _cards(raw: list[str], where: str) -> tuple[tuple[Card, ...], frozenset[int]]:
    if not raw:
        raise IllegalAction(f"{where}: 'cards' must be a non-empty list of cards (RULES 3.2)")
    cards: list[Card] = []
    marked: set[int] = set()
    for i, t in enumerate(raw):
        if t.endswith("*"):
            marked.add(i)
            t = t[:-1]
        try:
            cards.append(parse(t))
        except CardError as e:
            raise IllegalAction(f"{where}: {e}") from None
    return tuple(cards), frozenset(marked)


def _card(raw: str, where: str) -> Card:
    try:
        return parse(raw)
    except CardError as e:
        raise IllegalAction(f"{where}: {e}") from None


def action_from_wire(a: wire.Action, index: int) -> TableAction:
    """The engine form of one protocol action (its shape already checked by the decoder)."""
    where = f"action {index + 1}"
    if type(a) is wire.Meld:
        cards, marked = _cards(a.cards, where)
        return Meld(cards, marked, a.kind)
    if type(a) is wire.Layoff:
        cards, marked = _cards(a.cards, where)
        return LayOff(a.meld, cards, marked, a.end)
    assert isinstance(a, wire.Swap)
    return Swap(a.meld, _card(a.card, where), None if a.wild is None else _card(a.wild, where))


def play_from_wire(actions: list[wire.Action], discard: str | None) -> Play:
    """The engine form of a play's actions and discard; IllegalAction names what is not a card."""
    parsed = tuple(action_from_wire(a, i) for i, a in enumerate(actions))
    return Play(parsed, None if discard is None else _card(discard, "discard"))


def _cards_to_wire(cards: tuple[Card, ...], marked: frozenset[int]) -> list[str]:
    if not marked:
        return [text(c) for c in cards]
    return [text(c) + ("*" if i in marked else "") for i, c in enumerate(cards)]


def action_to_wire(a: TableAction) -> wire.Action:
    """The protocol form of one action, as a bot would send it (and a play entry records it)."""
    if type(a) is Meld:
        return wire.Meld(_cards_to_wire(a.cards, a.marked), a.kind)  # type: ignore[arg-type]
    if type(a) is LayOff:
        return wire.Layoff(a.meld, _cards_to_wire(a.cards, a.marked), a.end)  # type: ignore[arg-type]
    assert isinstance(a, Swap)
    return wire.Swap(a.meld, text(a.card), None if a.wild is None else text(a.wild))


def play_to_wire(p: Play) -> tuple[list[wire.Action], str | None]:
    """The protocol form of a play: its actions and its discard."""
    return [action_to_wire(a) for a in p.actions], None if p.discard is None else text(p.discard)
