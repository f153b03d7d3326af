"""Choosing the next round's tables from the results so far: Swiss and adaptive rounds (pure).

Both take the current league fit (``league_fit.league_fit``: log-strengths and their posterior
covariance) and return a round's tables as sorted tuples of bot numbers; neither knows of
deal-sets or seatings (each table still plays its deal-set under the design's seatings).  Every choice is a function of its arguments and a
seeded ``random.Random``, so the same journal and seed give the same tables (a resumed run chooses
again exactly as before; docs/ARCHITECTURE.md section 5).

- ``swiss_round``: every bot once per round (``n % k`` bots sit out: those with the fewest byes,
  from the bottom of the order), tables of neighbours in the current order, a table played before
  avoided where a swap with a neighbouring table fixes it.
- ``adaptive_round``: a Swiss round on a *sampled* order (Thompson sampling): the strengths are
  drawn jointly from the fit's normal posterior (its covariance, so two bots measured mostly
  against each other move together), and the bots are sorted by the draw.  A settled bot keeps
  its place and meets its true neighbours; a bot whose place is uncertain moves about and meets
  the bots it may be confused with, so tables go where they most reduce the ranking's
  uncertainty.  The floor of exploration: every draw adds independent noise of sd ``FLOOR``,
  so even a bot that looks settled keeps meeting new neighbours, and an unseen bot has the
  prior's large variance, so it lands anywhere.
- ``settled``: per adjacent pair of the order, the chance that the two are in the right order.

Why this and not more exploration: in the simulation of ``bench/league.py`` (100 bots), a share
of bots placed at random (3% and 10%) and a posterior widened 2x each cost games, since a game between bots far apart in
strength says almost nothing about the order.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import numpy as np

from arena.tournament import league_objective

Table = tuple[int, ...]
FLOOR = 0.15  # sd (log-strength, about 26 Elo) of the independent noise in every adaptive draw


def _mend(tables: list[list[int]], played: set[Table], k: int) -> list[list[int]]:
    """Swap bots between neighbouring tables so that no table repeats one played, where a swap can."""
    for _ in range(3):  # a few passes mend most repeats; what is left is played again
        changed = False
        for t in range(len(tables)):
            if tuple(sorted(tables[t])) not in played:
                continue
            fixed = False
            for u in (t + 1, t - 1):
                if not 0 <= u < len(tables) or fixed:
                    continue
                for i in range(k - 1, -1, -1):
                    for j in range(k):
                        a, b = tables[t][:], tables[u][:]
                        a[i], b[j] = b[j], a[i]
                        if tuple(sorted(a)) not in played and tuple(sorted(b)) not in played:
                            tables[t], tables[u] = a, b
                            changed = fixed = True
                            break
                    if fixed:
                        break
        if not changed:
            break
    return tables


def swiss_round(order: Sequence[int], k: int, played: set[Table], byes: Sequence[int],
                rng: random.Random) -> tuple[list[Table], list[int]]:
    """Tables of one round from ``order`` (bot numbers, best first) and the bots sitting out.

    ``played``: tables already played (sorted tuples); ``byes[b]``: rounds bot ``b`` sat out so far.
    """
    n = len(order)
    out = n % k
    rest = list(order)
    sitting: list[int] = []
    if out:
        # the bots that sat out least, from the bottom of the order (a seeded tie-break)
        ranked = sorted(range(n), key=lambda i: (byes[order[i]], -i, rng.random()))
        sitting = [order[i] for i in ranked[:out]]
        rest = [b for b in order if b not in set(sitting)]
    tables = _mend([rest[i:i + k] for i in range(0, len(rest), k)], played, k)
    return [tuple(sorted(t)) for t in tables], sitting


def settled(strength: np.ndarray, cov: np.ndarray, order: Sequence[int] | None = None) -> list[float]:
    """For each adjacent pair of ``order`` (default: by ``strength``, best first): the chance that they are in
    the right order under the fit's normal posterior (``cov``: the covariance of the log-strengths)."""
    if order is None:
        order = [int(b) for b in np.argsort(-strength, kind="stable")]
    out = []
    for a, b in itertools.pairwise(order):
        sd = math.sqrt(max(cov[a, a] + cov[b, b] - 2.0 * cov[a, b], 1e-12))
        out.append(0.5 * math.erfc(-(strength[a] - strength[b]) / sd / math.sqrt(2.0)))
    return out


def adaptive_round(strength: np.ndarray, cov: np.ndarray, k: int, played: set[Table], byes: Sequence[int],
                   rng: random.Random, floor: float = FLOOR) -> tuple[list[Table], list[int]]:
    """A Swiss round on an order drawn from the fit's posterior (see the module)."""
    n = len(strength)
    root = np.linalg.cholesky(cov)
    joint = np.array([rng.gauss(0.0, 1.0) for _ in range(n)])
    alone = np.array([rng.gauss(0.0, 1.0) for _ in range(n)])
    draw = strength + root @ joint + floor * alone
    order = sorted(range(n), key=lambda b: (-float(draw[b]), b))
    return swiss_round(order, k, played, byes, rng)


def league_round(fmt: str, n: int, k: int, seed: int, r: int, fit: tuple[np.ndarray, np.ndarray] | None,
                 games: Sequence[Table], byes: Sequence[int], top: int | None = None, top_order: bool = False,
                 uneven: bool = False, idle: Sequence[int] | None = None, table_games: int = 1) -> list[Table]:
    """Round ``r``'s tables of a ``swiss`` or ``adaptive`` league of ``n`` bots at ``k`` seats.

    ``fit``: ``league_fit.league_fit`` of the games of rounds before ``r`` (None for round 0: a seeded
    random order); ``games``: the table of every one of those games (bot numbers, one entry per game);
    ``byes[b]``: rounds bot ``b`` sat out.  The round's own ``random.Random`` is seeded by
    (format, seed, round), so a round's choice depends on nothing but these arguments.
    An adaptive league with ``top = K`` allocates its seats unevenly after its first rounds, and one with
    ``uneven`` (the whole order) chooses its tables by expected information (``arena.tournament.league_objective``;
    ``idle[b]``: rounds in a row ``b`` has sat out; ``table_games``: the games a table plays in a round).
    """
    rng = random.Random(f"arena-league:{fmt}:{seed}:{r}")
    played = set(games)
    if fit is None:
        order = rng.sample(range(n), n)
        return swiss_round(order, k, played, byes, rng)[0]
    strength, cov = fit
    if fmt == "swiss":
        order = sorted(range(n), key=lambda b: (-float(strength[b]), b))
        return swiss_round(order, k, played, byes, rng)[0]
    if fmt == "adaptive" and uneven and top is None and r >= league_objective.WARMUP:
        return league_objective.information_round(strength, cov, k, idle if idle is not None else byes,
                                                  min(league_objective.CAP, n // k), table_games)
    if fmt == "adaptive" and top is not None and r >= league_objective.WARMUP:
        counts = [0] * n
        for table in games:
            for b in table:
                counts[b] += 1
        gen = league_objective.generator("arena-league-uneven", seed, r, top, top_order)
        return league_objective.league_round(strength, cov, k, top, top_order, idle if idle is not None else byes,
                                             counts, gen, FLOOR)
    if fmt == "adaptive":
        return adaptive_round(strength, cov, k, played, byes, rng)[0]
    raise ValueError(f"unknown league format {fmt!r}; expected swiss or adaptive")
