"""The melds a hand can make: every candidate meld and its shape on the table, found within bounds.

Sets, runs (with the wrap and the ace as the rules have them), wild cards and jokers within
the rules' limits; answers are memoised per rule set (``memo.PerRules``).  ``search.py``
finishes turns from them, and the built-in policies plan with them.
"""

from __future__ import annotations

from typing import Final

from arena.rules.cards import JOKER, Card, make, suit_of
from arena.rules.melds import (
    RUN,
    SET,
    MeldError,
    TableMeld,
    check_wild_limits,
    form_meld,
    is_wild_card,
    opening_value,
    position_rank,
)
from arena.rules.memo import PerRules
from arena.rules.options import RuleSet

_RANK_RANGE: Final = range(1, 14)  # Final: compiled, a static (cards.py)
_WRAP_RANKS: Final = tuple(position_rank(p) for p in range(28))  # rank at each run position under wrap


def _wild_allowance(naturals: int, rules: RuleSet) -> int:
    cap = naturals if rules.wilds_at_most_naturals else 99
    if rules.max_wilds_per_meld:
        cap = min(cap, rules.max_wilds_per_meld)
    return cap


def shaped(cards: tuple[Card, ...], rules: RuleSet) -> tuple[tuple[Card, ...], TableMeld] | None:
    """Cards with their meld shape, or None if they form no valid meld.

    Natural sets and runs are valid by construction; only those with wilds are checked.
    """
    if not any(is_wild_card(c, rules) for c in cards):
        return cards, natural_shape(cards)
    try:
        return cards, form_meld(list(cards), rules)
    except MeldError:
        return None


def candidate_melds(hand: list[Card], rules: RuleSet) -> list[tuple[Card, ...]]:
    """Sets and runs (each as long as it goes) that can be made from ``hand``."""
    if rules.wild_rank is None:  # straight from the memo, without building the shapes
        return [found[0] for found in _joker_candidates(hand, rules)]
    return [cards for cards, _shape in candidate_shapes(hand, rules)]


def natural_shape(cards: tuple[Card, ...]) -> TableMeld:
    """The meld ``form_meld`` makes of a valid set or run of natural cards, built directly."""
    first = cards[0]
    if all(c >> 2 == first >> 2 for c in cards):  # rank_of
        return TableMeld(-1, -1, SET, list(cards), [False] * len(cards), rank=first >> 2)
    return TableMeld(-1, -1, RUN, list(cards), [False] * len(cards), suit=first & 3, low=first >> 2)


class _Pools:
    """A hand sorted for the search: its wilds, and its natural cards by rank and by suit.

    Each card is in one pool: jokers and cards of the wild rank are wilds (so that no
    candidate uses one card twice); the wild rank's own natural set is found apart.
    """

    __slots__ = ("by_rank", "by_suit", "wilds")

    def __init__(self, hand: list[Card], wild_rank: int | None) -> None:
        self.wilds: list[Card] = []
        self.by_rank: dict[int, list[Card]] = {}  # in the order first seen, as is every dict here
        self.by_suit: dict[int, int] = {}  # suit -> bit mask of the ranks held (bit r for rank r)
        by_rank, by_suit = self.by_rank, self.by_suit
        for c in hand:
            r = c >> 2  # rank_of
            if c == JOKER or r == wild_rank:
                self.wilds.append(c)
                continue
            if r in by_rank:
                by_rank[r].append(c)
            else:
                by_rank[r] = [c]
            s = c & 3  # suit_of
            by_suit[s] = by_suit.get(s, 0) | 1 << r


def candidate_shapes(hand: list[Card], rules: RuleSet) -> list[tuple[tuple[Card, ...], TableMeld]]:
    """``candidate_melds`` with the meld each one forms (as ``form_meld`` gives it)."""
    if rules.wild_rank is None:
        return [(cards, TableMeld(-1, -1, kind, list(cards), list(wild), rank, suit, low))
                for cards, kind, wild, rank, suit, low in _joker_candidates(hand, rules)]
    pools = _Pools(hand, rules.wild_rank)
    out = _wild_rank_set(pools, rules) + _sets(pools, rules) + _runs(pools, rules)
    return [m for cards, kind, where in out if (m := _shape_of(cards, kind, where, rules)) is not None]


