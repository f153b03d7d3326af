"""Finding melds in a hand, and a legal way to finish a turn.

Used by the engine where a rule depends on whether something is possible
(taking the discard needs a legal finish, RULES 3.1; the referee's default
move) and by the built-in policies.  The searches are bounded; every play
they return has been checked with ``simulate_play``.
"""

from __future__ import annotations

from itertools import combinations

from arena.cards import JOKER, Card, make, rank_of, suit_of
from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap, TableAction
from arena.rules.melds import RUN, MeldError, TableMeld, form_meld, is_wild_card, lay_off, opening_value, position_rank, swap_wild
from arena.rules.options import RuleSet
from arena.rules.turn import TurnOutcome, TurnView, simulate_play

MAX_NODES = 400
MAX_TABLE_NODES = 2000


def _wild_allowance(naturals: int, rules: RuleSet) -> int:
    cap = naturals if rules.wilds_at_most_naturals else 99
    if rules.max_wilds_per_meld:
        cap = min(cap, rules.max_wilds_per_meld)
    return cap


def candidate_melds(hand: list[Card], rules: RuleSet) -> list[tuple[Card, ...]]:
    """Sets and runs (each as long as it goes) that can be made from ``hand``."""
    wilds = [c for c in hand if c == JOKER]
    naturals = [c for c in hand if c != JOKER]
    if rules.wild_rank is not None:
        wilds += [c for c in hand if c != JOKER and is_wild_card(c, rules)]
    out: list[tuple[Card, ...]] = []
    by_rank: dict[int, list[Card]] = {}
    by_suit: dict[int, set[int]] = {}
    for c in naturals:
        by_rank.setdefault(rank_of(c), []).append(c)
        by_suit.setdefault(suit_of(c), set()).add(rank_of(c))
    for rank, cards in by_rank.items():
        if rules.set_distinct_suits:
            cards = list({suit_of(c): c for c in cards}.values())
        cards = cards[: rules.set_max]
        if len(cards) >= 3:
            out.append(tuple(cards))
        elif wilds and len(cards) + min(len(wilds), _wild_allowance(len(cards), rules)) >= 3:
            out.append(tuple(cards) + tuple(wilds[: 3 - len(cards)]))
    top = 14 if rules.ace == "high_or_low" else 13
    for suit, ranks in by_suit.items():
        wrap = rules.ace == "wrap"

        def has(p: int) -> bool:
            return (wrap or 1 <= p <= top) and position_rank(p) in ranks

        if wrap:
            starts = [p for p in range(1, 14) if has(p) and not has(p - 1)] or [1]
        else:
            starts = [p for p in range(1, top + 1) if has(p) and not has(p - 1)]
        for start in starts:
            last = start + 12 if wrap else top
            seq: list[Card] = []
            used = 0
            nat = 0
            prev_wild = False
            p = start
            while p <= last:
                if has(p):
                    seq.append(make(position_rank(p), suit))
                    nat += 1
                    prev_wild = False
                elif (
                    used < len(wilds) and has(p + 1) and p + 1 <= last
                    and (rules.wilds_adjacent or not prev_wild)
                    and used + 1 <= _wild_allowance(nat + 1, rules)
                ):
                    seq.append(wilds[used])
                    used += 1
                    prev_wild = True
                else:
                    break
                p += 1
            if len(seq) == 2 and used < len(wilds) and used + 1 <= _wild_allowance(nat, rules):
                if p <= last:
                    seq.append(wilds[used])
                elif wrap or start > 1:
                    seq.insert(0, wilds[used])
            if len(seq) >= 3:
                out.append(tuple(seq))
    valid = []
    for cards in out:
        try:
            form_meld(list(cards), rules)
        except MeldError:
            continue
        valid.append(cards)
    return valid


def _remove_all(hand: list[Card], cards: tuple[Card, ...]) -> list[Card] | None:
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


def _try(rules: RuleSet, view: TurnView, play: Play) -> TurnOutcome | None:
    try:
        return simulate_play(rules, view, play)
    except IllegalAction:
        return None


