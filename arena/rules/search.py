"""A legal way to finish a turn, found by a bounded search over the hand's candidate melds.

Used by the engine where a rule depends on whether something is possible
(taking the discard needs a legal finish, RULES 3.1), for the safe move
(``safe_play``: the referee's default move) and by the built-in policies.  The searches are bounded; every play
they return has been checked with ``simulate_play``.  The candidate melds come from ``candidates.py``.
"""

from __future__ import annotations

from itertools import combinations

from arena.rules.actions import IllegalAction, LayOff, Meld, Play, Swap, TableAction
from arena.rules.candidates import candidate_melds, candidate_shapes, meld_value, remove_all, shaped
from arena.rules.cards import JOKER, Card
from arena.rules.melds import RUN, MeldError, TableMeld, form_meld, is_wild_card, laid_off, opening_value, swap_wild
from arena.rules.options import RuleSet
from arena.rules.turn import TurnOutcome, TurnView, simulate_play

MAX_NODES = 400
MAX_TABLE_NODES = 2000


def _try(rules: RuleSet, view: TurnView, play: Play) -> TurnOutcome | None:
    try:
        return simulate_play(rules, view, play)
    except IllegalAction:
        return None


def _discards(view: TurnView, rest: list[Card]) -> list[Card | None]:
    options = sorted(set(rest), reverse=True)
    if view.took_discard:
        options = [c for c in options if c != view.drawn]
    return [*options, None]


def safe_play(rules: RuleSet, view: TurnView) -> Play:
    """The safe move: discard the drawn card where legal, else another legal discard
    (highest first), else a legal finish; IllegalAction if the search finds none.

    The referee's ``default`` move (docs/ARCHITECTURE.md section 4) and the policies' last resort.
    """
    order = [view.drawn] if view.drawn is not None and not view.took_discard else []
    for c in order + _discards(view, view.hand)[:-1]:
        p = Play((), c)
        if _try(rules, view, p):
            return p
    found = finishing_play(rules, view)
    if found is None:  # a checked draw leaves a finish (RULES 3.1)
        raise IllegalAction("no legal play found")
    return found


def finishing_play(rules: RuleSet, view: TurnView) -> Play | None:
    """Some legal play for ``view``, or None if the bounded search finds none."""
    if view.took_discard and not view.opened and rules.take_discard_before_opening == "only_to_open":
        return _opening_with_taken_card(rules, view)  # nothing else can be legal (RULES 3.1)
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
                r = remove_all(rest, m)
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


def _sub_melds(hand: list[Card], rules: RuleSet) -> list[tuple[tuple[Card, ...], TableMeld]]:
    """The candidate melds and every smaller meld inside them (shorter runs, smaller sets)."""
    out: list[tuple[tuple[Card, ...], TableMeld]] = []
    seen: set[tuple[Card, ...]] = set()
    for cards, shape in candidate_shapes(hand, rules):
        n = len(cards)
        if shape.kind == RUN:
            pieces = [cards[i:j] for i in range(n) for j in range(i + 3, n + 1)]
        else:
            pieces = [p for k in range(3, n + 1) for p in combinations(cards, k)]
        for piece in pieces:
            if piece in seen:
                continue
            seen.add(piece)
            if (m := shaped(piece, rules)) is not None:
                out.append(m)
    return out


def _opening_with_taken_card(rules: RuleSet, view: TurnView) -> Play | None:
    """An opening whose first meld holds the card just taken from the discard pile.

    Under ``take_discard_before_opening = "only_to_open"`` taking the discard is
    legal only if such an opening exists (RULES 3.1); this searches sets of
    disjoint melds (including shorter runs and smaller sets than the longest
    ones) that reach the requirement.  Bounded by ``MAX_TABLE_NODES``.
    """
    subs = [(cards, opening_value(shape, rules)) for cards, shape in _sub_melds(view.hand, rules)]
    subs.sort(key=lambda x: -x[1])
    firsts = [x for x in subs if view.drawn in x[0]]
    limit = rules.melds_per_turn if rules.melds_per_turn and view.deal not in rules.meld_all_at_once_deals else 99
    nodes = 0

    def extend(chosen: list[tuple[Card, ...]], rest: list[Card], total: int, start: int) -> Play | None:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_TABLE_NODES:
            return None
        if total >= view.requirement:
            actions = tuple(Meld(m) for m in chosen)
            for d in _discards(view, rest):
                p = Play(actions, d)
                if _try(rules, view, p):
                    return p
            return None
        if len(chosen) >= limit:
            return None
        for k in range(start, len(subs)):
            cards, value = subs[k]
            left = remove_all(rest, cards)
            if left is None:
                continue
            found = extend(chosen + [cards], left, total + value, k + 1)
            if found is not None or nodes > MAX_TABLE_NODES:
                return found
        return None

    for cards, value in firsts:
        left = remove_all(view.hand, cards)
        if left is None:
            continue
        found = extend([cards], left, value, 0)
        if found is not None or nodes > MAX_TABLE_NODES:
            return found
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
                    if isinstance(laid_off(trial, x, rules, end=end), str):
                        continue  # it does not fit (returned, not raised: most do not)
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
            rest2 = remove_all(hand, cm)
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
