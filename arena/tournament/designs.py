"""Seating designs and table combinatorics: the pure arithmetic under the schedule (``schedule.py``).

A set's seatings (``all`` permutations, a ``williams`` balanced Latin square, ``rotate``), the
k-combination of a given lexicographic rank (so a table is computed from its number, never
listed), and a seeded balanced subset of the combinations for ``max_tables``.  No tournament
types: numbers in, numbers out.
"""

from __future__ import annotations

import itertools
import math
import random
from functools import lru_cache

# -- seating designs --------------------------------------------------------------

def williams(k: int) -> tuple[tuple[int, ...], ...]:
    """A Williams design: k rows for even k, 2k for odd k.

    Every position holds every element equally often, and every ordered pair
    (a, b) appears as neighbours (b right after a) equally often.

    >>> williams(4)
    ((0, 1, 3, 2), (1, 2, 0, 3), (2, 3, 1, 0), (3, 0, 2, 1))
    >>> len(williams(3))  # odd: each row and its mirror
    6
    """
    first = [0]
    lo, hi = 1, k - 1
    while len(first) < k:
        first.append(lo)
        lo += 1
        if len(first) < k:
            first.append(hi)
            hi -= 1
    rows = [tuple((x + i) % k for x in first) for i in range(k)]
    if k % 2:
        rows += [tuple(reversed(r)) for r in rows]
    return tuple(rows)


@lru_cache(maxsize=64)
def seatings(k: int, design: str) -> tuple[tuple[int, ...], ...]:
    """Seat permutations of one set: ``perm[j]`` = position in the table's bots of seat j.

    >>> seatings(3, "rotate")
    ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    >>> len(seatings(4, "all"))
    24
    """
    if design == "all":
        return tuple(itertools.permutations(range(k)))
    if design == "williams":
        return williams(k)
    if design == "rotate":
        return tuple(tuple((j + i) % k for j in range(k)) for i in range(k))
    raise ValueError(f"unknown seating design {design!r}; expected all, williams or rotate")


def unrank_combination(n: int, k: int, rank: int) -> tuple[int, ...]:
    """The ``rank``-th k-combination of range(n) in lexicographic order.

    >>> unrank_combination(5, 2, 0), unrank_combination(5, 2, 1), unrank_combination(5, 2, 9)
    ((0, 1), (0, 2), (3, 4))
    """
    if not 0 <= rank < math.comb(n, k):
        raise IndexError(rank)
    out: list[int] = []
    x = 0
    for i in range(k):
        while True:
            c = math.comb(n - x - 1, k - i - 1)
            if rank < c:
                out.append(x)
                x += 1
                break
            rank -= c
            x += 1
    return tuple(out)


@lru_cache(maxsize=16)
def balanced_subset(n: int, k: int, m: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """``m`` distinct k-combinations of range(n), each element used as equally often as possible.

    Greedy: each table takes the k least-used bots, ties broken by a seeded
    random draw; a repeat is redrawn, and as a last resort the next unused
    combination in lexicographic order from a random rank is taken.  Only the
    ``m`` chosen tables are ever built.
    """
    total = math.comb(n, k)
    if m >= total:
        return tuple(itertools.combinations(range(n), k))
    rng = random.Random(f"arena-tables:{seed}:{n}:{k}:{m}")
    used = [0] * n
    chosen: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for _ in range(m):
        combo: tuple[int, ...] | None = None
        for _attempt in range(50):
            order = sorted(range(n), key=lambda b: (used[b], rng.random()))
            cand = tuple(sorted(order[:k]))
            if cand not in seen:
                combo = cand
                break
        if combo is None:
            start = rng.randrange(total)
            for r in itertools.chain(range(start, total), range(start)):
                cand = unrank_combination(n, k, r)
                if cand not in seen:
                    combo = cand
                    break
        assert combo is not None
        seen.add(combo)
        chosen.append(combo)
        for b in combo:
            used[b] += 1
    return tuple(chosen)
