"""Shared helpers for the engine tests: staging exact game situations.

``stage`` builds a ``Game`` and then overwrites its state fields (hands, stock,
discard pile, melds, opened flags, whose turn and phase ...) so that a test can
put the engine in the precise situation a rule clause talks about.  Cards are
written as in RULES 1 (``"7H 8H JK"``); a trailing ``*`` marks a card of the
wild rank used as a wild.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec
import pytest

from arena.referee import wire
from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap
from arena.rules.cards import parse
from arena.rules.game import Game, Phase
from arena.rules.log import Entry
from arena.rules.melds import TableMeld, form_meld
from arena.rules.options import RuleSet, resolve

PRESET_NAMES = ("basic", "international", "parlett", "czech", "german", "wrotham")


_E = TypeVar("_E")

def cards(s: str) -> list[int]:
    """``"7H 8H JK"`` -> card ints (marks ``*`` are dropped)."""
    return [parse(t.rstrip("*")) for t in s.split()]


def marks(s: str) -> frozenset[int]:
    return frozenset(i for i, t in enumerate(s.split()) if t.endswith("*"))


def rules_of(preset: str, **overrides: Any) -> RuleSet:
    return resolve(preset, overrides or None)


def table_meld(rules: RuleSet, s: str, owner: int = 0, mid: int = 0, kind: str | None = None) -> TableMeld:
    m = form_meld(cards(s), rules, marks(s), kind)
    m.id, m.owner = mid, owner
    return m


def meld(s: str, kind: str | None = None) -> Meld:
    return Meld(tuple(cards(s)), marks(s), kind)


def layoff(mid: int, s: str, end: str | None = None) -> LayOff:
    return LayOff(mid, tuple(cards(s)), marks(s), end)


def swap(mid: int, card: str, wild: str | None = None) -> Swap:
    return Swap(mid, parse(card), None if wild is None else parse(wild))


def play(*actions: Any, discard: str | None = None) -> Play:
    return Play(tuple(actions), None if discard is None else parse(discard))


def stage(
    rules: RuleSet | str,
    players: int = 2,
    seed: int = 0,
    *,
    hands: dict[int, str] | list[str] | None = None,
    stock: str | None = None,
    discard: str | None = None,
    melds: Sequence[tuple[str, int] | tuple[str, int, str]] | None = None,
    opened: list[bool] | None = None,
    played_before: list[bool] | None = None,
    current: int = 0,
    phase: str = "draw",
    drawn: str | None = None,
    took_discard: bool = False,
    totals: list[int] | None = None,
    deal_no: int | None = None,
    turn: int = 0,
    rebuilds: int = 0,
) -> Game:
    """A game in exactly the given situation (everything not given is left as dealt).

    ``stock`` and ``discard`` are written bottom first, so the last card is the
    top.  ``melds`` is a list of ``(cards, owner)`` or ``(cards, owner, kind)``.
    In the play phase ``drawn`` should already be in the hand.
    """
    r = rules if isinstance(rules, RuleSet) else resolve(rules)
    g = Game(r, players, seed)
    if hands is not None:
        items = hands.items() if isinstance(hands, dict) else enumerate(hands)
        for s, h in items:
            g.hands[s] = cards(h)
    if stock is not None:
        g.stock = cards(stock)
    if discard is not None:
        g.discard = cards(discard)
    if melds is not None:
        g.melds = []
        for i, spec in enumerate(melds):
            kind = spec[2] if len(spec) == 3 else None
            g.melds.append(table_meld(r, spec[0], owner=spec[1], mid=i, kind=kind))
    if opened is not None:
        g.opened = list(opened)
    if played_before is not None:
        g.played_before = list(played_before)
    if totals is not None:
        g.totals = list(totals)
    if deal_no is not None:
        g.deal_no = deal_no
    g.current = current
    g.phase = Phase(phase)
    g.skip_draw = None
    g.drawn = None if drawn is None else parse(drawn)
    g.took_discard = took_discard
    g.turn = turn
    g.rebuilds = rebuilds
    g.deck_size = g.card_count()
    return g


def snapshot(g: Game) -> dict[str, Any]:
    """A deep copy of every state field of a game, for "an illegal action changes nothing"."""
    fields = ("totals", "in_game", "left_in_deal", "forfeited", "deal_no", "deal_scores", "end_reason", "hands",
              "stock", "discard", "melds", "dead", "opened", "played_before", "phase", "turn", "current", "rebuilds",
              "random_acts", "skip_draw", "drawn", "took_discard", "deck_size", "dealer")
    out = {f: copy.deepcopy(getattr(g, f)) for f in fields}
    out["melds"] = [(m.id, m.owner, m.kind, list(m.cards), list(m.wild), m.rank, m.suit, m.low) for m in g.melds]
    out["log"] = copy.deepcopy(g.log)
    out["observations"] = [msgspec.to_builtins(wire.observation(g.observation(s))) for s in range(g.n)]
    return out


def rejects(g: Game, action: Play | str, *needles: str) -> str:
    """Assert that ``action`` (a Play, or a draw source) is illegal, changes nothing, and the
    reason names the rule and contains every needle; return the reason."""
    before = snapshot(g)
    with pytest.raises(IllegalAction) as exc:
        if isinstance(action, str):
            g.draw(action)
        else:
            g.play(action)
    msg = str(exc.value)
    assert msg and "RULES" in msg, msg
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"
    assert snapshot(g) == before
    if isinstance(action, str):
        assert not g.can_draw(action)
    else:
        assert not g.can_play(action)
    return msg


def texts_of(cs: list[int]) -> str:
    from arena.rules.cards import texts

    return " ".join(texts(cs))


class _Stacked:
    """Stands in for the seeded ``random.Random`` of one random act: a fixed deck order."""

    def __init__(self, order: list[int] | None, position: int | None) -> None:
        self.order = order
        self.position = position

    def shuffle(self, x: list[int]) -> None:
        if self.order is not None:
            assert sorted(self.order) == sorted(x), "a stacked deck must hold exactly the deck's cards"
            x[:] = self.order

    def randint(self, a: int, b: int) -> int:
        return a if self.position is None else max(a, min(self.position, b))


def stacked_deck(top_first: str, decks: int, jokers: int) -> list[int]:
    """A whole deck (bottom first, as the engine pops from the end) whose top cards are ``top_first``."""
    from arena.rules.cards import full_deck

    rest = full_deck(decks, jokers)
    top = cards(top_first)
    for c in top:
        rest.remove(c)
    return rest + list(reversed(top))


def stack(monkeypatch: pytest.MonkeyPatch, rules: RuleSet, players: int, *, first_dealer: str | None = None,
          deals: dict[int, str] | None = None, insert_at: int | None = None) -> None:
    """Make the next games deal from stacked decks (top card first): the first-dealer draw,
    the deck of given deals, and where a reinserted wild goes (``insert_at`` from the bottom)."""
    original = Game._rng
    d, j = rules.count_value("decks", players), rules.count_value("jokers", players)

    def fake(self: Game, *parts: object) -> Any:
        if parts == ("first-dealer",) and first_dealer is not None:
            return _Stacked(stacked_deck(first_dealer, d, j), None)
        if len(parts) == 2 and parts[0] == "deal" and deals and parts[1] in deals:
            return _Stacked(stacked_deck(deals[parts[1]], d, j), None)
        if len(parts) == 4 and parts[2] == "act" and insert_at is not None:
            return _Stacked(None, insert_at)
        return original(self, *parts)

    monkeypatch.setattr(Game, "_rng", fake)


def tag(entry: Entry) -> str:
    """The kind of a log entry (its ``e``)."""
    return str(type(entry).__struct_config__.tag)


def entry_at(log: list[Entry], i: int, kind: type[_E]) -> _E:
    """The log entry at ``i``, which must be a ``kind``."""
    entry = log[i]
    assert isinstance(entry, kind), entry
    return entry
