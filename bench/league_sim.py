"""A simulated league field for bench/league.py: known strengths, duplicate deal-sets, the league fit.

A field of ``n`` bots has log-strengths drawn from N(0, sd).  A table plays one deal-set of ``k``
games (the ``rotate`` seating: in game g bot i sits in seat (i + g) mod k), as the arena plays it: the
deal gives each seat an advantage drawn once per set (N(0, ``deal_sd``), shared by the set's games,
so the games of a table are correlated and each bot has every seat's luck once), and a game's places
are the Plackett-Luce order of strength + seat advantage + Gumbel noise.  Fits are the arena's
league fit (``ratings._map_newton``, the MAP under its prior), warm-started, on the games as arrays.

``play_format`` runs one format on one field to the largest budget and returns its error at every
budget: ``1 - tau`` against the true order, and the number of the true top K missing from the
fitted top K.  Formats: the balanced subset (``max_tables``), Swiss, adaptive, adaptive with uneven
seats (``uneven``: the whole order's objective), adaptive with ``top = K`` (``top``), and the
oracle's designs played as a sequence of tables (``oracle-tau``, ``oracle-top``: bench/league_oracle.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from arena.tournament import ratings
from arena.tournament.matchmaking import league_round
from arena.tournament.schedule import balanced_subset

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
    """The ``data`` ``ratings._map_newton`` reads: the rankings (best first) as one index matrix."""

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

    def fit(self) -> tuple[np.ndarray, np.ndarray]:
        data = _Games(self.n, np.array(self.rankings, dtype=np.int64))
        theta, hess = ratings._map_newton(data, np.ones(len(self.rankings)), ratings.LEAGUE_PRIOR, self.strength)
        self.strength, self.cov = theta, np.linalg.inv(hess)
        return theta, self.cov


def play_format(fmt: str, n: int, k: int, sd: float, seed: int, budgets: list[int], top: int, deal_sd: float,
                designs: dict[str, np.ndarray] | None = None,
                candidates: np.ndarray | None = None) -> tuple[list[float], list[int]]:
    """(1 - tau, top-K missing) after each budget (games) for ``fmt`` on field ``seed``."""
    taus: list[float] = []
    missing: list[int] = []

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
            fit = f.fit() if r else None
            kind = "adaptive" if fmt in ("uneven", "top") else fmt
            tables = league_round(kind, n, k, seed, r, fit, f.tables, byes, top=top if fmt == "top" else None,
                                  uneven=fmt == "uneven", idle=idle)
            seated = {b for t in tables for b in t}
            for b in range(n):
                byes[b] += b not in seated
                idle[b] = 0 if b in seated else idle[b] + 1
            for table in tables:
                f.play(table)
            r += 1
        measure(f)
    return taus, missing
