"""The league fit: MAP Plackett-Luce log-strengths and their posterior covariance.

What the Swiss and adaptive formats' matchmaking, the top-K chances and the Settled column stand
on (``ratings.py`` has the ratings the standings print).  The maximum a posteriori Plackett-Luce
log-strengths under an isotropic normal prior of precision ``LEAGUE_PRIOR`` (``choix.opt_rankings``
with ``alpha = LEAGUE_PRIOR / 2``, tested), by Newton's method, with the posterior covariance (the
inverse Hessian) that the adaptive rounds sample from (``matchmaking``).  Its tied seats are
ordered by a hash of (game id, bot name) (``ratings.ranking_of``), and entries are sorted by game
index first, so the result does not depend on the journal's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from arena.tournament.journal import JournalEntry
from arena.tournament.ratings import ranking_of, usable_entries

LEAGUE_PRIOR = 0.01  # precision of the prior: sd 10 in log-strength, about 1,740 Elo


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


def map_newton(data: _Data, game_w: np.ndarray, prior: float, start: np.ndarray | None = None,
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
    es = usable_entries(entries)
    data = _Data(es, list(names))
    theta, hess = map_newton(data, np.ones(len(es)), prior, start)
    return theta, np.linalg.inv(hess)
