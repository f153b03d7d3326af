"""Built-in policies: ``random``, ``greedy`` and ``greedy-eps10`` (greedy with 10% random decisions).

They decide from an ``Observation`` alone (what a bot behind the protocol
gets), so the sample bots are these policies behind the client library, and
``arena simulate`` runs them in-process.  Every play is checked with the
engine's ``simulate_play`` before it is returned; if a plan turns out illegal
the policy falls back to simpler plays, down to the engine's safe move
(``search.safe_play``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final, Protocol

from arena.rules.actions import DISCARD, STOCK, LayOff, Meld, Play, Swap, TableAction
from arena.rules.candidates import candidate_melds, candidate_shapes
from arena.rules.cards import JOKER, Card
from arena.rules.melds import TableMeld, is_wild_card, laid_off, opening_value
from arena.rules.observation import Observation
from arena.rules.options import RuleSet
from arena.rules.search import safe_play
from arena.rules.turn import TurnView, refusal


class Policy(Protocol):
    def draw(self, obs: Observation) -> str: ...

    def play(self, obs: Observation) -> Play: ...


def _discardable(view: TurnView, cards: list[Card]) -> list[Card]:
    return [c for c in cards if not (view.took_discard and c == view.drawn)]


def _restored(cls: Callable[[RuleSet], object], rules: RuleSet, state: dict[str, object]) -> object:
    """A policy copied or unpickled: made anew, then given its state (compiled, it has no other way)."""
    policy = cls(rules)
    for name, value in state.items():
        setattr(policy, name, value)
    return policy


class RandomPolicy:
    """Uniform over a sensible set of legal moves: each legal plain discard, and each
    single meld the hand allows followed by a random discard."""

    def __init__(self, rules: RuleSet, seed: int = 0) -> None:
        self.rules = rules
        self.rng = random.Random(seed)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return _restored, (RandomPolicy, self.rules, {"rng": self.rng})

    def draw(self, obs: Observation) -> str:
        return self.rng.choice(obs.legal_draws) if obs.legal_draws else STOCK

    def play(self, obs: Observation) -> Play:
        view = obs.turn_view()
        options: list[Play] = [Play((), c) for c in sorted(set(_discardable(view, view.hand)))]
        for m in candidate_melds(view.hand, self.rules):
            rest = list(view.hand)
            for c in m:
                rest.remove(c)
            ds = _discardable(view, rest)
            options.append(Play((Meld(m),), self.rng.choice(ds) if ds else None))
        self.rng.shuffle(options)
        for p in options:
            if refusal(self.rules, view, p) is None:
                return p
        return safe_play(self.rules, view)


def _partnered(hand: list[Card], rules: RuleSet) -> int:
    """Bit c set for every card c of ``hand`` that has a partner for a set or run in ``hand`` (another
    card of its rank, or of its suit one or two ranks away); a wild always has one."""
    held = twice = 0  # bit c: card c is in the hand (jokers left out); card c is in it twice
    for c in hand:
        if c != JOKER:
            bit = 1 << c
            twice |= held & bit
            held |= bit
    # Card ids are rank * 4 + suit: the other suits of a rank are the other bits of its nibble
    # (each nibble turned by one, two and three places), the same suit a rank away is 4 bits away.
    turned = (held >> 1 & _NIBBLE_LOW3) | (held << 3 & _NIBBLE_TOP)
    turned |= (held >> 2 & _NIBBLE_LOW2) | (held << 2 & _NIBBLE_TOP2)
    turned |= (held >> 3 & _NIBBLE_BOTTOM) | (held << 1 & _NIBBLE_TOP3)
    out = turned | held << 4 | held >> 4 | held << 8 | held >> 8 | _WILD_BITS[rules.wild_rank or 0]
    if not rules.set_distinct_suits:
        out |= twice  # an equal card is a partner where suits may repeat in a set
    return out & (held | 1)  # and the joker (card 0, never in held), always a wild


# Final: compiled, statics (a plain global is a dict look-up at each use)
_NIBBLES: Final = sum(1 << 4 * r for r in range(15))
_NIBBLE_BOTTOM: Final = _NIBBLES  # bit 0 of each nibble
_NIBBLE_TOP: Final = _NIBBLES << 3  # bit 3
_NIBBLE_LOW2: Final = _NIBBLES * 3  # bits 0-1
_NIBBLE_LOW3: Final = _NIBBLES * 7  # bits 0-2
_NIBBLE_TOP2: Final = _NIBBLES * 12  # bits 2-3
_NIBBLE_TOP3: Final = _NIBBLES * 14  # bits 1-3
# the cards that are wilds, by wild rank (0: none but the joker)
_WILD_BITS: Final = [1] + [1 | 15 << 4 * r for r in range(1, 14)]


def _worst_first(cards: list[Card], partnered: int, values: list[int]) -> list[Card]:
    """``cards``, those in no partial meld (``partnered``: ``_partnered``'s mask) first, then the highest
    valued.  A function of its own: compiled, a closure inside ``_finish`` would keep that function's
    variables in a cell object at every call, where this order is wanted only when a discard is refused."""
    return sorted(cards, key=lambda c: (partnered >> c & 1, -values[c]))


def _taken(cards: list[Card], meld: tuple[Card, ...]) -> bool:
    """Take ``meld``'s cards out of ``cards``; False (and ``cards`` partly taken) if one is not there.
    Asked first, not by ``remove``'s ValueError: overlapping candidates are common, and compiled,
    an exception costs more than the second look."""
    for c in meld:
        if c not in cards:
            return False
        cards.remove(c)
    return True


def _partials(hand: list[Card], rules: RuleSet) -> dict[Card, bool]:
    """``_partnered`` as a dict from each card of ``hand``."""
    mask = _partnered(hand, rules)
    return {c: bool(mask >> c & 1) for c in hand}


def _accepting(meld: TableMeld) -> tuple[Card, ...]:
    """The natural cards that might be laid off on ``meld``: its rank, or the cards just past its ends."""
    if meld.kind == "set":
        r = meld.rank * 4
        return r, r + 1, r + 2, r + 3
    below = (meld.low - 2) % 13 + 1  # position_rank(low - 1)
    above = (meld.low + len(meld.cards) - 1) % 13 + 1  # position_rank(low + n)
    return below * 4 + meld.suit, above * 4 + meld.suit


class GreedyPolicy:
    """Opens and melds as soon as it can, lays off, swaps wilds when useful, and
    discards its highest-value card that is in no partial meld."""

    def __init__(self, rules: RuleSet, seed: int = 0) -> None:
        self.rules = rules
        high = rules.ace_is_high
        self._values = [rules.values.card(c, high) if c == JOKER or c >= 4 else 0 for c in range(56)]
        # lay-off order: naturals before jokers, higher values first (sort key by card)
        self._layoff_order = [(c == JOKER, -v) for c, v in enumerate(self._values)]

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return GreedyPolicy, (self.rules,)  # no state beyond its rules

    # -- draw -------------------------------------------------------------
    def draw(self, obs: Observation) -> str:
        if DISCARD not in obs.legal_draws or not obs.discard:
            return STOCK
        top = obs.discard[-1]
        if not obs.opened[obs.seat] and self.rules.take_discard_before_opening == "only_to_open":
            return DISCARD  # legal only when an opening with it exists
        if is_wild_card(top, self.rules):
            return DISCARD
        if obs.must_go_out_to_meld:
            return STOCK
        hand = obs.hand
        r, s = top >> 2, top & 3  # rank_of, suit_of (as below)
        distinct = self.rules.set_distinct_suits
        same_rank = {c & 3 for c in hand if c != JOKER and c >> 2 == r and (c & 3 != s or not distinct)}
        if len(same_rank) >= 2:
            return DISCARD
        suited = {c >> 2 for c in hand if c != JOKER and c & 3 == s}
        if (r - 1 in suited and r + 1 in suited) or (r - 1 in suited and r - 2 in suited) or (r + 1 in suited and r + 2 in suited):
            return DISCARD
        return STOCK

    # -- play -------------------------------------------------------------
    def play(self, obs: Observation) -> Play:
        rules = self.rules
        view = obs.turn_view()
        plan = self._plan(obs, view)
        for actions in plan:
            p = self._finish(view, actions)
            if p is not None:
                return p
        return safe_play(rules, view)

    def plays(self, obs: Observation, view: TurnView | None = None) -> list[Play]:
        """Every legal play of its plan with its chosen discard, best first (``play`` returns the first,
        or the safe move when this is empty); the candidates of ``arena.env`` start with these.
        ``view``: ``obs.turn_view()``, if the caller has it already."""
        view = view or obs.turn_view()
        out: list[Play] = []
        for actions in self._plan(obs, view):
            p = self._finish(view, actions)
            if p is not None and p not in out:
                out.append(p)
        return out

    def finish(self, obs: Observation, actions: list[TableAction], view: TurnView | None = None) -> Play | None:
        """``actions`` with the discard this policy would choose after them, if that play is legal."""
        return self._finish(view or obs.turn_view(), actions)

    def _plan(self, obs: Observation, view: TurnView) -> list[list[TableAction]]:
        """Candidate action lists, best first (the caller adds the discard and checks)."""
        rules = self.rules
        cands = candidate_shapes(view.hand, rules)
        if not cands and not (view.opened or rules.initial_meld == 0):
            return [[]]
        limit = rules.melds_per_turn if rules.melds_per_turn and not obs.must_go_out_to_meld else 99
        chosen, rest = self._choose_melds(view, cands, limit)
        melds_now = view.opened or bool(chosen)
        actions: list[TableAction] = [Meld(m) for m, _ in chosen]
        table = self._table_after(view, chosen)
        layoffs: list[TableAction] = []
        swaps: list[TableAction] = []
        if (melds_now or rules.initial_meld == 0) and (rules.layoff != "after_own_meld" or any(m.owner == view.seat for m in table)):
            layoffs = self._plan_layoffs(view.seat, table, rest)
            if rules.joker_swap != "none" and (melds_now if rules.joker_swap == "after_opening" or rules.initial_meld != 0 else True):
                swaps = self._plan_swaps(table[: len(view.melds)], rest)
        full = actions + layoffs + swaps
        options = [full, []] if obs.must_go_out_to_meld else [full, actions + layoffs, actions, []]
        seen: list[list[TableAction]] = []
        for o in options:
            if o not in seen:
                seen.append(o)
        return seen

    def _choose_melds(self, view: TurnView, cands: list[tuple[tuple[Card, ...], TableMeld]],
                      limit: int) -> tuple[list[tuple[tuple[Card, ...], TableMeld]], list[Card]]:
        """Disjoint candidate melds, longest (once opened) or most valuable first, up to ``limit``;
        none if they do not reach the opening requirement.  Returns them and the cards left."""
        rules = self.rules
        if len(cands) < 2 and (view.opened or not view.requirement):  # no order to find, no total to reach
            scored = [(m, shape, 0) for m, shape in cands]
        else:
            scored = [(m, shape, opening_value(shape, rules)) for m, shape in cands]
        if view.opened:
            scored.sort(key=lambda x: (-len(x[0]), -x[2]))
        else:
            scored.sort(key=lambda x: -x[2])
        chosen: list[tuple[tuple[Card, ...], TableMeld]] = []
        rest = list(view.hand)
        total = 0
        for m, shape, value in scored:
            if len(chosen) >= limit:
                break
            trial = list(rest)
            if not _taken(trial, m):
                continue  # it shares a card with a meld chosen before
            rest = trial
            chosen.append((m, shape))
            total += value
        if not view.opened and total < view.requirement:
            return [], list(view.hand)
        return chosen, rest

    @staticmethod
    def _table_after(view: TurnView, chosen: list[tuple[tuple[Card, ...], TableMeld]]) -> list[TableMeld]:
        """The table with the chosen melds put down (copies: planned lay-offs replace melds by changed copies)."""
        table = list(view.melds)
        for k, (_m, shape) in enumerate(chosen):
            shape = shape.copy()
            shape.id, shape.owner = len(view.melds) + k, view.seat
            table.append(shape)
        return table

    def _plan_layoffs(self, seat: int, table: list[TableMeld], rest: list[Card]) -> list[TableAction]:
        """Lay off what fits, naturals first and higher values first; ``table`` and ``rest`` follow."""
        rules = self.rules
        own_only = rules.layoff == "own"
        allowed = [i for i, m in enumerate(table) if not own_only or m.owner == seat]
        if not allowed:
            return []
        wild_rank = rules.wild_rank
        wanted = {c for c in rest if c != JOKER and c >> 2 != wild_rank}  # the naturals (is_wild_card)
        # natural card of the hand -> indices of the melds it might extend (a necessary
        # condition; lay_off decides), kept up to date as lay-offs change the melds
        accept: dict[Card, list[int]] = {}
        for i in allowed:
            for k in _accepting(table[i]):
                if k in wanted:
                    if k in accept:
                        accept[k].append(i)
                    else:
                        accept[k] = [i]
        if not accept and all(c in wanted for c in rest):
            return []  # no natural fits a meld and no wild is left to try: the loop below would find nothing
        layoffs: list[TableAction] = []
        for c in sorted(rest, key=self._layoff_order.__getitem__):
            if c not in wanted:
                tries = allowed
            else:
                found = accept.get(c)
                if not found:
                    continue
                tries = sorted(found) if len(found) > 1 else found
            for i in tries:
                target = table[i]
                if c == JOKER and self._wilds_full(target):
                    continue  # lay_off would refuse it (RULES 4.3)
                trial_meld = target.copy()
                if isinstance(laid_off(trial_meld, c, rules), str):
                    continue  # it does not fit
                table[i] = trial_meld
                for k in _accepting(target):
                    if k in wanted:
                        accept[k].remove(i)
                for k in _accepting(trial_meld):
                    if k in wanted:
                        accept.setdefault(k, []).append(i)
                layoffs.append(LayOff(target.id, (c,)))
                rest.remove(c)
                break
        return layoffs

    def _wilds_full(self, meld: TableMeld) -> bool:
        """Whether one more wild would break a wild limit of ``meld`` (RULES 4.3)."""
        rules = self.rules
        wilds = sum(meld.wild)
        if rules.max_wilds_per_meld and wilds >= rules.max_wilds_per_meld:
            return True
        return rules.wilds_at_most_naturals and wilds + 1 > len(meld.wild) - wilds

    def _plan_swaps(self, table: list[TableMeld], rest: list[Card]) -> list[TableAction]:
        """Take back a wild of a run on the table with the natural card it stands for (one per meld)."""
        if self.rules.swapped_wild_must_be_melded:
            return []
        swaps: list[TableAction] = []
        for target in table:
            if target.kind != "run" or True not in target.wild:
                continue
            for i, w in enumerate(target.wild):
                if not w:
                    continue
                want = target.stands_for(i)
                if want in rest:
                    swaps.append(Swap(target.id, want))
                    rest.remove(want)
                    break
        return swaps

    def _finish(self, view: TurnView, actions: list[TableAction]) -> Play | None:
        """Add the best discard to ``actions`` and return the play if legal."""
        rules = self.rules
        rest = list(view.hand)
        try:
            for a in actions:
                if isinstance(a, Swap):
                    rest.remove(a.card)
                    rest.append(JOKER)  # placeholder: the wild comes back to the hand
                else:
                    for c in a.cards:
                        rest.remove(c)
        except ValueError:
            return None
        if actions and len(rest) > 1 and view.deal in rules.meld_all_at_once_deals:
            return None  # table play here only in a turn that goes out (RULES 3.5): no discard can help
        if not rest:
            p = Play(tuple(actions), None)
            return p if refusal(rules, view, p) is None else None
        partnered = _partnered(rest, rules)
        values = self._values
        choices = _discardable(view, [c for c in rest if c != JOKER] or rest)
        if not choices:
            return None
        table_play = tuple(actions)
        first = choices[0]  # the first least by _worst_first's order, as min() finds it (spelt out: no calls)
        first_p, first_v = partnered >> first & 1, values[first]
        for c in choices:
            cp = partnered >> c & 1
            if cp < first_p or (cp == first_p and values[c] > first_v):
                first, first_p, first_v = c, cp, values[c]
        p = Play(table_play, first)
        refused = refusal(rules, view, p)
        if refused is None:
            return p
        if refused.whatever_the_discard:
            return None  # the table actions themselves are refused: no other discard helps
        for c in _worst_first(choices, partnered, values)[1:3]:
            p = Play(table_play, c)
            if refusal(rules, view, p) is None:
                return p
        return None


class EpsilonGreedyPolicy:
    """``greedy-eps10``: greedy, except that each decision is, with probability 1/10, the random policy's.

    A deliberately weakened greedy, for measuring what ``arena match`` detects (bench/ab_test.py).
    """

    EPSILON = 0.1

    def __init__(self, rules: RuleSet, seed: int = 0) -> None:
        self.greedy = GreedyPolicy(rules, seed)
        self.random = RandomPolicy(rules, seed)
        self.rng = random.Random(f"eps:{seed}")

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return _restored, (EpsilonGreedyPolicy, self.greedy.rules,
                           {"greedy": self.greedy, "random": self.random, "rng": self.rng, "EPSILON": self.EPSILON})

    def draw(self, obs: Observation) -> str:
        return (self.random if self.rng.random() < self.EPSILON else self.greedy).draw(obs)

    def play(self, obs: Observation) -> Play:
        return (self.random if self.rng.random() < self.EPSILON else self.greedy).play(obs)


POLICIES: dict[str, Callable[[RuleSet, int], Policy]] = {
    "random": RandomPolicy, "greedy": GreedyPolicy, "greedy-eps10": EpsilonGreedyPolicy}


def _house(level: str) -> Callable[[RuleSet, int], Policy]:
    def make(rules: RuleSet, seed: int = 0) -> Policy:
        from arena.house import HousePolicy  # imported on use: it builds on this module

        return HousePolicy(rules, seed, level)

    return make


# the house bot's levels (arena/house.py): determinized search within a CPU budget per decision
POLICIES.update({f"house-{level}": _house(level) for level in ("easy", "medium", "hard")})


def make_policy(name: str, rules: RuleSet, seed: int = 0) -> Policy:
    try:
        return POLICIES[name](rules, seed)
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; expected one of {', '.join(POLICIES)}") from None