# A checked candidate as the memo keeps it: cards, kind, wild flags, rank, suit, low (TableMeld's fields).
_Shape = tuple[tuple[Card, ...], str, tuple[bool, ...], int, int, int]
# Without a wild rank the only wilds are jokers, all equal, so the candidates of one rank depend only
# on its cards (in hand order) and the number of jokers, and those of one suit only on its ranks and
# that number: worked out once per rule set, as the ranks and suits of hands recur.
_RANK_SHAPES: Final[PerRules[tuple[tuple[Card, ...], int], tuple[_Shape, ...]]] = PerRules()
_SUIT_SHAPES: Final[PerRules[int, tuple[_Shape, ...]]] = PerRules()  # key: suit | ranks << 2 | jokers << 17


def _frozen(found: list[_Candidate], rules: RuleSet) -> tuple[_Shape, ...]:
    out: list[_Shape] = []
    for cards, kind, where in found:
        shaped = _shape_of(cards, kind, where, rules)
        if shaped is not None:
            m = shaped[1]
            out.append((cards, m.kind, tuple(m.wild), m.rank, m.suit, m.low))
    return tuple(out)


# the last hands asked about (a hand is asked about again within a turn: the policy, the env's candidates)
_HAND_SHAPES: Final[PerRules[tuple[Card, ...], tuple[_Shape, ...]]] = PerRules(limit=256)


def _joker_candidates(hand: list[Card], rules: RuleSet) -> tuple[_Shape, ...]:
    """``candidate_shapes`` where jokers are the only wilds, from the memo (same melds, same order)."""
    hands = _HAND_SHAPES.of(rules)
    key = tuple(hand)
    found = hands.get(key)
    if found is None:
        found = hands[key] = _joker_search(hand, rules)
    return found


def _joker_search(hand: list[Card], rules: RuleSet) -> tuple[_Shape, ...]:
    masks = [0, 0, 0, 0]  # suit -> bit mask of the ranks held
    once = twice = thrice = 0  # bit masks of the ranks held at least once, twice, three times
    jokers = 0
    for c in hand:
        if not c:  # JOKER
            jokers += 1
            continue
        bit = 1 << (c >> 2)  # rank_of
        masks[c & 3] |= bit  # suit_of
        thrice |= twice & bit
        twice |= once & bit
        once |= bit
    out: list[_Shape] = []
    # Only ranks and suits with enough naturals for _set_of and _runs_of are looked up (the others
    # give nothing), in the order the hand first shows them, as in _Pools.
    set_ranks = thrice
    if jokers:
        wilds = [JOKER] * jokers
        if 2 + min(jokers, _wild_allowance(2, rules)) >= 3:
            set_ranks |= twice
        if 1 + min(jokers, _wild_allowance(1, rules)) >= 3:
            set_ranks |= once
    else:
        wilds = []
    if set_ranks:
        by_rank: dict[int, list[Card]] = {}
        for c in hand:
            r = c >> 2
            if c and set_ranks >> r & 1:
                same = by_rank.get(r)
                if same is None:
                    by_rank[r] = [c]
                else:
                    same.append(c)
        rank_memo = _RANK_SHAPES.of(rules)
        for rank, cards in by_rank.items():
            key = (tuple(cards), jokers)
            found = rank_memo.get(key)
            if found is None:
                one = _set_of(rank, cards, wilds, rules)
                found = rank_memo[key] = _frozen([one] if one is not None else [], rules)
            out += found
    run_from = 2 if jokers else 3
    suits = [s for s in range(4) if masks[s].bit_count() >= run_from]
    if len(suits) > 1:
        first: dict[int, None] = {}
        for c in hand:
            if c and masks[c & 3].bit_count() >= run_from:
                first[c & 3] = None
        suits = list(first)
    if suits:
        suit_memo = _SUIT_SHAPES.of(rules)
        for suit in suits:
            ranks = masks[suit]
            skey = suit | ranks << 2 | jokers << 17
            found = suit_memo.get(skey)
            if found is None:
                found = suit_memo[skey] = _frozen(_runs_of(suit, ranks, wilds, rules), rules)
            out += found
    return tuple(out)


