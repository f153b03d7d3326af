"""Ratings from journal entries: a pairwise fit on placings with cluster-robust 95% intervals, or bounds.

Owns the numbers behind the Rating and ±95% columns (docs/ARCHITECTURE.md
section 5), and ladder points; the leagues' own fit is ``league_fit.py``.

- Fit (``rating_fit``): every pair of seats of every game is one comparison
  (full rank-breaking), a tie half a win for each, and the strengths are the
  Bradley-Terry maximum likelihood, found by Newton's method.  Under
  Plackett-Luce the chance that one bot places above another is exactly the
  Bradley-Terry one, so the fit estimates the same strengths as a
  Plackett-Luce fit, and without ties it equals ``choix.opt_pairwise``
  (tested).  Ties are modelled, not broken: two bots with the same results get
  the same rating.  The only prior is ``FIT_PRIOR`` (sd 100 in log-strength),
  there so the Newton system is regular; it pulls no bot in measurably (the old
  spectral fit's pseudo-comparisons pulled a dominant bot in by ~200 Elo).
- Bounds: a bot that never lost a comparison (no loss, no tie) has no finite
  estimate, nor has one that never won.  ``_peel`` sets such bots aside round
  by round, the rest are fitted without them (so they do not move the others),
  and each set-aside bot gets a one-sided 95% bound (``bound`` ">" or "<"):
  the strength at which winning (losing) every one of its deal-sets against
  the hardest opponent there has a 5% chance, a deal-set counting as one
  comparison, so its games need not be independent.
- 95% interval: the sandwich (cluster-robust) covariance of the maximum
  likelihood, clustered by deal-set ((table, set): the seatings of one deal
  share its cards and are not independent), ``H^-1 (sum of the deal-sets'
  score outer products) H^-1`` with the small-sample factor G / (G - 1), for
  ratings centred on the mean; the half width is the t quantile with (the
  bot's deal-sets - 1) degrees of freedom times its standard error.  By
  simulation (bench/ratings_calibration.py) it covers 94-96% in balanced,
  unbalanced, wide (5 deal-sets) and one-dominant designs.  Fewer than 2
  deal-sets give no interval (``plus_minus`` None), as does no spread.
- Provisional: fewer than ``PROVISIONAL_GAMES`` games or
  ``PROVISIONAL_SETS`` deal-sets; the standings rank such bots after the rest.
- Order independence: entries are sorted by game index before fitting, so the
  result does not depend on the order of the journal, bit for bit.
- Scale: ``ELO_SCALE * strength``, centred so the mean over the rated bots
  (not the bounds) is 1500; a difference of 400 means the stronger bot
  finishes ahead 10 times out of 11 in a head-to-head.
- Ladder points per game: 56 for a win (placing 1, ties included), 34 for any
  other game played, 0 for a game the bot forfeited.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.tournament.journal import JournalEntry

ELO_SCALE = 400.0 / math.log(10.0)
ELO_MEAN = 1500.0
FIT_PRIOR = 1e-4     # the ratings' prior: sd 100 in log-strength, so weak it moves no bot by a measurable Elo
LEVEL = 0.95         # of the intervals, the bounds and the standings' tests
PROVISIONAL_SETS = 5   # a bot with fewer deal-sets than this, or fewer games than the next, is provisional
PROVISIONAL_GAMES = 10
POINTS_WIN = 56
POINTS_PLAYED = 34
POINTS_FORFEIT = 0


@dataclass(frozen=True)
class Rating:
    bot: str
    rating: float         # the estimate; for a bound, the bound itself
    low: float | None     # the 95% interval (both equal to the rating when there is none); None below a "<" bound
    high: float | None    # None above a ">" bound
    games: int
    deal_sets: int = 0    # deal-sets (table, set) the bot played in: the independent units
    bound: str | None = None  # ">": never lost, the rating is a 95% lower bound; "<": never won, an upper bound
    peel: int = 0         # for a bound: the round of ``_peel`` that set it aside (1 = first), which orders bounds

    def order_key(self) -> tuple[int, int, float]:
        """Sorts best first: bots that never lost (the first set aside first), then the rated by rating,
        then the bots that never won (the first set aside last)."""
        if self.bound == ">":
            return (0, self.peel, -self.rating)
        if self.bound == "<":
            return (2, -self.peel, -self.rating)
        return (1, 0, -self.rating)

    @property
    def plus_minus(self) -> float | None:
        """Half the width of the 95% interval (the ``±95%`` column); None for a bound or without an interval."""
        if self.low is None or self.high is None:
            return None
        width = self.high - self.low
        return width / 2.0 if width > 1e-6 else None

    @property
    def provisional(self) -> bool:
        """Too few games or deal-sets for the interval's normal approximation to be trusted."""
        return self.games < PROVISIONAL_GAMES or self.deal_sets < PROVISIONAL_SETS


