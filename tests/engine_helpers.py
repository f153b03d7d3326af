"""Shared helpers for the engine tests: staging exact game situations.

``stage`` builds a ``Game`` at a chosen position (hands, stock, discard pile,
melds, opened flags, whose turn and phase ...) through the public
``Game.position`` / ``Game.from_position``, so that a test can put the engine in
the precise situation a rule clause talks about; ``stacked_game`` deals chosen
decks through an injected ``RandomSource``.  Cards are
written as in RULES 1 (``"7H 8H JK"``); a trailing ``*`` marks a card of the
wild rank used as a wild.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypeVar

import msgspec
import pytest

from arena.referee import wire
from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap
from arena.rules.cards import parse
from arena.rules.chance import RandomSource, SeededSource, Shuffler
from arena.rules.game import Game
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
    random_acts: int | None = None,
    source: RandomSource | None = None,
    **fields: Any,
) -> Game:
    """A game in exactly the given situation (everything not given is as the seed dealt it).

    Built through the public ``Game.position`` / ``Game.from_position``: the dealt
    position with the given parts replaced.  ``stock`` and ``discard`` are written
    bottom first, so the last card is the top.  ``melds`` is a list of ``(cards,
    owner)`` or ``(cards, owner, kind)``.  In the play phase ``drawn`` should already
    be in the hand.  Other ``Position`` fields may be given by name (lists for tuples).
    """
    r = rules if isinstance(rules, RuleSet) else resolve(rules)
    dealt = Game(r, players, seed).position()
    changes: dict[str, Any] = {
        "current": current, "phase": phase, "skip_draw": None, "drawn": None if drawn is None else parse(drawn),
        "took_discard": took_discard, "turn": turn, "rebuilds": rebuilds,
    }
    if random_acts is not None:
        changes["random_acts"] = random_acts
    if hands is not None:
        new_hands = list(dealt.hands)
        for s, h in (hands.items() if isinstance(hands, dict) else enumerate(hands)):
            new_hands[s] = tuple(cards(h))
        changes["hands"] = tuple(new_hands)
    if stock is not None:
        changes["stock"] = tuple(cards(stock))
    if discard is not None:
        changes["discard"] = tuple(cards(discard))
    if melds is not None:
        changes["melds"] = tuple(table_meld(r, spec[0], owner=spec[1], mid=i, kind=spec[2] if len(spec) == 3 else None)
                                 for i, spec in enumerate(melds))
    if opened is not None:
        changes["opened"] = tuple(opened)
    if played_before is not None:
        changes["played_before"] = tuple(played_before)
    if totals is not None:
        changes["totals"] = tuple(totals)
    if deal_no is not None:
        changes["deal_no"] = deal_no
    changes.update({k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    return Game.from_position(r, replace(dealt, **changes), seed, source=source)


def card_count(g: Game) -> int:
    """Every card of the deal's deck, wherever it is (the conservation oracle)."""
    return g.position().card_count()


def snapshot(g: Game) -> Any:
    """Every state field of a game, its log and what each seat sees, for "an illegal action changes nothing"."""
    melds = [(m.id, m.owner, m.kind, list(m.cards), list(m.wild), m.rank, m.suit, m.low) for m in g.melds]
    return (g.position(), melds, g.deck_size, copy.deepcopy(g.log), [msgspec.to_builtins(wire.observation(g.observation(s))) for s in range(g.n)])


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
    """One random act of a stacked source: a fixed deck order, a fixed insertion point."""

    def __init__(self, order: list[int] | None, position: int | None, fallback: Shuffler) -> None:
        self.order = order
        self.position = position
        self.fallback = fallback

    def shuffle(self, x: list[int]) -> None:
        if self.order is None:
            self.fallback.shuffle(x)
            return
        assert sorted(self.order) == sorted(x), "a stacked deck must hold exactly the deck's cards"
        x[:] = self.order

    def randint(self, a: int, b: int) -> int:
        return self.fallback.randint(a, b) if self.position is None else max(a, min(self.position, b))


def stacked_deck(top_first: str, decks: int, jokers: int) -> list[int]:
    """A whole deck (bottom first, as the engine pops from the end) whose top cards are ``top_first``."""
    from arena.rules.cards import full_deck

    rest = full_deck(decks, jokers)
    top = cards(top_first)
    for c in top:
        rest.remove(c)
    return rest + list(reversed(top))


class StackedSource:
    """A ``RandomSource`` dealing stacked decks (top card first): the first-dealer draw,
    the deck of given deals, and where a reinserted wild goes (``insert_at`` from the
    bottom); every other random act as ``SeededSource(seed)`` gives it."""

    def __init__(self, rules: RuleSet, players: int, seed: int, *, first_dealer: str | None = None,
                 deals: dict[int, str] | None = None, insert_at: int | None = None) -> None:
        self.seeded = SeededSource(seed)
        self.size = rules.count_value("decks", players), rules.count_value("jokers", players)
        self.first_dealer_top = first_dealer
        self.deals = deals or {}
        self.insert_at = insert_at

    def first_dealer(self, attempt: int) -> Shuffler:
        order = stacked_deck(self.first_dealer_top, *self.size) if attempt == 0 and self.first_dealer_top else None
        return _Stacked(order, None, self.seeded.first_dealer(attempt))

    def deal(self, deal: int) -> Shuffler:
        order = stacked_deck(self.deals[deal], *self.size) if deal in self.deals else None
        return _Stacked(order, None, self.seeded.deal(deal))

    def act(self, deal: int, k: int) -> Shuffler:
        return _Stacked(None, self.insert_at, self.seeded.act(deal, k))


def stacked_game(rules: RuleSet, players: int, seed: int, **stacking: Any) -> Game:
    """``Game(rules, players, seed)`` dealt from a ``StackedSource`` (keyword arguments as there)."""
    return Game(rules, players, seed, source=StackedSource(rules, players, seed, **stacking))


def tag(entry: Entry) -> str:
    """The kind of a log entry (its ``e``)."""
    return str(type(entry).__struct_config__.tag)


def entry_at(log: list[Entry], i: int, kind: type[_E]) -> _E:
    """The log entry at ``i``, which must be a ``kind``."""
    entry = log[i]
    assert isinstance(entry, kind), entry
    return entry
