"""Test oracles: plain, slow definitions that the engine's fast code is checked against.

None of this is used by ``arena``; each function is the obvious reading of what
some faster engine or policy code computes.
"""

from __future__ import annotations

from arena.rules.cards import JOKER, Card, rank_of, suit_of
from arena.rules.melds import is_wild_card
from arena.rules.options import RuleSet
from arena.rules.suits import SuitMap


def in_partial(c: Card, hand: list[Card], rules: RuleSet) -> bool:
    """Whether ``c`` has a partner for a set or run in ``hand`` (two of a rank, or near in suit)."""
    if is_wild_card(c, rules):
        return True
    r, s = rank_of(c), suit_of(c)
    seen_self = False
    for o in hand:
        if o == c and not seen_self:
            seen_self = True
            continue
        if o == JOKER:
            continue
        ro = rank_of(o)
        if ro == r and (suit_of(o) != s or not rules.set_distinct_suits):
            return True
        if suit_of(o) == s and 0 < abs(ro - r) <= 2:
            return True
    return False


def inverse(suit_map: SuitMap) -> SuitMap:
    """The suit map that undoes ``suit_map``."""
    out = [0, 0, 0, 0]
    for s, image in enumerate(suit_map):
        out[image] = s
    return (out[0], out[1], out[2], out[3])


def compose(first: SuitMap, then: SuitMap) -> SuitMap:
    """Relabel by ``first``, then by ``then``, as one suit map."""
    return (then[first[0]], then[first[1]], then[first[2]], then[first[3]])
