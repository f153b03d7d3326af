"""Melds (RULES.md section 4): sets, runs, wilds, lay-offs, swaps, opening value.

A ``TableMeld`` records a meld's geometry, so that what each wild stands for is
fixed: a run knows its suit and the position of its first card (positions
1..13, and 14 for an ace above the king under ``high_or_low``; under ``wrap``
positions go round modulo 13); a set knows its rank.  Everything here is a
pure function of the cards and the ``RuleSet``; errors are ``MeldError`` with a
sentence that names the rule (``laid_off``, for planners trying many lay-offs,
returns that sentence instead of raising it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Final

from arena.rules.cards import JOKER, RANK_NAMES, Card, make, rank_of, suit_of, text
from arena.rules.frozen import by_fields
from arena.rules.memo import PerRules
from arena.rules.options import RuleSet

if TYPE_CHECKING:
    from protocol.messages import TableMeld as WireMeld

SET: Final = "set"  # Final: compiled, constants (cards.py)
RUN: Final = "run"


class MeldError(ValueError):
    """Cards that do not form (or keep) a valid meld; the message names the rule."""


@dataclass(slots=True, init=False)
class TableMeld:
    """A meld on the table.  ``wild[i]`` says whether ``cards[i]`` is used as a wild."""

    id: int
    owner: int
    kind: str
    cards: list[Card]
    wild: list[bool]
    rank: int  # sets: the rank
    suit: int  # runs: the suit
    low: int  # runs: position of cards[0]
    # the meld's protocol form and the shape it was made for (see log.wire_meld)
    wire: tuple[tuple[int, int, tuple[bool, ...]], WireMeld] | None = field(compare=False, repr=False)

    def __init__(self, id: int, owner: int, kind: str, cards: list[Card], wild: list[bool], rank: int = 0,
                 suit: int = 0, low: int = 0,
                 wire: tuple[tuple[int, int, tuple[bool, ...]], WireMeld] | None = None) -> None:
        # written out: mypyc compiles it (arena/rules/actions.py says why)
        self.id, self.owner, self.kind, self.cards, self.wild = id, owner, kind, cards, wild
        self.rank, self.suit, self.low, self.wire = rank, suit, low, wire

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)  # compiled, its __new__ runs __init__ (frozen.py)

    def copy(self) -> TableMeld:
        return TableMeld(self.id, self.owner, self.kind, list(self.cards), list(self.wild), self.rank, self.suit, self.low)

    def stands_for(self, i: int) -> Card | int:
        """The card a position stands for: a card for runs, a rank (negative) for sets."""
        if self.kind == RUN:
            return make(position_rank(self.low + i), self.suit)
        return -self.rank

    def wild_text(self, i: int) -> str | None:
        if not self.wild[i]:
            return None
        if self.kind == RUN:
            return text(make(position_rank(self.low + i), self.suit))
        return RANK_NAMES[self.rank]

    @property
    def wild_count(self) -> int:
        return sum(self.wild)


def position_rank(p: int) -> int:
    """Rank at a run position; positions past 13 go round (14 = ace high)."""
    return (p - 1) % 13 + 1


def is_wild_card(card: Card, rules: RuleSet) -> bool:
    """Jokers, and (with ``wild_rank``) every card of that rank (RULES 2.2, 2.5)."""
    return card == JOKER or (rules.wild_rank is not None and rank_of(card) == rules.wild_rank)


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


def check_wild_limits(kind: str, cards: list[Card], wild: list[bool], rules: RuleSet) -> None:
    problem = _wild_limits_problem(kind, cards, wild, rules)
    if problem is not None:
        raise MeldError(problem)


def _wild_limits_problem(kind: str, cards: list[Card], wild: list[bool], rules: RuleSet) -> str | None:
    """``check_wild_limits``'s MeldError sentence, or None."""
    wilds = sum(wild)
    naturals = len(cards) - wilds
    if naturals < 1:
        return "a meld needs at least one natural card (RULES 4.3)"
    if rules.max_wilds_per_meld and wilds > rules.max_wilds_per_meld:
        n = rules.max_wilds_per_meld
        return f"at most {n} wild{_plural(n)} per meld (max_wilds_per_meld, RULES 4.3)"
    if rules.wilds_at_most_naturals and wilds > naturals:
        return "wilds may not outnumber the natural cards of a meld (wilds_at_most_naturals, RULES 4.3)"
    if kind == RUN and not rules.wilds_adjacent:
        for i in range(1, len(wild)):
            if wild[i] and wild[i - 1]:
                return "two wilds may not stand next to each other in a run (wilds_adjacent, RULES 4.3)"
    return None


