"""Ratings from journal entries: a batch Plackett-Luce fit on placings, with bootstrap CIs.

Owns the numbers behind the Rating and ±95% columns (docs/ARCHITECTURE.md
section 5), and ladder points.

- Fit: Plackett-Luce maximum likelihood by iterative Luce Spectral Ranking
  (the algorithm of ``choix.ilsr_rankings``, regularized by ``alpha``; the
  stationary distribution comes from ``choix.utils.statdist``).  It is
  re-implemented here, vectorized with numpy and with a weight per game, so the
  bootstrap can reweight games instead of rebuilding data; with unit weights it
  equals ``choix.ilsr_rankings`` (tested).
- League fit (``league_fit``, Swiss and adaptive formats): the maximum a
  posteriori log-strengths under an isotropic normal prior of precision
  ``LEAGUE_PRIOR`` (``choix.opt_rankings`` with ``alpha = LEAGUE_PRIOR / 2``, tested), found by
  Newton's method, with the posterior covariance (the inverse Hessian).  A
  league's games are local (bots of similar standing), and on such a sparse
  comparison graph the spectral iteration creeps (its Markov chain mixes
  slowly along the order) and its pseudo-comparisons between every pair pull
  distant bots together; Newton converges in a few steps whatever the graph,
  and the covariance is what the adaptive rounds sample from and what the
  Settled column reads (``matchmaking``).
- Order independence: entries are sorted by game index before fitting, so the
  result does not depend on the order of the journal, bit for bit.
- Ties in placings: the tied seats are ordered by a hash of (game id, bot
  name): deterministic, independent of seat and journal order, and not biased
  for or against any bot name on average.
- Scale: ``ELO_SCALE * strength`` centred so the mean over bots is 1500; a
  difference of 400 means the stronger bot finishes ahead 10 times out of 11
  in a head-to-head (Plackett-Luce pairwise).
- 95% interval: seeded bootstrap over duplicate deal-sets (games grouped by
  (table, set), i.e. by deal seed, resampled with replacement), 2.5 and 97.5
  percentiles of the refitted rating.  Fewer than 2 deal-sets give no
  interval at all (``plus_minus`` is None), as does a bootstrap without spread:
  an interval of width 0 would claim a certainty the data do not have.
- Ladder points per game: 56 for a win (placing 1, ties included), 34 for any
  other game played, 0 for a game the bot forfeited.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from choix.utils import exp_transform, log_transform, statdist

from arena.tournament.journal import JournalEntry

ELO_SCALE = 400.0 / math.log(10.0)
ELO_MEAN = 1500.0
DEFAULT_ALPHA = 0.1
LEAGUE_PRIOR = 0.01  # precision of the league fit's prior: sd 10 in log-strength, about 1,740 Elo
DEFAULT_RESAMPLES = 200
POINTS_WIN = 56
POINTS_PLAYED = 34
POINTS_FORFEIT = 0


@dataclass(frozen=True)
class Rating:
    bot: str
    rating: float
    low: float          # 2.5th bootstrap percentile
    high: float         # 97.5th bootstrap percentile
    games: int

    @property
    def plus_minus(self) -> float | None:
        """Half the width of the 95% interval (the ``±95%`` column); None when there is no interval."""
        width = self.high - self.low
        return width / 2.0 if width > 1e-6 else None  # refits of identical data differ by rounding only


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


def _usable(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    good = [e for e in entries if len(e.seats) >= 2 and len(e.placings) == len(e.seats)]
    return sorted(good, key=lambda e: (e.index, e.game_id))


def bot_order(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None) -> list[str]:
    """``bots`` plus any bot seen in the entries (sorted), without duplicates."""
    names = list(dict.fromkeys(bots or ()))
    extra = sorted({b for e in entries for b in e.seats} - set(names))
    return names + extra


class _Data:
    """Rankings as index matrices grouped by length, plus each game's deal-set group."""

    def __init__(self, entries: list[JournalEntry], names: list[str]) -> None:
        pos = {b: i for i, b in enumerate(names)}
        by_len: dict[int, list[int]] = {}
        rows: list[list[int]] = []
        for i, e in enumerate(entries):
            rows.append([pos[b] for b in ranking_of(e)])
            by_len.setdefault(len(e.seats), []).append(i)
        self.n = len(names)
        self.blocks = [(np.array([rows[i] for i in idx], dtype=np.int64), np.array(idx)) for idx in by_len.values()]
        keys = sorted({(e.table, e.set) for e in entries})
        gpos = {k: i for i, k in enumerate(keys)}
        self.group = np.array([gpos[(e.table, e.set)] for e in entries], dtype=np.int64)
        self.groups = len(keys)
        self.played = np.zeros((len(entries), self.n), dtype=bool)
        for i, r in enumerate(rows):
            self.played[i, r] = True


