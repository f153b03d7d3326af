"""The house bot: determinized Monte Carlo search (perfect-information sampling) within a time budget.

At a decision with more than one sensible move (a draw with both sources legal; a play with
more than one candidate: greedy's play, its table play with greedy's next-best discards, and
greedy's plans that hold back lay-offs or melds, ``HousePolicy.plays``), it samples the hidden
cards consistently with what its seat sees (the unseen cards are the deck less its hand, the
discard pile and the table, dealt to the other hands at their known sizes and to the stock at
its size), plays each move in that deal, finishes the deal with greedy for every seat (the
rollout policy: cheap, and exactly the opponent the bench measures against), and scores the
seat's deal score against the others' mean.  Every move is rolled out in the same sampled
deals (common random numbers), and moves are dropped by successive elimination; greedy's
move is kept unless another beats it by ``z`` standard errors of the paired differences.

Levels bound the samples per decision (``LEVELS``: deterministic for a given game and seat)
and, above all, the CPU time (``time.process_time``): a rollout that would pass the budget
stops and is not counted (the clock is read every 8 engine steps), so one decision costs at
most its budget plus about a millisecond.  A bot behind the protocol also keeps under half the
game's decision limit, in CPU time (``cap_s``) and on a wall clock (``wall_s``), so neither a
short limit nor a loaded machine makes it time out.
It remembers which of its discards the next seat took (only that seat can: the pile shows it
at its next turn) and deals those cards to that hand while nothing shows them elsewhere.  It
also reads from the pile what each other seat discarded and whether the next one left its
discard, and deals a seat fewer cards that would partner those (``_likelihood``): a card a seat
throws away or passes over is one its hand had little use for.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from arena.policies import GreedyPolicy, _partials
from arena.rules.actions import DISCARD, STOCK, Play
from arena.rules.cards import JOKER, Card, full_deck
from arena.rules.game import Game, Phase
from arena.rules.melds import hand_value, is_wild_card
from arena.rules.observation import Observation
from arena.rules.options import RuleSet
from arena.rules.position import Position
from arena.rules.search import safe_play
from arena.rules.turn import refusal, simulate_play


@dataclass(frozen=True, slots=True)
class Level:
    samples: int  # sampled deals per decision at most (each move is rolled out in each)
    budget_s: float  # CPU seconds per decision at most
    moves: int  # the candidates searched (the rest, after greedy's first ones, are left out)
    # how many standard errors a move must beat greedy's by: with several moves tried on few
    # samples, a one-error bar lets noise through often enough to play worse than greedy
    z: float = 2.0
    # deal the other hands as their own moves suggest (``HousePolicy._likelihood``), not uniformly
    infer: bool = True


LEVELS: dict[str, Level] = {
    "easy": Level(samples=24, budget_s=0.1, moves=3),
    "medium": Level(samples=96, budget_s=0.3, moves=5),
    "hard": Level(samples=400, budget_s=0.9, moves=8),
}
MAX_ROLLOUT = 400  # engine steps of one rollout before it is scored as it stands
MIN_SAMPLES = 8  # samples before a move may be dropped or chosen over greedy's
# How much less likely a card is dealt to a seat for each card it shunned that it would partner (same
# rank, or same suit within two ranks): one it discarded (a discard is a card with no use in its hand,
# so a partner there is unlikely unless drawn since) or a top it left (it had no pair to meld it with;
# one partner alone is still likely).
DISCARDED = 0.25
LEFT = 0.6


def _paired(a: list[float], b: list[float], n: int) -> tuple[float, float]:
    """The mean of the paired differences a - b over n samples, and its standard error."""
    d = [x - y for x, y in zip(a, b)]
    mean = sum(d) / n
    var = max(sum(x * x for x in d) / n - mean * mean, 0.0)
    return mean, math.sqrt(var / (n - 1))


def _likelihood(card: Card, shunned: list[tuple[Card, float]], rules: RuleSet) -> float:
    """The weight of dealing ``card`` to a seat that shunned these cards: the product of the weights of
    those it partners (a set or a run with it); a wild partners everything, so it is not told apart."""
    if card == JOKER or is_wild_card(card, rules):
        return 1.0
    r, su = card >> 2, card & 3  # rank_of, suit_of
    w = 1.0
    for c, weight in shunned:
        if c != JOKER and (c >> 2 == r or (c & 3 == su and 0 < abs((c >> 2) - r) <= 2)):
            w *= weight
    return w


class _OutOfTime(Exception):
    pass


class HousePolicy:
    def __init__(self, rules: RuleSet, seed: int = 0, level: str | Level = "hard") -> None:
        self.rules = rules
        self.level = LEVELS[level] if isinstance(level, str) else level
        self.rng = random.Random(seed)
        self.greedy = GreedyPolicy(rules)
        self.wall_s = math.inf  # set by a bot from its clock: wall seconds a decision may take
        self.cap_s = math.inf  # and CPU seconds, when the game's limit is below the level's budget
        self.last_samples = 0  # rollouts counted at the last search (tests, bench)
        # what it remembers of this deal: the pile just after its own discard, and cards it saw a seat take
        self._deal = 0
        self._after: list[Card] | None = None
        self._rebuilds = 0
        self.known: dict[int, list[Card]] = {}
        # a seat's discards (weight DISCARDED) and the tops it left (LEFT), this deal
        self.shunned: dict[int, list[tuple[Card, float]]] = {}
        self._weights: dict[int, dict[Card, float]] = {}  # _likelihood by seat and card, until shunned changes
        self._deadline = (0.0, 0.0)

    # -- the two decisions ---------------------------------------------------
    def _remember(self, obs: Observation) -> None:
        """What the pile tells of the other seats since this seat's last discard.

        Only the next seat could take that discard (each later one finds another card on it): it did
        if the card is gone from its place, and that card is then dealt to its hand while nothing shows
        it elsewhere; if the card is still there, that seat left it.  The top of the pile is the
        discard of the seat just before this one, and when the pile only grew, each card above this
        seat's discard is the discard of the next seat in turn.  A seat's discards and the tops it left
        are cards it had little use for (``_likelihood``)."""
        self._weights = {}
        if obs.deal != self._deal:
            self._deal, self._after, self.known, self.shunned = obs.deal, None, {}, {}
        after, self._after = self._after, None
        if not after or obs.rebuilds != self._rebuilds:
            return  # nothing to compare, or the pile was turned over since
        n = len(obs.in_game)
        nxt = [(obs.seat + k) % n for k in range(1, n) if obs.in_game[(obs.seat + k) % n]]
        pile, at = obs.discard, len(after) - 1
        if not nxt or pile[:at] != after[:at]:
            return
        if len(pile) <= at or pile[at] != after[at]:
            self.known.setdefault(nxt[0], []).append(after[at])
            if pile:
                self.shunned.setdefault(nxt[-1], []).append((pile[-1], DISCARDED))
            return
        grown = pile[at + 1:]
        self.shunned.setdefault(nxt[0], []).append((after[at], LEFT))
        if len(grown) == len(nxt):
            for s, c in zip(nxt, grown):
                self.shunned.setdefault(s, []).append((c, DISCARDED))
        elif grown:
            self.shunned.setdefault(nxt[-1], []).append((grown[-1], DISCARDED))

    def draw(self, obs: Observation) -> str:
        self._remember(obs)
        if len(obs.legal_draws) < 2:
            return obs.legal_draws[0] if obs.legal_draws else STOCK
        first = self.greedy.draw(obs)
        return self._search(obs, [first, STOCK if first == DISCARD else DISCARD])  # type: ignore[return-value]

    def play(self, obs: Observation) -> Play:
        if obs.drawn is None:  # a turn without a draw (the first player's extra card)
            self._remember(obs)
        moves = self.plays(obs)
        move = moves[0] if len(moves) == 1 else self._search(obs, moves)
        assert isinstance(move, Play)
        if move.discard is not None:
            self._after, self._rebuilds = obs.discard + [move.discard], obs.rebuilds
        return move

    def plays(self, obs: Observation) -> list[Play]:
        """The candidates searched, greedy's play first: its table play with its next-best discards
        (greedy's own order: cards in no partial meld, higher value first), interleaved with
        greedy's plans that hold back lay-offs or melds; at most ``level.moves``."""
        rules, view, greedy = self.rules, obs.turn_view(), self.greedy
        plans = greedy.plays(obs)
        first = plans[0] if plans else safe_play(rules, view)
        out = [first]
        alts: list[Play] = []
        if first.discard is not None:
            rest = simulate_play(rules, view, first).hand + [first.discard]
            partial = _partials(rest, rules)
            values = greedy._values
            order = sorted({c for c in rest if c != first.discard and not (view.took_discard and c == view.drawn)},
                           key=lambda c: (partial[c], -values[c], c))
            for c in order:
                p = Play(first.actions, c)
                if refusal(rules, view, p) is None:
                    alts.append(p)
                if len(alts) >= self.level.moves:
                    break
        held = [p for p in plans[1:] if p != first]
        while (alts or held) and len(out) < self.level.moves:
            for src in (alts, alts, held):  # two discards to one held-back plan
                if src and len(out) < self.level.moves:
                    p = src.pop(0)
                    if p not in out:
                        out.append(p)
        return out

    # -- search --------------------------------------------------------------
    def _search(self, obs: Observation, moves: list[str] | list[Play]) -> str | Play:
        """Successive elimination on common samples: every move still in is rolled out in the same
        sampled deals (the deal's luck cancels in the paired differences); a move is dropped once
        the leader beats it by ``level.z`` standard errors, or when it has scored exactly as
        another move on every sample so far (the same move in effect; the earlier is kept).  It
        stops when one move is left, at the sample cap, or on the clock.  Greedy's move (the first)
        is played unless another left in beats it by ``level.z`` errors, or it was dropped."""
        cpu = min(self.level.budget_s, self.cap_s)
        self._deadline = (time.process_time() + cpu, time.perf_counter() + min(self.wall_s, 1e9))
        n = len(moves)
        vals: list[list[float]] = [[] for _ in range(n)]
        alive = list(range(n))
        samples = 0
        try:
            while samples < self.level.samples and len(alive) > 1:
                pos, seed = self._determinize(obs), self.rng.getrandbits(32)
                row = [self._rollout(obs, pos, seed, moves[k]) for k in alive]
                for k, v in zip(alive, row):
                    vals[k].append(v)
                samples += 1
                if samples >= MIN_SAMPLES and samples % 4 == 0:
                    alive = self._eliminate(alive, vals, samples)
        except _OutOfTime:
            pass
        self.last_samples = samples
        if samples < MIN_SAMPLES or len(alive) == 1:
            return moves[alive[0]] if samples >= MIN_SAMPLES else moves[0]
        lead = max(alive, key=lambda k: sum(vals[k]))
        if 0 not in alive or lead == 0:
            return moves[lead]
        mean, se = _paired(vals[lead], vals[0], samples)
        return moves[lead] if mean > self.level.z * se else moves[0]

    def _eliminate(self, alive: list[int], vals: list[list[float]], samples: int) -> list[int]:
        lead = max(alive, key=lambda k: sum(vals[k]))
        keep: list[int] = []
        for k in alive:
            if any(vals[k] == vals[j] for j in keep):
                continue  # scores as a move kept before it (alive is in candidate order)
            if k != lead:
                mean, se = _paired(vals[lead], vals[k], samples)
                if mean > self.level.z * se and mean > 0:
                    continue
            keep.append(k)
        return keep

    def _check(self) -> None:
        cpu, wall = self._deadline
        if time.process_time() > cpu or time.perf_counter() > wall:
            raise _OutOfTime

    def _determinize(self, obs: Observation) -> Position:
        """A game in the seat's situation with the hidden cards dealt at random (consistent with what it sees)."""
        rules, me = self.rules, obs.seat
        players = sum(obs.in_game)
        pool = full_deck(rules.count_value("decks", players), rules.count_value("jokers", players))
        for c in obs.hand + obs.discard + [c for m in obs.melds for c in m.cards]:
            try:
                pool.remove(c)
            except ValueError:
                pass  # cannot happen with a true observation; a bad one is sampled as well as may be
        self.rng.shuffle(pool)
        hands: list[tuple[Card, ...]] = []
        for s, size in enumerate(obs.hand_sizes):
            if s == me:
                hands.append(tuple(obs.hand))
                continue
            hand: list[Card] = []
            for c in self.known.get(s, ()):  # cards seen going into this hand, if nothing shows them elsewhere
                if c in pool and len(hand) < size:
                    pool.remove(c)
                    hand.append(c)
            need = size - len(hand)
            shunned = self.shunned.get(s) if self.level.infer else None
            if shunned and need:
                pool = self._deal_likely(pool, hand, need, shunned, self._weights.setdefault(s, {}))
            else:
                hand += pool[:need]
                del pool[:need]
            hands.append(tuple(hand))
        stock = tuple(pool[: obs.stock_size])
        n = len(obs.hand_sizes)
        pos = Position(
            tuple(obs.totals), tuple(obs.in_game), tuple(None if i else 0 for i in obs.in_game), (), (), "",
            obs.deal, obs.dealer, tuple(hands), stock, tuple(obs.discard), tuple(m.copy() for m in obs.melds),
            tuple(pool[obs.stock_size:]), tuple(obs.opened), (False,) * n if not obs.played_before else
            tuple(s == me for s in range(n)), obs.rebuilds, 0, obs.phase, obs.turn - 1, obs.current, None,
            obs.drawn, obs.took_discard,
        )
        return pos

    def _deal_likely(self, pool: list[Card], hand: list[Card], need: int,
                     shunned: list[tuple[Card, float]], weights: dict[Card, float]) -> list[Card]:
        """Deals ``need`` cards of the shuffled ``pool`` to ``hand``, each taken with its likelihood
        (``_likelihood``, kept in ``weights``: a decision samples many deals from the same pile) in
        pool order, the rest in order if a pass leaves the hand short; the pool left."""
        rules, rnd = self.rules, self.rng.random
        rest: list[Card] = []
        for i, c in enumerate(pool):
            if need == 0:
                rest += pool[i:]
                break
            w = weights.get(c)
            if w is None:
                w = weights[c] = _likelihood(c, shunned, rules)
            if rnd() < w:
                hand.append(c)
                need -= 1
            else:
                rest.append(c)
        hand += rest[:need]
        del rest[:need]
        return rest

    def _rollout(self, obs: Observation, pos: Position, seed: int, move: str | Play) -> float:
        """The move in a sampled deal, then greedy for every seat to the deal's end; the seat's relative score."""
        g = Game.from_position(self.rules, pos, seed=seed)
        me, deal = obs.seat, obs.deal
        if isinstance(move, str):
            g.draw(move)
        else:
            g.play(move)
        greedy = self.greedy
        steps = 0
        while not g.over and g.deal_no == deal and steps < MAX_ROLLOUT:
            if steps % 8 == 0:
                self._check()
            o = g.observation(g.current)
            if g.phase is Phase.DRAW:
                g.draw(greedy.draw(o))
            else:
                g.play(greedy.play(o))
            steps += 1
        rules = self.rules
        if g.deal_scores:  # the deal ended (the sampled game starts with none)
            scores = g.deal_scores[-1]
        else:  # the deal goes on: score the hands as they stand
            scores = [hand_value(h, rules) for h in g.hands]
            if rules.scoring != "penalty":
                scores = [-v for v in scores]
        others = [scores[s] for s in range(len(scores)) if s != me and obs.in_game[s]]
        rel = scores[me] - sum(others) / max(len(others), 1)
        return (-rel if rules.scoring == "penalty" else rel) / 100