def _discards(view: TurnView, rest: list[Card]) -> list[Card | None]:
    options: list[Card | None] = sorted(set(rest), reverse=True)
    if view.took_discard:
        options = [c for c in options if c != view.drawn]
    return options + [None]


def finishing_play(rules: RuleSet, view: TurnView) -> Play | None:
    """Some legal play for ``view``, or None if the bounded search finds none."""
    for c in _discards(view, view.hand):
        if c is not None and (p := Play((), c)) and _try(rules, view, p):
            return p
    cands = sorted(candidate_melds(view.hand, rules), key=lambda m: -meld_value(m, rules))
    limit = rules.melds_per_turn if rules.melds_per_turn and view.deal not in rules.meld_all_at_once_deals else len(cands)
    nodes = 0
    for k in range(1, min(limit, len(cands)) + 1):
        for combo in combinations(cands, k):
            nodes += 1
            if nodes > MAX_NODES:
                break
            rest = list(view.hand)
            ok = True
            for m in combo:
                r = _remove_all(rest, m)
                if r is None:
                    ok = False
                    break
                rest = r
            if not ok:
                continue
            actions: list[TableAction] = [Meld(m) for m in combo]
            for c in _discards(view, rest):
                p = Play(tuple(actions), c)
                if _try(rules, view, p):
                    return p
        if nodes > MAX_NODES:
            break
    if len(set(view.hand)) == 1:
        return _table_finish(rules, view)
    return None


def _table_finish(rules: RuleSet, view: TurnView) -> Play | None:
    """A depth-first search over lay-offs, swaps and new melds, one card at a time.

    This is what decides whether taking the discard leaves a legal finish when
    every card in the hand equals it (RULES 3.1): such a hand can only be played
    out through the table (each copy onto a different meld, or swapped for a
    wild that can then be discarded); any other hand has a plain discard unless
    it must open (``candidate_melds`` combinations above).  Bounded by
    ``MAX_TABLE_NODES``.
    """
    seen: set[tuple[tuple[Card, ...], tuple[tuple[Card, ...], ...]]] = set()
    stack: list[tuple[tuple[TableAction, ...], list[Card], list[TableMeld]]] = [((), list(view.hand), list(view.melds))]
    nodes = 0
    while stack:
        actions, hand, melds = stack.pop()
        nodes += 1
        if nodes > MAX_TABLE_NODES:
            return None
        if actions:
            for d in _discards(view, hand) if hand else [None]:
                p = Play(actions, d)
                if _try(rules, view, p):
                    return p
        key = (tuple(sorted(hand)), tuple(tuple(m.cards) for m in melds))
        if key in seen or not hand:
            continue
        seen.add(key)
        nexts: list[tuple[TableAction, list[Card], list[TableMeld]]] = []
        for x in sorted(set(hand)):
            rest = list(hand)
            rest.remove(x)
            for m in melds:
                ends: tuple[str | None, ...] = (None, "low") if m.kind == RUN and is_wild_card(x, rules) else (None,)
                for end in ends:
                    trial = m.copy()
                    try:
                        lay_off(trial, x, rules, end=end)
                    except MeldError:
                        continue
                    nexts.append((LayOff(m.id, (x,), end=end), rest, _replace(melds, trial)))
                if x == JOKER:
                    continue
                for w in sorted({c for c, f in zip(m.cards, m.wild) if f}):
                    trial = m.copy()
                    try:
                        got = swap_wild(trial, x, rules, w)
                    except MeldError:
                        continue
                    nexts.append((Swap(m.id, x, w), rest + [got], _replace(melds, trial)))
        for cm in candidate_melds(hand, rules):
            rest2 = _remove_all(hand, cm)
            if rest2 is None:
                continue
            try:
                shape = form_meld(list(cm), rules)
            except MeldError:
                continue
            shape.id, shape.owner = len(melds), view.seat
            nexts.append((Meld(cm), rest2, melds + [shape]))
        for act, rest, ms in reversed(nexts):
            stack.append(((*actions, act), rest, ms))
    return None


def _replace(melds: list[TableMeld], changed: TableMeld) -> list[TableMeld]:
    out = list(melds)
    out[changed.id] = changed
    return out
