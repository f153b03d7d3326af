"""A simulated league field for bench/league.py: known strengths, duplicate deal-sets, the league fit.

A field of ``n`` bots has log-strengths drawn from N(0, sd).  A table plays one deal-set of ``k``
games (the ``rotate`` seating: in game g bot i sits in seat (i + g) mod k), as the arena plays it: the
deal gives each seat an advantage drawn once per set (N(0, ``deal_sd``), shared by the set's games,
so the games of a table are correlated and each bot has every seat's luck once), and a game's places
are the Plackett-Luce order of strength + seat advantage + Gumbel noise.  Every format is measured by
the arena's league fit (``league_fit.map_newton``, the MAP under its prior) of all its games; the fit
that chooses a league's next round is that fit updated round by round (``Field.round_fit``: a Laplace
filter, refitted exactly whenever the games double), which keeps a round's cost to its own games.

``play_format`` runs one format on one field to the largest budget and returns its error at every
budget: ``1 - tau`` against the true order, and the number of the true top K missing from the
fitted top K.  Formats: the balanced subset (``max_tables``), Swiss, adaptive, adaptive with
``uneven = true`` (``uneven``: the whole order, tables chosen by expected information), adaptive with
``top = K`` (``top``), and the oracle's designs played as a sequence of tables (``oracle-tau``, ``oracle-top``: bench/league_oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from arena.tournament import league_fit
from arena.tournament.designs import balanced_subset
from arena.tournament.matchmaking import league_round

LEAGUE_FORMATS = ("swiss", "adaptive", "uneven", "top")


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (O(n^2): fine for a few hundred bots)."""
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    iu = np.triu_indices(len(a), 1)
    x, y = da[iu], db[iu]
    denom = np.sqrt(float(np.count_nonzero(x)) * float(np.count_nonzero(y)))
    return float((x * y).sum() / denom) if denom else 0.0


def top_missing(fitted: np.ndarray, truth: np.ndarray, top: int) -> int:
    """How many of the true top ``top`` the fitted top ``top`` leaves out."""
    true_top = set(np.argsort(-truth, kind="stable")[:top].tolist())
    return top - len(true_top & set(np.argsort(-fitted, kind="stable")[:top].tolist()))


class _Games:
    """The ``data`` ``league_fit.map_newton`` reads: the rankings (best first) as one index matrix."""

    def __init__(self, n: int, rankings: np.ndarray) -> None:
        self.n = n
        self.blocks = [(rankings, np.arange(len(rankings)))]


@dataclass
class Field:
    """One field: the truth, the games so far (tables and rankings), and the fit."""

    n: int
    k: int
    truth: np.ndarray
    deal_sd: float
    rng: np.random.Generator
    rankings: list[np.ndarray] = field(default_factory=list)
    tables: list[tuple[int, ...]] = field(default_factory=list)  # one entry per game
    strength: np.ndarray | None = None
    cov: np.ndarray | None = None
    running: tuple[np.ndarray, np.ndarray] | None = None  # the round fit: (MAP, Hessian) of the games folded
    folded: int = 0
    anchored: int = 0  # games at the round fit's last exact refit

    @classmethod
    def make(cls, n: int, k: int, sd: float, seed: int, deal_sd: float, stream: str) -> Field:
        truth = np.random.default_rng([seed, 0]).normal(0.0, sd, n)  # the same field for every format
        rng = np.random.default_rng([seed, 1 + sum(map(ord, stream))])
        return cls(n, k, truth, deal_sd, rng)

    @property
    def games(self) -> int:
        return len(self.tables)

    def play(self, table: tuple[int, ...]) -> None:
        """One deal-set at ``table``: k games, each bot in every seat once, the seats' luck shared."""
        idx = np.array(table)
        k = len(idx)
        luck = self.rng.normal(0.0, self.deal_sd, k)
        for g in range(k):
            score = self.truth[idx] + luck[(np.arange(k) + g) % k] + self.rng.gumbel(size=k)
            self.rankings.append(idx[np.argsort(-score)])
            self.tables.append(tuple(sorted(table)))

    def round_fit(self, steps: int = 3) -> tuple[np.ndarray, np.ndarray]:
        """The fit that chooses the next round, updated with the games since the last (a Laplace filter: the
        last round fit's normal approximation is the prior of the new games), so a round costs its own
        games, not all of them; it is refitted exactly whenever the games have doubled since the last exact
        fit (a filter from a field barely known drifts).  With every game folded at once it is the league fit
        exactly (tested)."""
        if self.running is None or len(self.rankings) >= 2 * self.anchored:
            theta, cov = self.fit()
            self.running = (theta, np.linalg.inv(cov))
            self.folded = self.anchored = len(self.rankings)
            return theta, cov
        theta0, h0 = self.running
        new = np.array(self.rankings[self.folded:], dtype=np.int64)
        theta = theta0.copy()
        for _ in range(steps):
            grad, hess = pl_derivatives(self.n, new, theta)
            grad -= h0 @ (theta - theta0)
            hess += h0
            theta = theta + np.linalg.solve(hess, grad)
        hess = pl_derivatives(self.n, new, theta)[1] + h0
        self.running, self.folded = (theta, hess), len(self.rankings)
        return theta, np.linalg.inv(hess)

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        """The league fit (``league_fit.map_newton``) of every game so far: what every format is measured by."""
        data = _Games(self.n, np.array(self.rankings, dtype=np.int64))
        theta, hess = league_fit.map_newton(data, np.ones(len(self.rankings)),  # type: ignore[arg-type]  # n, blocks
                                            league_fit.LEAGUE_PRIOR, self.strength)
        self.strength, self.cov = theta, np.linalg.inv(hess)
        return theta, self.cov


