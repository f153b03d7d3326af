"""The env's encodings (protocol/ENV.md): candidate plays, the observation tensor, the action mask.

One decision of the protocol is one step: a draw (actions 0 and 1) or a play
chosen from a list of candidate plays (action ``2 + k``), every candidate
checked legal with the engine's ``simulate_play``.  The list is built from
the built-in greedy policy's plan (its own choice first), each plain discard,
and each candidate meld with greedy's discard after it.

This module needs only numpy and the engine (no PettingZoo, no Gymnasium),
so a bot (``sample_bots.env_bot``) encodes a protocol observation exactly as
the env does, and a policy trained in the env runs unchanged behind the
protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import numpy as np

from arena.policies import GreedyPolicy
from arena.referee.wire import observation as wire_observation
from arena.rules.actions import DISCARD, STOCK, Meld, Play, Swap
from arena.rules.candidates import candidate_melds
from arena.rules.frozen import by_fields
from arena.rules.observation import Observation
from arena.rules.options import RuleSet
from arena.rules.search import safe_play
from arena.rules.turn import refusal

# Final: mypyc compiles these to constants (a plain module global is a dict look-up at each use)
CARDS: Final = 56  # card ids 0..55 (cards.py: rank * 4 + suit, joker 0; ids 1..3 unused)
MAX_SEATS: Final = 8
MAX_PLAYS: Final = 62
ACTIONS: Final = 2 + MAX_PLAYS  # 0: draw from stock, 1: take the discard, 2 + k: play candidate k
DRAW_STOCK: Final = 0
DRAW_DISCARD: Final = 1
SEAT_FEATURES: Final = 6  # present, in game, hand size / 20, total / target, opened, is current
PLAY_FEATURES: Final = 2 * CARDS + 4  # cards put on the table, the discard, goes out, table actions / 4, greedy's, present
SCALARS: Final = 12

# offsets into the tensor (protocol/ENV.md lists them)
HAND: Final = 0
DRAWN: Final = CARDS
TOP: Final = 2 * CARDS
PILE: Final = 3 * CARDS
TABLE: Final = 4 * CARDS
SCALAR: Final = 5 * CARDS
SEATS: Final = SCALAR + SCALARS
PLAYS: Final = SEATS + MAX_SEATS * SEAT_FEATURES
SIZE: Final = PLAYS + MAX_PLAYS * PLAY_FEATURES
BOUND: Final = 1000.0  # no entry reaches it: counts, flags, and scaled sizes, totals, turns and deals


@dataclass(slots=True, init=False)
class Decision:
    """One decision as the env and the bot adapter both present it to a policy."""

    observation: Observation  # the engine form of what the protocol shows the seat
    rules: RuleSet
    plays: list[Play]  # the candidates (play phase only)

    def __init__(self, observation: Observation, rules: RuleSet, plays: list[Play] | None = None) -> None:
        # written out: mypyc compiles it (arena/rules/actions.py says why)
        self.observation, self.rules, self.plays = observation, rules, [] if plays is None else plays

    def __reduce__(self) -> tuple[type, tuple[object, ...]]:
        return by_fields(self)  # compiled, its __new__ runs __init__ (frozen.py)

    def protocol(self) -> dict[str, Any]:
        """The observation exactly as the protocol sends it (SPEC 5), as plain data."""
        out: dict[str, Any] = msgspec.to_builtins(wire_observation(self.observation))
        return out


def candidates(rules: RuleSet, obs: Observation, greedy: GreedyPolicy | None = None) -> list[Play]:
    """The candidate plays of a play decision, in a fixed order, each legal; never empty."""
    g = greedy or GreedyPolicy(rules)
    view = obs.turn_view()
    out = g.plays(obs, view)[:MAX_PLAYS]  # distinct, and checked legal by the policy
    plain = [c for c in sorted(set(view.hand)) if not (view.took_discard and c == view.drawn)]
    # A plain discard's legality does not depend on which card it is, beyond the taken one left
    # out above (RULES 3.3): the engine is asked about one (unless greedy's plan holds one already),
    # and stands for the rest.
    planned_plain = {p.discard for p in out if not p.actions}
    if plain and (planned_plain or refusal(rules, view, Play((), plain[0])) is None):
        for c in plain:
            if c not in planned_plain and len(out) < MAX_PLAYS:  # a plain discard equals only a plain discard
                out.append(Play((), c))
    planned = {p.actions for p in out}
    finished: set[tuple[int, ...]] = set()
    for m in candidate_melds(view.hand, rules):
        if len(out) >= MAX_PLAYS:
            break
        meld = Meld(m)
        # else greedy's finish of it is in the list already (it is deterministic); a finish of
        # one meld equals no other candidate than a finish of the same meld
        if (meld,) not in planned and m not in finished:
            finished.add(m)
            p = g.finish(obs, [meld], view)
            if p is not None:
                out.append(p)
    if not out:
        out.append(safe_play(rules, view))
    return out


def encode(decision: Decision) -> tuple[np.ndarray, np.ndarray]:
    """The observation tensor (float32, ``SIZE``) and action mask (int8, ``ACTIONS``) of a decision."""
    obs, rules = decision.observation, decision.rules
    # Every count entry (the card blocks and the plays' cards and flags) is one index in ``idx``,
    # counted by a single bincount: far cheaper than one numpy store per card.  (Plain loops:
    # compiled, they beat ``idx += map(PILE.__add__, ...)``; numpy's calls, not these loops, are
    # most of the time, so there are as few of them as can be.)
    idx = list(obs.hand)
    if obs.drawn is not None:
        idx.append(DRAWN + obs.drawn)
    if obs.discard:
        idx.append(TOP + obs.discard[-1])
        for c in obs.discard:
            idx.append(PILE + c)
    for m in obs.melds:
        for c in m.cards:
            idx.append(TABLE + c)
    mine = obs.current == obs.seat
    plays = decision.plays if mine and obs.phase == "play" else []
    sizes: list[float] = []
    hand = len(obs.hand)
    for k, p in enumerate(plays):
        base = PLAYS + k * PLAY_FEATURES
        gone = 0
        for a in p.actions:
            if isinstance(a, Swap):
                idx.append(base + a.card)
                gone += 1
            else:
                for c in a.cards:
                    idx.append(base + c)
                gone += len(a.cards)
        if p.discard is not None:
            idx.append(base + CARDS + p.discard)
            gone += 1
        flags = base + 2 * CARDS
        if gone == hand:
            idx.append(flags)
        if k == 0:
            idx.append(flags + 2)
        idx.append(flags + 3)
        sizes.append(len(p.actions) / 4)
    # counted only as far as the last index reached (the tensor is mostly empty play slots);
    # fromiter with the length given reads the list faster than bincount's own conversion
    counts = _bincount(_fromiter(idx, _INTP, len(idx)))
    x = _zeros(SIZE, _FLOAT32)
    x[:counts.size] = counts
    me = obs.seat
    # all floats: numpy reads a list of one type faster than one of bools, ints and floats
    scalars: list[float] = [
        1.0 if obs.phase == "draw" else 0.0, 1.0 if obs.phase == "play" else 0.0, 1.0 if obs.took_discard else 0.0,
        1.0 if obs.opened[me] else 0.0, obs.opening_requirement / 100, 1.0 if obs.must_go_out_to_meld else 0.0,
        1.0 if obs.played_before else 0.0, obs.stock_size / 100, obs.deal / 10, obs.turn / 100, float(obs.rebuilds),
        1.0 if DISCARD in obs.legal_draws else 0.0,
    ]
    n = len(obs.hand_sizes)
    target = max(rules.target, 1)
    for k in range(min(n, MAX_SEATS)):
        s = (me + k) % n  # relative seats: 0 is the observing seat, then clockwise
        total = min(max(obs.totals[s] / target, -BOUND), BOUND)  # a tiny target could pass the bound
        scalars.append(1.0)
        scalars.append(1.0 if obs.in_game[s] else 0.0)
        scalars.append(obs.hand_sizes[s] / 20)
        scalars.append(total)
        scalars.append(1.0 if obs.opened[s] else 0.0)
        scalars.append(1.0 if obs.current == s else 0.0)
    # the scalars and the plays' sizes in one store, through their positions (made once per shape)
    key = len(scalars) * (MAX_PLAYS + 1) + len(sizes)
    at = _POSITIONS.get(key)
    if at is None:
        at = _POSITIONS[key] = np.array(
            [*range(SCALAR, SCALAR + len(scalars)),
             *range(PLAYS + 2 * CARDS + 1, PLAYS + len(sizes) * PLAY_FEATURES, PLAY_FEATURES)], dtype=np.intp)
    scalars += sizes
    x[at] = scalars
    if not mine:
        return x, _NO_MOVE.copy()  # not this seat's decision: nothing allowed
    if obs.phase == "draw":
        return x, _DRAW_MASKS[(1 if STOCK in obs.legal_draws else 0) + (2 if DISCARD in obs.legal_draws else 0)].copy()
    return x, _PLAY_MASKS[len(plays)].copy()


# numpy's functions and types as statics (compiled, ``np.zeros`` is two dict look-ups at each call)
_bincount: Final = np.bincount
_fromiter: Final = np.fromiter
_zeros: Final = np.zeros
_INTP: Final = np.intp
_FLOAT32: Final = np.float32
# the tensor positions of the scalars and the plays' sizes, by len(scalars) * (MAX_PLAYS + 1) + len(plays)
_POSITIONS: Final[dict[int, np.ndarray]] = {}


def _mask(allowed: list[int]) -> np.ndarray:
    mask = np.zeros(ACTIONS, dtype=np.int8)
    mask[allowed] = 1
    return mask


# the masks there can be, copied (one numpy call, where making one is two or three)
_NO_MOVE: Final = _mask([])
_DRAW_MASKS: Final = tuple(_mask([a for a, bit in ((DRAW_STOCK, 1), (DRAW_DISCARD, 2)) if k & bit])
                           for k in range(4))  # index: 1 if the stock is allowed, + 2 if the discard is
_PLAY_MASKS: Final = tuple(_mask(list(range(2, 2 + k))) for k in range(MAX_PLAYS + 1))


def decide(rules: RuleSet, obs: Observation, greedy: GreedyPolicy | None = None) -> Decision:
    """The decision a seat faces: its observation, and in a play decision the candidates."""
    mine = obs.phase == "play" and obs.current == obs.seat
    return Decision(obs, rules, candidates(rules, obs, greedy) if mine else [])


def decode(decision: Decision, action: int) -> str | Play:
    """The draw source or play an action stands for; ValueError if the mask does not allow it."""
    obs = decision.observation
    if obs.phase == "draw":
        if action == DRAW_STOCK and STOCK in obs.legal_draws:
            return STOCK
        if action == DRAW_DISCARD and DISCARD in obs.legal_draws:
            return DISCARD
    elif 2 <= action < 2 + len(decision.plays):
        return decision.plays[action - 2]
    raise ValueError(f"action {action} is not allowed now (see the action mask)")



EnvPolicy = Callable[[dict[str, np.ndarray], Decision], int]
"""What a policy written against the env is: (observation dict, the decision) -> action."""


class AsPolicy:
    """An ``EnvPolicy`` as an engine policy (``arena.policies.Policy``: draw and play from an
    ``Observation``): what the bot adapter runs, and a fixed opponent of ``single_agent``."""

    def __init__(self, rules: RuleSet, policy: EnvPolicy) -> None:
        self.rules = rules
        self.policy = policy
        self.greedy = GreedyPolicy(rules)

    def move(self, obs: Observation) -> str | Play:
        d = decide(self.rules, obs, self.greedy)
        x, mask = encode(d)
        return decode(d, int(self.policy({"observation": x, "action_mask": mask}, d)))

    def draw(self, obs: Observation) -> str:
        move = self.move(obs)
        assert isinstance(move, str), "a draw decision decoded to a play"
        return move

    def play(self, obs: Observation) -> Play:
        move = self.move(obs)
        assert isinstance(move, Play), "a play decision decoded to a draw"
        return move