def _lsr_step(data: _Data, weights: np.ndarray, game_w: np.ndarray, alpha: float) -> np.ndarray:
    n = data.n
    flat = np.zeros(n * n)
    for g, idx in data.blocks:
        w = game_w[idx]
        gw = weights[g]
        suffix = np.cumsum(gw[:, ::-1], axis=1)[:, ::-1]
        k = g.shape[1]
        for i in range(k - 1):
            val = w / suffix[:, i]
            winners = g[:, i]
            for p in range(i + 1, k):
                flat += np.bincount(g[:, p] * n + winners, weights=val, minlength=n * n)
    chain = flat.reshape(n, n) + alpha
    chain -= np.diag(chain.sum(axis=1))
    return log_transform(statdist(chain))


def _ilsr(data: _Data, game_w: np.ndarray, alpha: float, max_iter: int = 200, tol: float = 1e-8,
          start: np.ndarray | None = None) -> np.ndarray:
    params = _lsr_step(data, np.ones(data.n) if start is None else exp_transform(start), game_w, alpha)
    for _ in range(max_iter):
        new = _lsr_step(data, exp_transform(params), game_w, alpha)
        if np.linalg.norm(new - params, ord=1) <= tol:
            return new
        params = new
    return params


def _map_newton(data: _Data, game_w: np.ndarray, prior: float, start: np.ndarray | None = None,
                max_iter: int = 100, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """MAP log-strengths under N(0, I / prior) and the Hessian of the negative log-posterior there.

    The log-likelihood of a ranking is the sum over its stages of ``theta[winner] - logsumexp(theta[rest])``;
    it is concave, so Newton's method with a halving line search converges from any start.
    """
    n = data.n
    theta = np.zeros(n) if start is None else np.asarray(start, dtype=float).copy()

    def evaluate(theta: np.ndarray, hessian: bool) -> tuple[float, np.ndarray, np.ndarray]:
        value = -0.5 * prior * float(theta @ theta)
        grad = -prior * theta
        flat = np.zeros(n * n)
        for g, idx in data.blocks:
            w = game_w[idx]
            t = theta[g]
            for i in range(g.shape[1] - 1):
                rest = g[:, i:]
                top = t[:, i:].max(axis=1, keepdims=True)
                e = np.exp(t[:, i:] - top)
                total = e.sum(axis=1)
                value += float(w @ (t[:, i] - top[:, 0] - np.log(total)))
                p = e / total[:, None]
                wp = w[:, None] * p
                grad += np.bincount(g[:, i], weights=w, minlength=n)
                grad -= np.bincount(rest.ravel(), weights=wp.ravel(), minlength=n)
                if hessian:
                    flat += np.bincount((rest * (n + 1)).ravel(), weights=wp.ravel(), minlength=n * n)
                    cross = (rest[:, :, None] * n + rest[:, None, :]).ravel()
                    flat -= np.bincount(cross, weights=(wp[:, :, None] * p[:, None, :]).ravel(), minlength=n * n)
        return value, grad, flat.reshape(n, n) + prior * np.eye(n)

    value, grad, hess = evaluate(theta, True)
    for _ in range(max_iter):
        step = np.linalg.solve(hess, grad)
        scale = 1.0
        while True:
            candidate = theta + scale * step
            new_value = evaluate(candidate, False)[0]
            if new_value >= value - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        theta = candidate
        value, grad, hess = evaluate(theta, True)
        if float(np.abs(scale * step).max()) <= tol:
            break
    return theta, hess


def league_fit(entries: Iterable[JournalEntry], names: Sequence[str], prior: float = LEAGUE_PRIOR,
               start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A league's log-strengths of ``names`` (MAP under the normal prior) and their posterior covariance.

    ``start``: log-strengths to iterate from (a warm start: the same fit, faster).
    """
    es = _usable(entries)
    data = _Data(es, list(names))
    theta, hess = _map_newton(data, np.ones(len(es)), prior, start)
    return theta, np.linalg.inv(hess)


def strengths(entries: Iterable[JournalEntry], names: Sequence[str], alpha: float = DEFAULT_ALPHA,
              weights: Sequence[float] | None = None, start: np.ndarray | None = None) -> np.ndarray:
    """Plackett-Luce log-strengths (centred) of ``names``, in that order.

    ``start``: log-strengths to iterate from (a warm start: the same fit to within the tolerance, faster).
    """
    es = _usable(entries)
    data = _Data(es, list(names))
    w = np.ones(len(es)) if weights is None else np.asarray(weights, dtype=float)
    return _ilsr(data, w, alpha, start=start)


def _to_elo(s: np.ndarray) -> np.ndarray:
    return ELO_MEAN + ELO_SCALE * (s - s.mean())


def fit(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None,
        alpha: float = DEFAULT_ALPHA) -> dict[str, float]:
    """Point ratings on the Elo-like scale (mean 1500)."""
    es = _usable(entries)
    names = bot_order(es, bots)
    if not names:
        return {}
    if not es:
        return dict.fromkeys(names, ELO_MEAN)
    return dict(zip(names, _to_elo(strengths(es, names, alpha)).tolist()))


def rate(entries: Iterable[JournalEntry], bots: Sequence[str] | None = None, alpha: float = DEFAULT_ALPHA,
         resamples: int = DEFAULT_RESAMPLES, seed: int = 0, league: bool = False,
         fit: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Rating]:
    """Ratings with seeded bootstrap 95% intervals over deal-sets, keyed by bot, in ``bot_order``.

    ``league``: fit with the league fit (``league_fit``) instead of the spectral one (``alpha`` unused);
    ``fit``: that fit of these entries and bots, when the caller already has it (not fitted again).
    """
    es = _usable(entries)
    names = bot_order(es, bots)
    if not names:
        return {}
    if not es:
        return {b: Rating(b, ELO_MEAN, ELO_MEAN, ELO_MEAN, 0) for b in names}
    data = _Data(es, names)

    def fitted(w: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
        if not league:
            return _ilsr(data, w, alpha)
        # a resample's refit is one Newton step from the full data's MAP (the one-step bootstrap):
        # several times cheaper than iterating to convergence, and close to it: the start is near the maximum
        return _map_newton(data, w, LEAGUE_PRIOR, start, max_iter=100 if start is None else 1)[0]

    best = fit[0] if league and fit is not None else fitted(np.ones(len(es)))
    point = _to_elo(best)
    games = data.played.sum(axis=0)
    rng = np.random.default_rng(seed)
    samples = np.full((resamples, data.n), np.nan)
    for r in range(resamples):
        counts = rng.multinomial(data.groups, np.full(data.groups, 1.0 / data.groups))
        w = counts[data.group].astype(float)
        present = (data.played & (w[:, None] > 0)).any(axis=0)
        samples[r] = np.where(present, _to_elo(fitted(w, best)), np.nan)
    out: dict[str, Rating] = {}
    for i, b in enumerate(names):
        col = samples[:, i][~np.isnan(samples[:, i])]
        informative = col.size and data.groups >= 2  # one deal-set resampled is the same deal-set
        lo, hi = (np.percentile(col, [2.5, 97.5]).tolist() if informative else (point[i], point[i]))
        out[b] = Rating(b, float(point[i]), float(min(lo, point[i])), float(max(hi, point[i])), int(games[i]))
    return out


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