def _max_position(rules: RuleSet) -> int:
    return 14 if rules.ace == "high_or_low" else 13


def _run_low(cards: list[Card], wild: list[bool], rules: RuleSet) -> int:
    """The position of the first card if the cards form a run, else MeldError."""
    n = len(cards)
    suit = -1
    first = -1
    for i, c in enumerate(cards):
        if not wild[i]:
            if suit < 0:
                suit, first = c & 3, i  # suit_of
            elif c & 3 != suit:
                raise MeldError("the cards of a run must all be of one suit (RULES 4.2)")
    if n > 13 and rules.ace != "high_or_low":
        raise MeldError("a run has at most 13 cards (RULES 4.2)")
    r0 = cards[first] >> 2  # rank_of
    if rules.ace == "wrap":
        low = (r0 - first - 1) % 13 + 1
        for i, c in enumerate(cards):
            if not wild[i] and rank_of(c) != position_rank(low + i):
                raise MeldError("the cards are not in consecutive order for a run (RULES 4.2)")
        return low
    candidates = [r0 - first]
    if r0 == 1 and rules.ace == "high_or_low":
        candidates.append(14 - first)
    top = _max_position(rules)
    fitted_but_out_of_range = False
    for low in candidates:
        if all(wild[i] or c >> 2 == (low + i - 1) % 13 + 1 for i, c in enumerate(cards)):  # rank_of, position_rank
            if low >= 1 and low + n - 1 <= top:
                return low
            fitted_but_out_of_range = True
    if fitted_but_out_of_range:
        if rules.ace == "low":
            raise MeldError("a run cannot go past its ends: the ace is low only, so A-2-3 is a run and Q-K-A is not (ace = low, RULES 4.2)")
        raise MeldError("a run cannot go round the corner: the ace is an end, so Q-K-A and A-2-3 are runs and K-A-2 is not (ace = high_or_low, RULES 4.2)")
    raise MeldError("the cards are not in consecutive order for a run (RULES 4.2)")


def _set_rank(cards: list[Card], wild: list[bool], rules: RuleSet) -> int:
    rank = _set_rank_or_problem(cards, wild, rules)
    if isinstance(rank, str):
        raise MeldError(rank)
    return rank


def _set_rank_or_problem(cards: list[Card], wild: list[bool], rules: RuleSet) -> int | str:
    """``_set_rank``, or its MeldError sentence."""
    rank = 0
    suits: set[int] = set()
    distinct = rules.set_distinct_suits
    for i, c in enumerate(cards):
        if wild[i]:
            continue
        if rank and c >> 2 != rank:  # rank_of
            return "the cards of a set must all be of one rank (RULES 4.1)"
        rank = c >> 2
        if distinct:
            if c & 3 in suits:  # suit_of
                return "no two natural cards of a set may share a suit (set_distinct_suits, RULES 4.1)"
            suits.add(c & 3)
    if len(cards) > rules.set_max:
        return f"a set has at most {rules.set_max} cards (set_max, RULES 4.1)"
    return rank


def _shape(cards: list[Card], wild: list[bool], rules: RuleSet, kind: str | None) -> TableMeld:
    if len(cards) < 3:
        raise MeldError("a meld needs at least 3 cards (RULES 4.1, 4.2)")
    naturals = [c for c, w in zip(cards, wild) if not w]
    if not naturals:
        raise MeldError("a meld needs at least one natural card (RULES 4.3)")
    r0, s0 = naturals[0] >> 2, naturals[0] & 3  # rank_of, suit_of
    same_rank = all(c >> 2 == r0 for c in naturals)
    same_suit = all(c & 3 == s0 for c in naturals)
    try_set = kind in (None, SET) and (same_rank or kind == SET)
    try_run = kind in (None, RUN) and (same_suit or kind == RUN)
    if not try_set and not try_run:
        raise MeldError("the cards share neither one rank (a set) nor one suit (a run) (RULES 4.1, 4.2)")
    error: MeldError | None = None
    if try_set:
        try:
            rank = _set_rank(cards, wild, rules)
            check_wild_limits(SET, cards, wild, rules)
            return TableMeld(-1, -1, SET, list(cards), list(wild), rank=rank)
        except MeldError as e:
            error = e
    if try_run:
        try:
            low = _run_low(cards, wild, rules)
            check_wild_limits(RUN, cards, wild, rules)
            return TableMeld(-1, -1, RUN, list(cards), list(wild), suit=suit_of(naturals[0]), low=low)
        except MeldError as e:
            if error is None or len(naturals) > 1:
                error = e
    assert error is not None
    raise error