# A candidate before its shape is checked: its cards, SET or RUN, and the rank of a set
# or (suit, position of the first card) of a run.
_Candidate = tuple[tuple[Card, ...], str, tuple[int, int]]


def _wild_rank_set(pools: _Pools, rules: RuleSet) -> list[_Candidate]:
    """The natural set of the wild rank itself (its cards are in the wild pool)."""
    if rules.wild_rank is None:
        return []
    own = [c for c in pools.wilds if c != JOKER]
    if rules.set_distinct_suits:
        own = list({suit_of(c): c for c in own}.values())
    return [(tuple(own[: rules.set_max]), SET, (rules.wild_rank, 0))] if len(own) >= 3 else []


def _sets(pools: _Pools, rules: RuleSet) -> list[_Candidate]:
    """For each rank: its naturals (one per suit where suits must differ), or two of them and wilds (RULES 4.1)."""
    out: list[_Candidate] = []
    for rank, cards in pools.by_rank.items():
        found = _set_of(rank, cards, pools.wilds, rules)
        if found is not None:
            out.append(found)
    return out


def _set_of(rank: int, cards: list[Card], wilds: list[Card], rules: RuleSet) -> _Candidate | None:
    """The set candidate of one rank (``cards``: the hand's naturals of it, in hand order), if any."""
    if len(cards) < 3 and (not wilds or len(cards) + min(len(wilds), _wild_allowance(len(cards), rules)) < 3):
        return None  # too few even before repeated suits are dropped
    if rules.set_distinct_suits:
        cards = list({suit_of(c): c for c in cards}.values())
    cards = cards[: rules.set_max]
    if len(cards) >= 3:
        return tuple(cards), SET, (rank, 0)
    if wilds and len(cards) + min(len(wilds), _wild_allowance(len(cards), rules)) >= 3:
        return tuple(cards) + tuple(wilds[: 3 - len(cards)]), SET, (rank, 0)
    return None


def _runs(pools: _Pools, rules: RuleSet) -> list[_Candidate]:
    """For each suit and each stretch start: the longest run from there, wilds filling gaps of one (RULES 4.2)."""
    out: list[_Candidate] = []
    for suit, ranks in pools.by_suit.items():
        out += _runs_of(suit, ranks, pools.wilds, rules)
    return out


def _runs_of(suit: int, ranks: int, wilds: list[Card], rules: RuleSet) -> list[_Candidate]:
    """The run candidates of one suit (``ranks``: bit mask of the ranks held), lowest first."""
    top = 14 if rules.ace == "high_or_low" else 13
    wrap = rules.ace == "wrap"
    out: list[_Candidate] = []
    if not wilds and not wrap:
        return _natural_runs(suit, ranks, top)
    # present[p]: the hand has the card at run position p (positions past 13 go round
    # under wrap; under high_or_low position 14 is the ace above the king)
    if wrap:
        present = [bool(ranks >> r & 1) for r in _WRAP_RANKS]
        starts = [p for p in range(1, 14) if present[p] and not present[p - 1]] or [1]
    else:
        present = [False] + [bool(ranks >> r & 1) for r in _RANK_RANGE] + [top == 14 and bool(ranks & 2), False, False]
        starts = [p for p in range(1, top + 1) if present[p] and not present[p - 1]]
    for start in starts:
        last = start + 12 if wrap else min(top, start + 12)  # 13 ranks at most: each card once
        if not (present[start + 1] or present[start + 2]):
            continue  # a lone card: no wild fills two gaps in a row, nor one gap and an end
        if wilds:
            found = _run_with_wilds(suit, start, last, present, wilds, wrap, rules)
        else:
            found = _natural_run(suit, start, last, present)
        if found is not None:
            out.append(found)
    return out


