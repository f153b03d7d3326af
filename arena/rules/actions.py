"""Actions a player submits, and their wire (JSON) form.

A turn is two decisions (RULES 3): a ``Draw`` (``stock`` or ``discard``) and a
``Play``: an ordered list of table actions (``Meld``, ``LayOff``, ``Swap``) and
the discard (``None`` when table play empties the hand).  Cards are ints here;
``play_from_data`` / ``play_to_data`` convert from and to the protocol's card
strings, where a trailing ``*`` marks a card of the wild rank used as a wild.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.rules.cards import Card, CardError, parse, text


class IllegalAction(ValueError):
    """An action the rules do not allow now; the message names the rule (e.g. RULES 5.2)."""


STOCK = "stock"
DISCARD = "discard"


@dataclass(frozen=True, slots=True)
class Meld:
    cards: tuple[Card, ...]
    marked: frozenset[int] = field(default_factory=frozenset)
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class LayOff:
    meld: int
    cards: tuple[Card, ...]
    marked: frozenset[int] = field(default_factory=frozenset)
    end: str | None = None


@dataclass(frozen=True, slots=True)
class Swap:
    meld: int
    card: Card
    wild: Card | None = None


TableAction = Meld | LayOff | Swap


@dataclass(frozen=True, slots=True)
class Play:
    actions: tuple[TableAction, ...] = ()
    discard: Card | None = None


def _cards(raw: object, where: str) -> tuple[tuple[Card, ...], frozenset[int]]:
    if not isinstance(raw, list) or not raw:
        raise IllegalAction(f"{where}: 'cards' must be a non-empty list of cards (RULES 3.2)")
    cards: list[Card] = []
    marked: set[int] = set()
    for i, t in enumerate(raw):
        if not isinstance(t, str):
            raise IllegalAction(f"{where}: card {i + 1} is not a string (RULES 1)")
        if t.endswith("*"):
            marked.add(i)
            t = t[:-1]
        try:
            cards.append(parse(t))
        except CardError as e:
            raise IllegalAction(f"{where}: {e}") from None
    return tuple(cards), frozenset(marked)


def _card(raw: object, where: str) -> Card:
    if not isinstance(raw, str):
        raise IllegalAction(f"{where}: expected a card string, got {raw!r} (RULES 1)")
    try:
        return parse(raw)
    except CardError as e:
        raise IllegalAction(f"{where}: {e}") from None


def _int(raw: object, where: str) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool):
        raise IllegalAction(f"{where}: expected a meld id (a whole number), got {raw!r} (RULES 3.2)")
    return raw


def action_from_data(data: Any, index: int) -> TableAction:
    where = f"action {index + 1}"
    if not isinstance(data, dict):
        raise IllegalAction(f"{where}: expected an object (RULES 3.2)")
    kind = data.get("type")
    if kind == "meld":
        cards, marked = _cards(data.get("cards"), where)
        mk = data.get("kind")
        if mk not in (None, "set", "run"):
            raise IllegalAction(f"{where}: 'kind' must be \"set\" or \"run\" (RULES 4)")
        return Meld(cards, marked, mk)
    if kind == "layoff":
        cards, marked = _cards(data.get("cards"), where)
        end = data.get("end")
        if end not in (None, "low", "high"):
            raise IllegalAction(f"{where}: 'end' must be \"low\" or \"high\" (RULES 5.3)")
        return LayOff(_int(data.get("meld"), where), cards, marked, end)
    if kind == "swap":
        wild = data.get("wild")
        return Swap(_int(data.get("meld"), where), _card(data.get("card"), where), None if wild is None else _card(wild, where))
    raise IllegalAction(f"{where}: unknown action type {kind!r}; expected meld, layoff or swap (RULES 3.2)")


def play_from_data(actions: Any, discard: Any) -> Play:
    if not isinstance(actions, list):
        raise IllegalAction("'actions' must be a list (RULES 3.2)")
    parsed = tuple(action_from_data(a, i) for i, a in enumerate(actions))
    return Play(parsed, None if discard is None else _card(discard, "discard"))


def _cards_to_data(cards: tuple[Card, ...], marked: frozenset[int]) -> list[str]:
    return [text(c) + ("*" if i in marked else "") for i, c in enumerate(cards)]


def action_to_data(a: TableAction) -> dict[str, Any]:
    if isinstance(a, Meld):
        d: dict[str, Any] = {"type": "meld", "cards": _cards_to_data(a.cards, a.marked)}
        if a.kind:
            d["kind"] = a.kind
        return d
    if isinstance(a, LayOff):
        d = {"type": "layoff", "meld": a.meld, "cards": _cards_to_data(a.cards, a.marked)}
        if a.end:
            d["end"] = a.end
        return d
    d = {"type": "swap", "meld": a.meld, "card": text(a.card)}
    if a.wild is not None:
        d["wild"] = text(a.wild)
    return d


def play_to_data(p: Play) -> dict[str, Any]:
    return {"actions": [action_to_data(a) for a in p.actions], "discard": None if p.discard is None else text(p.discard)}
