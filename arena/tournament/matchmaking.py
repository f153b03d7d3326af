"""Choosing the next round's tables from the results so far: Swiss and adaptive rounds (pure).

Both take the current Plackett-Luce log-strengths (``ratings.strengths``) and return a round's
tables as sorted tuples of bot numbers; neither knows of deal-sets or seatings (each table still
plays its deal-set under the design's seatings).  Every choice is a function of its arguments and a
seeded ``random.Random``, so the same journal and seed give the same tables (a resumed run chooses
again exactly as before; docs/ARCHITECTURE.md section 5).

- ``swiss_round``: every bot once per round (``n % k`` bots sit out: those with the fewest byes,
  from the bottom of the order), tables of neighbours in the current order, a table played before
  avoided where a swap with a neighbouring table fixes it.
- ``adaptive_round``: a Swiss round on a *sampled* order: each bot's strength is drawn from its
  estimate's normal approximation (standard error from the Fisher information of its games,
  ``information``), and the bots are sorted by the draw.  A settled bot keeps its place and meets
  its true neighbours; a bot whose place is uncertain moves about and meets the bots it may be
  confused with, so tables go where they most reduce the ranking's uncertainty.  A share
  ``explore`` of the bots are placed in the order at random (the floor of exploration).
- ``settled``: per adjacent pair of the order, the chance that the two are in the right order.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Sequence

import numpy as np

Table = tuple[int, ...]
EXPLORE = 0.1  # share of bots placed at random in an adaptive round


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


def pair_chance(d: np.ndarray) -> np.ndarray:
    """Plackett-Luce chance that a bot finishes ahead of another, from their log-strength difference."""
    return 1.0 / (1.0 + np.exp(-d))


def information(strength: np.ndarray, tables: Iterable[Table]) -> np.ndarray:
    """Each bot's Fisher information from the tables it played (``p (1 - p)`` per pairing at a table)."""
    info = np.zeros(len(strength))
    by_size: dict[int, list[Table]] = {}
    for t in tables:
        by_size.setdefault(len(t), []).append(t)
    for group in by_size.values():
        idx = np.array(group)
        s = strength[idx]
        p = pair_chance(s[:, :, None] - s[:, None, :])
        np.add.at(info, idx, (p * (1.0 - p)).sum(axis=2))
    return info


def standard_errors(info: np.ndarray) -> np.ndarray:
    """Each bot's standard error of its log-strength from its information (large for a bot unseen)."""
    return 1.0 / np.sqrt(np.maximum(info, 1e-2))


def settled(strength: np.ndarray, info: np.ndarray, order: Sequence[int] | None = None) -> list[float]:
    """For each adjacent pair of ``order`` (default: by ``strength``, best first): the chance they are in
    the right order (normal approximation of each estimate, standard error from ``info``)."""
    if order is None:
        order = [int(b) for b in np.argsort(-strength, kind="stable")]
    se = standard_errors(info)
    out = []
    for a, b in itertools.pairwise(order):
        z = (strength[a] - strength[b]) / math.hypot(se[a], se[b])
        out.append(0.5 * math.erfc(-z / math.sqrt(2.0)))
    return out


def adaptive_round(strength: np.ndarray, info: np.ndarray, k: int, played: set[Table], byes: Sequence[int],
                   rng: random.Random, explore: float = EXPLORE) -> tuple[list[Table], list[int]]:
    """A Swiss round on an order drawn from the estimates' uncertainty (see the module)."""
    n = len(strength)
    se = standard_errors(info)
    draw = [float(strength[b]) + se[b] * rng.gauss(0.0, 1.0) for b in range(n)]
    order = sorted(range(n), key=lambda b: -draw[b])
    wild = [b for b in range(n) if rng.random() < explore]
    for b in wild:  # the floor of exploration: these bots take a random place
        order.remove(b)
        order.insert(rng.randrange(len(order) + 1), b)
    return swiss_round(order, k, played, byes, rng)


def league_round(fmt: str, n: int, k: int, seed: int, r: int, strength: np.ndarray | None,
                 games: Sequence[Table], byes: Sequence[int]) -> list[Table]:
    """Round ``r``'s tables of a ``swiss`` or ``adaptive`` league of ``n`` bots at ``k`` seats.

    ``strength``: the fit of the games of rounds before ``r`` (None for round 0: a seeded random
    order); ``games``: the table of every one of those games (bot numbers, one entry per game);
    ``byes[b]``: rounds bot ``b`` sat out.  The round's own ``random.Random`` is seeded by
    (format, seed, round), so a round's choice depends on nothing but these arguments.
    """
    rng = random.Random(f"arena-league:{fmt}:{seed}:{r}")
    played = set(games)
    if strength is None:
        order = rng.sample(range(n), n)
        return swiss_round(order, k, played, byes, rng)[0]
    if fmt == "swiss":
        order = sorted(range(n), key=lambda b: (-float(strength[b]), b))
        return swiss_round(order, k, played, byes, rng)[0]
    if fmt == "adaptive":
        return adaptive_round(strength, information(strength, games), k, played, byes, rng)[0]
    raise ValueError(f"unknown league format {fmt!r}; expected swiss or adaptive")