def _natural_runs(suit: int, ranks: int, top: int) -> list[_Candidate]:
    """Every natural stretch of three or more in one suit (``ranks``: bit mask), lowest first.

    Bit p of the mask is run position p; under high_or_low bit 14 is the ace above the king.
    """
    mask = ranks | (ranks & 2) << 13 if top == 14 else ranks
    starts = mask & ~(mask << 1) & (mask >> 1) & (mask >> 2)  # p held, p-1 not, p+1 and p+2 held
    out: list[_Candidate] = []
    while starts:
        bit = starts & -starts
        starts ^= bit
        start = bit.bit_length() - 1
        last = min(top, start + 12)  # 13 ranks at most: each card once
        p = start
        while p <= last and mask >> p & 1:
            p += 1
        out.append((tuple(make(position_rank(q), suit) for q in range(start, p)), RUN, (suit, start)))
    return out


def _natural_run(suit: int, start: int, last: int, present: list[bool]) -> _Candidate | None:
    """The natural stretch from ``start``, if it is long enough."""
    p = start
    while p <= last and present[p]:
        p += 1
    if p - start < 3:
        return None
    return tuple(make(position_rank(q), suit) for q in range(start, p)), RUN, (suit, start)


def _run_with_wilds(suit: int, start: int, last: int, present: list[bool], wilds: list[Card], wrap: bool,
                    rules: RuleSet) -> _Candidate | None:
    """The stretch from ``start`` with a wild in each gap of one card, and one more at an end if short."""
    n_wilds = len(wilds)
    seq: list[Card] = []
    used = nat = 0
    prev_wild = False
    p = start
    while p <= last:
        if present[p]:
            seq.append(make(position_rank(p), suit))
            nat += 1
            prev_wild = False
        elif (
            used < n_wilds and p + 1 <= last and present[p + 1]
            and (rules.wilds_adjacent or not prev_wild)
            and used + 1 <= _wild_allowance(nat + 1, rules)
        ):
            seq.append(wilds[used])
            used += 1
            prev_wild = True
        else:
            break
        p += 1
    low = start
    if len(seq) == 2 and used < n_wilds and used + 1 <= _wild_allowance(nat, rules):
        if p <= last:
            seq.append(wilds[used])
        elif wrap or start > 1:
            seq.insert(0, wilds[used])
            low = start - 1
    if len(seq) < 3:
        return None
    return tuple(seq), RUN, (suit, position_rank(low) if wrap else low)


def _shape_of(cards: tuple[Card, ...], kind: str, where: tuple[int, int],
              rules: RuleSet) -> tuple[tuple[Card, ...], TableMeld] | None:
    """A candidate with the meld ``form_meld`` makes of it, or None if it is no valid meld.

    Natural candidates are valid by construction.  With jokers as the only wilds the
    geometry is the one the candidate was built with, so only the wild limits are
    checked (RULES 4.3); a card of the wild rank may be natural or wild, which
    ``form_meld`` decides.
    """
    wild = [c == JOKER for c in cards]
    wild_rank = rules.wild_rank
    if wild_rank is not None and any(c >> 2 == wild_rank and c != JOKER for c in cards):
        return shaped(cards, rules)
    if True in wild:
        try:
            check_wild_limits(kind, list(cards), wild, rules)
        except MeldError:
            return None
    if kind == SET:
        return cards, TableMeld(-1, -1, SET, list(cards), wild, rank=where[0])
    return cards, TableMeld(-1, -1, RUN, list(cards), wild, suit=where[0], low=where[1])


def remove_all(hand: list[Card], cards: tuple[Card, ...]) -> list[Card] | None:
    rest = list(hand)
    for c in cards:
        try:
            rest.remove(c)
        except ValueError:
            return None
    return rest


def meld_value(cards: tuple[Card, ...], rules: RuleSet) -> int:
    try:
        return opening_value(form_meld(list(cards), rules), rules)
    except MeldError:
        return 0
