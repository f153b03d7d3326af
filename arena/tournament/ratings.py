"""Ratings from journal entries: a batch Plackett-Luce fit on placings, with bootstrap CIs.

Owns the numbers behind the Rating and ±95% columns (docs/ARCHITECTURE.md
section 5), and ladder points.

- Fit: Plackett-Luce maximum likelihood by iterative Luce Spectral Ranking
  (the algorithm of ``choix.ilsr_rankings``, regularized by ``alpha``; the
  stationary distribution comes from ``choix.utils.statdist``).  It is
  re-implemented here, vectorized with numpy and with a weight per game, so the
  bootstrap can reweight games instead of rebuilding data; with unit weights it
  equals ``choix.ilsr_rankings`` (tested).
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
         resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict[str, Rating]:
    """Ratings with seeded bootstrap 95% intervals over deal-sets, keyed by bot, in ``bot_order``."""
    es = _usable(entries)
    names = bot_order(es, bots)
    if not names:
        return {}
    if not es:
        return {b: Rating(b, ELO_MEAN, ELO_MEAN, ELO_MEAN, 0) for b in names}
    data = _Data(es, names)
    point = _to_elo(_ilsr(data, np.ones(len(es)), alpha))
    games = data.played.sum(axis=0)
    rng = np.random.default_rng(seed)
    samples = np.full((resamples, data.n), np.nan)
    for r in range(resamples):
        counts = rng.multinomial(data.groups, np.full(data.groups, 1.0 / data.groups))
        w = counts[data.group].astype(float)
        present = (data.played & (w[:, None] > 0)).any(axis=0)
        samples[r] = np.where(present, _to_elo(_ilsr(data, w, alpha)), np.nan)
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


def league_alpha(bots: int) -> float:
    """The regularization for a field of ``bots``: ``DEFAULT_ALPHA / bots`` (README, Leagues).

    ``alpha`` adds a pseudo-comparison between every pair of bots; with n bots that is n^2 of them,
    which drown a schedule of local comparisons (Swiss, adaptive), so it shrinks with the field.
    """
    return DEFAULT_ALPHA / max(1, bots)
