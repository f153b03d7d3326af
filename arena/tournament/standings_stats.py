"""The statistics behind the standings' columns: score margins with deal-set-clustered intervals,
the LOS of a pair (the exact sign-flip test, or the t test), the noise test between adjacent bots,
each seat's advantage, and a league's Top K% chances.  Each is calibrated by a simulation with
known truth in ``bench/`` (README, "What the numbers mean").

The deal-sets are the independent units: the games of one duplicate set share its deal, so every
interval here is clustered by deal-set.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena.tournament import ratings
from arena.tournament.journal import JournalEntry

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Margin:
    mean: float
    ci: float | None     # half width of the 95% interval; None with fewer than 2 deal-sets or no spread
    games: int


NOISE_TEST = "a two-sided t test at 5% on their rating difference (deal-set-clustered variance)"


EXACT_SETS = 12  # up to this many deal-sets LOS is the exact sign-flip test (2 ** 12 flips), beyond it the t test


@functools.cache
def _flips(n: int) -> np.ndarray:
    return np.array(list(itertools.product((-1.0, 1.0), repeat=n)))


def los(set_sums: Sequence[float]) -> float | None:
    """Likelihood of superiority from per-deal-set sums of (wins - losses) of row over column: 1 minus the
    p-value of the test that row is no stronger.

    The deal-sets are the independent units (the seatings of one set share its deal).  For two equal bots
    each set's sum is as likely to be x as -x, so with up to ``EXACT_SETS`` sets the test is the exact
    sign-flip (randomisation) test: p is the share of the 2 ** sets sign patterns whose total is at least
    the observed one (so for equal bots LOS >= 95% in at most 5% of runs, whatever the game); beyond, the
    t test on the sets' mean.  None when no game was decided or with a single deal-set.  Ties in the flip
    distribution count against both sides, so LOS(a, b) + LOS(b, a) may fall short of 1.
    """
    x = np.asarray(set_sums, dtype=float)
    if x.size < 2 or not np.any(x):
        return None
    if x.size <= EXACT_SETS:
        totals = _flips(x.size) @ np.abs(x)
        return float(1.0 - np.mean(totals >= x.sum() - 1e-9))
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    if sd <= 1e-12:
        return 1.0 if mean > 0 else 0.0
    from scipy.special import stdtr  # Student's t cdf, imported when needed (~0.3 s of CPU)

    return float(stdtr(x.size - 1, mean / (sd / math.sqrt(x.size))))


def within_noise(fit: ratings.RatingFit, upper: str, lower: str) -> bool:
    """Whether ``NOISE_TEST`` fails to separate ``upper`` (ranked above) from ``lower``; for a bound, whether
    it fails to clear the other's interval."""
    a, b = fit.ratings[upper], fit.ratings[lower]
    if a.bound or b.bound:
        return a.low is None or b.high is None or a.low <= b.high
    ahead = fit.ahead(upper, lower)
    return ahead is None or 1.0 - ahead > (1.0 - ratings.LEVEL) / 2


class Clustered:
    """Mean with a cluster-robust standard error (clusters = deal-sets)."""

    def __init__(self) -> None:
        self.sums: dict[tuple[int, int], float] = {}
        self.counts: dict[tuple[int, int], int] = {}

    def add(self, cluster: tuple[int, int], x: float) -> None:
        self.sums[cluster] = self.sums.get(cluster, 0.0) + x
        self.counts[cluster] = self.counts.get(cluster, 0) + 1

    def result(self) -> Margin | None:
        n = sum(self.counts.values())
        if n == 0:
            return None
        mean = sum(self.sums.values()) / n
        g = len(self.sums)
        if g < 2:
            return Margin(mean, None, n)
        # residual sum per cluster: sum_i (x_i - mean) = S_g - n_g * mean
        ss = sum((self.sums[c] - self.counts[c] * mean) ** 2 for c in self.sums)
        if ss <= 1e-12 * max(1.0, mean * mean) * n:  # no spread between deal-sets: no interval to speak of
            return Margin(mean, None, n)
        se = math.sqrt(ss * g / (g - 1)) / n
        return Margin(mean, Z95 * se, n)


def seat_advantage(entries: list[JournalEntry],
                   first_seat: Callable[[int, int], int | None] | None = None) -> list[dict[str, Any]]:
    """Per table size: each seat's win rate (placed first, ties included) and mean placing, and those of the
    player who played first (``first_seat(deal_seed, seats)``, when given), each with its 95% interval
    clustered by deal-set.  With no advantage every seat wins ``1 / seats`` of its games."""
    by_k: dict[int, list[JournalEntry]] = {}
    for e in entries:
        if len(e.placings) == len(e.seats) >= 2:
            by_k.setdefault(len(e.seats), []).append(e)

    def summary(wins: Clustered, places: Clustered) -> dict[str, Any] | None:
        w, p = wins.result(), places.result()
        if w is None or p is None:
            return None
        return {"games": w.games, "win_rate": w.mean, "win_ci": w.ci, "avg_place": p.mean, "place_ci": p.ci}

    out = []
    for k in sorted(by_k):
        seat_w = [Clustered() for _ in range(k)]
        seat_p = [Clustered() for _ in range(k)]
        first_w, first_p = Clustered(), Clustered()
        for e in by_k[k]:
            cluster = (e.table, e.set)
            for s in range(k):
                seat_w[s].add(cluster, float(e.placings[s] == 1))
                seat_p[s].add(cluster, float(e.placings[s]))
            f = first_seat(e.deal_seed, k) if first_seat and e.deal_seed is not None else None  # with_seeds
            if f is not None:
                first_w.add(cluster, float(e.placings[f] == 1))
                first_p.add(cluster, float(e.placings[f]))
        out.append({"seats": k, "games": len(by_k[k]), "fair_win_rate": 1.0 / k,
                    "by_seat": [{"seat": s} | (summary(seat_w[s], seat_p[s]) or {}) for s in range(k)],
                    "first_player": summary(first_w, first_p)})
    return out


TOP_DRAWS = 4000  # posterior draws behind Top K%: its sampling error is under 1 point


def top_chances(strength: np.ndarray, cov: np.ndarray, top: int, seed: int) -> np.ndarray:
    """Per bot, the printed chance that it is in the top ``top`` (bench/top_k_calibration.py calibrates it)."""
    from arena.tournament import league_objective

    draws = league_objective.posterior_draws(strength, cov, TOP_DRAWS,
                                             league_objective.generator("arena-standings-top", seed, top))
    return league_objective.top_probability(draws, top)