# form_meld's answers: the shape (kind, wild flags, rank, suit, low) or the MeldError's sentence
_FORMED: Final[PerRules[tuple[tuple[Card, ...], frozenset[int], str | None], tuple[str, tuple[bool, ...], int, int, int] | str]] = PerRules()


def form_meld(cards: list[Card], rules: RuleSet, marked: frozenset[int] = frozenset(), kind: str | None = None) -> TableMeld:
    """The meld these cards form, in the order written, or MeldError.

    Jokers are wild; a card of ``wild_rank`` is wild when ``marked`` (by index)
    and otherwise natural where possible (RULES 4.3).  With a single natural
    card a meld could be read as a set or a run; ``kind`` chooses, set first.

    >>> from arena.rules.cards import parse
    >>> from arena.rules.options import resolve
    >>> run = form_meld([parse(c) for c in ("7H", "8H", "9H")], resolve("basic"))
    >>> run.kind, run.low
    ('run', 7)
    >>> form_meld([parse(c) for c in ("7H", "9S", "8D")], resolve("basic"))
    Traceback (most recent call last):
    arena.rules.melds.MeldError: the cards share neither one rank (a set) nor one suit (a run) (RULES 4.1, 4.2)
    """
    memo = _FORMED.of(rules)
    key = (tuple(cards), marked, kind)
    found = memo.get(key)
    if found is None:
        try:
            m = _form_meld(cards, rules, marked, kind)
            found = (m.kind, tuple(m.wild), m.rank, m.suit, m.low)
        except MeldError as e:
            found = str(e)
        memo[key] = found
    if isinstance(found, str):
        raise MeldError(found)
    k, wild, rank, suit, low = found
    return TableMeld(-1, -1, k, list(cards), list(wild), rank, suit, low)


def _form_meld(cards: list[Card], rules: RuleSet, marked: frozenset[int], kind: str | None) -> TableMeld:
    forced = [c == JOKER or i in marked for i, c in enumerate(cards)]
    for i in marked:
        if not (0 <= i < len(cards)) or not is_wild_card(cards[i], rules):
            raise MeldError(f"only a joker or a card of the wild rank can be used as a wild, not {text(cards[i]) if 0 <= i < len(cards) else '?'} (RULES 4.3)")
    wild_rank = rules.wild_rank  # is_wild_card, for the cards not already forced wild (no joker is left)
    optional = [] if wild_rank is None else [i for i, c in enumerate(cards) if not forced[i] and c >> 2 == wild_rank]
    if not optional:
        return _shape(cards, forced, rules, kind)
    first_error: MeldError | None = None
    for k in range(len(optional) + 1):
        for chosen in combinations(optional, k):
            wild = list(forced)
            for i in chosen:
                wild[i] = True
            try:
                return _shape(cards, wild, rules, kind)
            except MeldError as e:
                first_error = first_error or e
    assert first_error is not None
    raise first_error


def lay_off(meld: TableMeld, card: Card, rules: RuleSet, as_wild: bool = False, end: str | None = None) -> bool:
    """Add one card to ``meld`` in place (RULES 5.3) and say whether it went in as a wild.

    Raises MeldError and leaves the meld unchanged when the card does not fit.
    """
    fitted = laid_off(meld, card, rules, as_wild, end)
    if isinstance(fitted, str):
        raise MeldError(fitted)
    return fitted