def pl_derivatives(n: int, rankings: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and negative Hessian of the Plackett-Luce log-likelihood of ``rankings`` (rows, best first)."""
    grad = np.zeros(n)
    flat = np.zeros(n * n)
    k = rankings.shape[1] if len(rankings) else 0
    for i in range(k - 1):
        rest = rankings[:, i:]
        t = theta[rest]
        e = np.exp(t - t.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        grad += np.bincount(rankings[:, i], minlength=n) - np.bincount(rest.ravel(), weights=p.ravel(), minlength=n)
        flat += np.bincount((rest * (n + 1)).ravel(), weights=p.ravel(), minlength=n * n)
        cross = (rest[:, :, None] * n + rest[:, None, :]).ravel()
        flat -= np.bincount(cross, weights=(p[:, :, None] * p[:, None, :]).ravel(), minlength=n * n)
    return grad, flat.reshape(n, n)


def play_format(fmt: str, n: int, k: int, sd: float, seed: int, budgets: list[int], top: int, deal_sd: float,
                designs: dict[str, np.ndarray] | None = None,
                candidates: np.ndarray | None = None) -> tuple[list[float], list[float]]:
    """(1 - tau, top-K missing) after each budget (games) for ``fmt`` on field ``seed``."""
    taus: list[float] = []
    missing: list[float] = []

    def measure(f: Field) -> None:
        s, _ = f.fit()
        taus.append(1.0 - kendall_tau(s, f.truth))
        missing.append(top_missing(s, f.truth, top))

    if fmt == "subset":
        for games in budgets:
            f = Field.make(n, k, sd, seed, deal_sd, f"{fmt}{games}")
            for table in balanced_subset(n, k, games // k, seed):
                f.play(table)
            measure(f)
        return taus, missing
    f = Field.make(n, k, sd, seed, deal_sd, fmt)
    if fmt.startswith("oracle"):
        assert designs is not None and candidates is not None
        w = designs[fmt]
        counts = np.zeros(len(w))
        for games in budgets:
            while f.games < games:
                # the table furthest behind its share of the design: every prefix follows the design
                t = int(np.argmax(w * (counts.sum() + 1) - counts))
                counts[t] += 1
                f.play(tuple(int(b) for b in candidates[t]))
            measure(f)
        return taus, missing
    byes = [0] * n
    idle = [0] * n
    r = 0
    for games in budgets:
        while f.games < games:
            fit = f.round_fit() if r else None
            kind = "adaptive" if fmt in ("uneven", "top") else fmt
            tables = league_round(kind, n, k, seed, r, fit, f.tables, byes, top=top if fmt == "top" else None,
                                  uneven=fmt == "uneven", idle=idle, table_games=k)
            seated = {b for t in tables for b in t}
            for b in range(n):
                byes[b] += b not in seated
                idle[b] = 0 if b in seated else idle[b] + 1
            for table in tables:
                f.play(table)
            r += 1
        measure(f)
    return taus, missing