def _tiebreak(game_id: str, bot: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{game_id}\0{bot}".encode(), digest_size=8).digest(), "big")


def ranking_of(entry: JournalEntry) -> list[str]:
    """Bot names best first; ties broken by ``_tiebreak``."""
    seats = range(len(entry.seats))
    if len(set(entry.placings)) == len(entry.placings):  # no tie: the hash would not change the order
        order = sorted(seats, key=lambda s: entry.placings[s])
    else:
        order = sorted(seats, key=lambda s: (entry.placings[s], _tiebreak(entry.game_id, entry.seats[s])))
    return [entry.seats[s] for s in order]


def usable_entries(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    """The placed games of two or more seats, in game index order (so no fit depends on the journal's order)."""
    good = [e for e in entries if len(e.seats) >= 2 and len(e.placings) == len(e.seats)]
    return sorted(good, key=lambda e: (e.index, e.game_id))


def bot_order(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None) -> list[str]:
    """``bots`` plus any bot seen in the entries (sorted), without duplicates."""
    names = list(dict.fromkeys(bots or ()))
    extra = sorted({b for e in entries for b in e.seats} - set(names))
    return names + extra


class _Comparisons:
    """Every pair of seats of every placed game as one comparison, summed by (deal-set, a, b) with a < b:
    ``n`` comparisons, ``w`` of them won by ``a`` (a tie is half a win each)."""

    def __init__(self, entries: list[JournalEntry], names: list[str]) -> None:
        pos = {b: i for i, b in enumerate(names)}
        sets = sorted({(e.table, e.set) for e in entries})
        spos = {k: i for i, k in enumerate(sets)}
        acc: dict[tuple[int, int, int], list[float]] = {}
        self.games = np.zeros(len(names), dtype=np.int64)
        for e in entries:
            c = spos[(e.table, e.set)]
            idx = [pos[b] for b in e.seats]
            self.games[idx] += 1
            for s, t in itertools.combinations(range(len(idx)), 2):
                a, b = idx[s], idx[t]
                ps, pt = e.placings[s], e.placings[t]
                won = 1.0 if ps < pt else 0.0 if ps > pt else 0.5
                if a > b:
                    a, b, won = b, a, 1.0 - won
                cell = acc.setdefault((c, a, b), [0.0, 0.0])
                cell[0] += 1.0
                cell[1] += won
        keys = np.array(list(acc), dtype=np.int64).reshape(-1, 3)
        vals = np.array(list(acc.values()), dtype=float).reshape(-1, 2)
        self.n_bots = len(names)
        self.sets = len(sets)
        self.c, self.a, self.b = keys[:, 0], keys[:, 1], keys[:, 2]
        self.n, self.w = vals[:, 0], vals[:, 1]
        played = np.zeros((self.sets, self.n_bots), dtype=bool)
        played[self.c, self.a] = played[self.c, self.b] = True
        self.bot_sets = played.sum(axis=0)  # deal-sets each bot played in

    def among(self, keep: np.ndarray) -> np.ndarray:
        """The rows whose both bots are in the boolean mask ``keep``."""
        return keep[self.a] & keep[self.b]


def _peel(cmp: _Comparisons) -> tuple[np.ndarray, list[list[tuple[int, str]]]]:
    """The bots whose strength has a finite maximum-likelihood estimate, and the rest in peeling rounds.

    A bot that lost no comparison with the bots still in play (no loss, no tie) has no finite estimate: the
    likelihood grows without end as it rises; nor has one that won none.  Each round sets those aside
    (">": never lost, "<": never won) and looks again at the rest.  When a round would set aside every bot
    left (two bots, one always ahead), only the never-lost ones go.
    """
    active = np.ones(cmp.n_bots, dtype=bool)
    rounds: list[list[tuple[int, str]]] = []
    while True:
        rows = cmp.among(active)
        a, b, n, w = cmp.a[rows], cmp.b[rows], cmp.n[rows], cmp.w[rows]
        wins = np.bincount(a, weights=w, minlength=cmp.n_bots) + np.bincount(b, weights=n - w, minlength=cmp.n_bots)
        total = np.bincount(a, weights=n, minlength=cmp.n_bots) + np.bincount(b, weights=n, minlength=cmp.n_bots)
        met = active & (total > 0)
        top = met & (wins >= total)
        bottom = met & (wins <= 0)
        if not (top | bottom).any():
            return active, rounds
        if not (active & ~top & ~bottom).any():
            bottom[:] = False
        rounds.append([(int(i), ">") for i in np.flatnonzero(top)] + [(int(i), "<") for i in np.flatnonzero(bottom)])
        active &= ~(top | bottom)


def _newton(a: np.ndarray, b: np.ndarray, n: np.ndarray, w: np.ndarray, m: int,
            prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Maximum of the pairwise (Bradley-Terry) log-likelihood plus a N(0, 1/prior) prior over ``m``
    log-strengths (``n`` comparisons of bot ``a`` with bot ``b``, ``w`` won by ``a``), and the negative
    Hessian there.  Concave: Newton with a halving line search."""
    theta = np.zeros(m)

    def value(t: np.ndarray) -> float:
        d = t[a] - t[b]
        return float(w @ -np.logaddexp(0.0, -d) + (n - w) @ -np.logaddexp(0.0, d)) - 0.5 * prior * float(t @ t)

    current = value(theta)
    hess = np.eye(m) * prior
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
        r = w - n * p
        grad = np.bincount(a, weights=r, minlength=m) - np.bincount(b, weights=r, minlength=m) - prior * theta
        v = n * p * (1.0 - p)
        hess = np.zeros((m, m))
        np.add.at(hess, (a, a), v)
        np.add.at(hess, (b, b), v)
        np.add.at(hess, (a, b), -v)
        np.add.at(hess, (b, a), -v)
        hess += prior * np.eye(m)
        step = np.linalg.solve(hess, grad)
        scale = 1.0
        while True:
            candidate = theta + scale * step
            new = value(candidate)
            if new >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        theta, current = candidate, new
        if float(np.abs(scale * step).max()) <= 1e-10:
            break
    return theta, hess


def _one_sided_bound(opponents: list[float], sign: float) -> float:
    """The log-strength ``x`` at which a bot that always beat (``sign`` +1) or always lost to (-1) the
    strongest (weakest) opponent of each of its deal-sets would do so with chance ``1 - LEVEL``: each
    deal-set counts as one comparison with its hardest opponent, so deal-sets' games need not be independent."""
    ms = np.asarray(opponents, dtype=float)
    target = math.log(1.0 - LEVEL)

    def loglik(x: float) -> float:
        return float(-np.logaddexp(0.0, -sign * (x - ms)).sum())

    lo, hi = float(ms.min()) - 60.0, float(ms.max()) + 60.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if (loglik(mid) < target) == (sign > 0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class RatingFit:
    """The ratings of ``names`` and, for the bots with a finite estimate, their covariance (Elo squared)."""

    names: list[str]
    ratings: dict[str, Rating]
    cov: np.ndarray     # n x n; rows and columns of bounded bots are 0
    df: np.ndarray      # per bot: its deal-sets less one (the t quantile's degrees of freedom)

    def ahead(self, upper: str, lower: str) -> float | None:
        """The chance that ``upper`` is truly stronger than ``lower`` (t on their rating difference with the
        deal-set-clustered covariance); None when either has no interval (bounds: see ``Rating.bound``)."""
        i, j = self.names.index(upper), self.names.index(lower)
        ru, rl = self.ratings[upper], self.ratings[lower]
        if ru.bound or rl.bound or ru.plus_minus is None or rl.plus_minus is None:
            return None
        var = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        if var <= 1e-12:
            return None
        from scipy.special import stdtr  # imported when needed: ~0.3 s of CPU that a one-deal-set run never needs

        return float(stdtr(max(1, min(self.df[i], self.df[j])), (ru.rating - rl.rating) / math.sqrt(var)))


def rating_fit(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None) -> RatingFit:
    """Ratings with 95% intervals (or one-sided bounds), keyed by bot in ``bot_order``, and their covariance."""
    es = usable_entries(entries)
    names = bot_order(es, bots)
    n = len(names)
    if not es:
        return RatingFit(names, {b: Rating(b, ELO_MEAN, ELO_MEAN, ELO_MEAN, 0) for b in names},
                         np.zeros((n, n)), np.zeros(n))
    cmp = _Comparisons(es, names)
    active, rounds = _peel(cmp)
    idx = np.flatnonzero(active)
    local = np.full(n, -1)
    local[idx] = np.arange(idx.size)
    rows = cmp.among(active)
    theta_a, hess = _newton(local[cmp.a[rows]], local[cmp.b[rows]], cmp.n[rows], cmp.w[rows], idx.size, FIT_PRIOR)
    centre = theta_a.mean() if idx.size else 0.0
    theta = np.full(n, np.nan)
    theta[idx] = theta_a - centre
    # cluster-robust (sandwich) covariance: bread = the Hessian, meat = the deal-sets' score sums
    cov = np.zeros((n, n))
    if idx.size:
        a, b, c = local[cmp.a[rows]], local[cmp.b[rows]], cmp.c[rows]
        p = 1.0 / (1.0 + np.exp(-(theta_a[a] - theta_a[b])))
        r = cmp.w[rows] - cmp.n[rows] * p
        scores = np.zeros((cmp.sets, idx.size))
        np.add.at(scores, (c, a), r)
        np.add.at(scores, (c, b), -r)
        g = int(np.unique(c).size)
        meat = scores.T @ scores * (g / (g - 1) if g > 1 else 1.0)
        inv = np.linalg.inv(hess)
        centring = np.eye(idx.size) - 1.0 / idx.size
        cov[np.ix_(idx, idx)] = ELO_SCALE ** 2 * (centring @ inv @ meat @ inv @ centring)
    # the t quantile's degrees of freedom: the deal-sets of a bot's comparisons with rated bots, less one
    rated_sets = np.zeros((cmp.sets, n), dtype=bool)
    rated_sets[cmp.c[rows], cmp.a[rows]] = rated_sets[cmp.c[rows], cmp.b[rows]] = True
    df = np.maximum(rated_sets.sum(axis=0) - 1, 0)
    value = ELO_MEAN + ELO_SCALE * theta
    bounds: dict[int, str] = {}
    peel = {i: k + 1 for k, peeled in enumerate(rounds) for i, _ in peeled}
    for peeled in reversed(rounds):  # the last set aside met the rated bots: their bounds come first
        for i, sign in peeled:
            known = ~np.isnan(theta)
            hard: dict[int, float] = {}
            for k in np.flatnonzero((cmp.a == i) | (cmp.b == i)):
                j = int(cmp.b[k] if cmp.a[k] == i else cmp.a[k])
                if known[j]:
                    x = float(theta[j])
                    c0 = int(cmp.c[k])
                    hard[c0] = max(hard.get(c0, x), x) if sign == ">" else min(hard.get(c0, x), x)
            ref = list(hard.values()) or [0.0]  # met only bots set aside in its own round: the mean for want of one
            bounds[i] = sign
            x = _one_sided_bound(ref, 1.0 if sign == ">" else -1.0)
            theta[i] = x
            value[i] = ELO_MEAN + ELO_SCALE * x
    out: dict[str, Rating] = {}
    if any(d >= 1 for d in df):
        from scipy.special import stdtrit  # Student's t quantile; imported when an interval needs it (~0.3 s)
    for i, bot in enumerate(names):
        games, sets = int(cmp.games[i]), int(cmp.bot_sets[i])
        v = float(value[i]) if not math.isnan(value[i]) else ELO_MEAN
        if i in bounds:
            lo, hi = (v, None) if bounds[i] == ">" else (None, v)
            out[bot] = Rating(bot, v, lo, hi, games, sets, bounds[i], peel[i])
            continue
        half = float(stdtrit(df[i], 0.5 + LEVEL / 2) * math.sqrt(max(cov[i, i], 0.0))) if df[i] >= 1 else 0.0
        out[bot] = Rating(bot, v, v - half, v + half, games, sets)
    return RatingFit(names, out, cov, df)


def rate(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None) -> dict[str, Rating]:
    """Ratings with 95% intervals or bounds, keyed by bot, in ``bot_order`` (``rating_fit``'s ratings)."""
    return rating_fit(entries, bots).ratings


def fit(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None) -> dict[str, float]:
    """Point ratings on the Elo-like scale (mean 1500 over the bots with a finite estimate; a bound's value)."""
    return {b: r.rating for b, r in rate(entries, bots).items()}


def ladder_points(entries: Iterable[JournalEntry]) -> dict[str, int]:
    """Ladder points by bot: 56 per win, 34 per other game, 0 per forfeited game."""
    out: dict[str, int] = {}
    for e in entries:
        for s, bot in enumerate(e.seats):
            if s in e.forfeited:
                pts = POINTS_FORFEIT
            elif s < len(e.placings) and e.placings[s] == 1:
                pts = POINTS_WIN
            else:
                pts = POINTS_PLAYED
            out[bot] = out.get(bot, 0) + pts
    return out