def laid_off(meld: TableMeld, card: Card, rules: RuleSet, as_wild: bool = False, end: str | None = None) -> bool | str:
    """``lay_off``, its refusal returned (the MeldError's sentence) instead: a planner tries many
    lay-offs that do not fit, and compiled, an exception costs a traceback entry in every
    function it leaves."""
    natural_possible = card != JOKER and not as_wild
    if meld.kind == SET:
        if natural_possible and rank_of(card) == meld.rank:
            wild = False
        elif is_wild_card(card, rules):
            wild = True
        else:
            return f"{text(card)} does not fit a set of {RANK_NAMES[meld.rank]}s (RULES 4.1)"
        cards = meld.cards + [card]
        flags = meld.wild + [wild]
        rank = _set_rank_or_problem(cards, flags, rules)
        if isinstance(rank, str):
            return rank
        problem = _wild_limits_problem(SET, cards, flags, rules)
        if problem is not None:
            return problem
        meld.cards, meld.wild = cards, flags
        return wild
    n = len(meld.cards)
    top = _max_position(rules)
    if rules.ace != "wrap":
        room_low, room_high = meld.low - 1 >= 1, meld.low + n <= top
    else:
        room_low = room_high = n < 13
    fits_low = natural_possible and suit_of(card) == meld.suit and rank_of(card) == position_rank(meld.low - 1) and room_low
    fits_high = natural_possible and suit_of(card) == meld.suit and rank_of(card) == position_rank(meld.low + n) and room_high
    if end == "low":
        fits_high = False
    elif end == "high":
        fits_low = False
    if fits_low or fits_high:
        wild = False
        at_low = fits_low
    elif is_wild_card(card, rules):
        wild = True
        at_low = end == "low"
        if not (room_low if at_low else room_high):
            return f"the run has no room at its {'low' if at_low else 'high'} end for a wild (RULES 4.2, 5.3)"
    else:
        return f"{text(card)} does not fit at {'either end' if end is None else 'the ' + end + ' end'} of the run (RULES 5.3)"
    if at_low:
        cards, flags, low = [card] + meld.cards, [wild] + meld.wild, meld.low - 1
        if rules.ace == "wrap":
            low = position_rank(low)
    else:
        cards, flags, low = meld.cards + [card], meld.wild + [wild], meld.low
    problem = _wild_limits_problem(RUN, cards, flags, rules)
    if problem is not None:
        return problem
    meld.cards, meld.wild, meld.low = cards, flags, low
    return wild


def swap_wild(meld: TableMeld, card: Card, rules: RuleSet, wild_card: Card | None = None) -> Card:
    """Put natural ``card`` in place of a wild of ``meld`` in place; return the wild (RULES 4.4)."""
    if card == JOKER:
        raise MeldError("a swap puts a natural card in place of a wild, and a joker is not natural (RULES 4.4)")
    for i, w in enumerate(meld.wild):
        if not w or (wild_card is not None and meld.cards[i] != wild_card):
            continue
        if meld.kind == RUN:
            if make(position_rank(meld.low + i), meld.suit) != card:
                continue
        else:
            if rank_of(card) != meld.rank:
                raise MeldError(f"{text(card)} is not of the set's rank {RANK_NAMES[meld.rank]} (RULES 4.4)")
            if rules.set_distinct_suits and any(not meld.wild[j] and suit_of(c) == suit_of(card) for j, c in enumerate(meld.cards)):
                raise MeldError(f"the set already has a natural card of {text(card)[1]}, and its suits must differ (RULES 4.4)")
        taken = meld.cards[i]
        meld.cards[i] = card
        meld.wild[i] = False
        return taken
    which = "" if wild_card is None else f" {text(wild_card)}"
    if meld.kind == RUN:
        raise MeldError(f"no wild{which} in meld {meld.id} stands for {text(card)} (RULES 4.4)")
    raise MeldError(f"meld {meld.id} has no wild{which} to swap (RULES 4.4)")


def opening_value(meld: TableMeld, rules: RuleSet) -> int:
    """Points of a meld for the opening requirement (RULES 5.1): wilds count as what they stand for.

    >>> from arena.rules.cards import parse
    >>> from arena.rules.options import resolve
    >>> basic = resolve("basic")
    >>> opening_value(form_meld([parse(c) for c in ("KS", "KH", "KD")], basic), basic)
    30
    >>> opening_value(form_meld([parse(c) for c in ("7H", "8H", "9H")], basic), basic)
    24
    """
    is_set = meld.kind == SET
    key = (is_set, meld.rank if is_set else meld.low, len(meld.cards))
    memo = _OPENING.of(rules)
    value = memo.get(key)
    if value is None:
        value = memo[key] = _opening_value(is_set, key[1], key[2], rules)
    return value


# opening values by (is a set, its rank or the run's first position, length)
_OPENING: Final[PerRules[tuple[bool, int, int], int]] = PerRules()


def _opening_value(is_set: bool, at: int, n: int, rules: RuleSet) -> int:
    table = rules.opening_values
    high = rules.ace_is_high
    if is_set:
        return table.rank_value(at, high) * n
    total = 0
    for i in range(n):
        total += table.rank_value(position_rank(at + i), high, lowest_of_run=(i == 0))
    return total


def hand_value(hand: list[Card], rules: RuleSet) -> int:
    """Sum of card values left in a hand, a wild at its own value (RULES 7).

    >>> from arena.rules.cards import parse
    >>> from arena.rules.options import resolve
    >>> hand_value([parse("KS"), parse("2H")], resolve("basic"))
    12
    """
    table = rules.values
    high = rules.ace_is_high
    return sum(table.card(c, high) for c in hand)
