"""The best schedule there is for a field whose strengths are known: the yardstick of bench/league.py.

The oracle knows the true log-strengths and chooses the share ``w`` of the games each table gets, among
local tables (4 bots within ``WINDOW`` places of each other in the true order: a table of bots far apart
says almost nothing about the order).  It minimises the expected error of the fit after ``G`` games,
in the normal approximation: the fit's covariance is ``(G M(w))^-1``, ``M(w) = sum_t w_t I_t`` with
``I_t`` a game's expected Plackett-Luce Fisher information at table t (exact, over the k! orders), and
the error is the expected number of pairs the fit puts in the wrong order, ``sum Phi(-|d_ij| / s_ij)``,
over every pair (``tau``) or over the pairs across the top-K cut (``top``).  The error is convex in
``w`` and is minimised by Frank-Wolfe (the table of steepest descent, a line search for the step).

The design is then *played* (bench/league_sim.py) like any format, so its cost is measured the same
way: the oracle is a bound of the kind "no schedule that knows less does much better", not a theorem
(the normal approximation, a fixed ``G``, the local tables).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfc

from arena.tournament.league_objective import WINDOW as WINDOW  # a candidate table's bots: within this many places
from arena.tournament.league_objective import local_tables as candidates  # the local tables of an order
from arena.tournament.league_objective import table_information as table_information  # exact PL information

ITERS = 150  # Frank-Wolfe steps
STEPS = 0.5 ** np.arange(1, 15)  # the line search's step sizes


def _moment(w: np.ndarray, cand: np.ndarray, info: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n * n)
    idx = (cand[:, :, None] * n + cand[:, None, :]).ravel()
    m += np.bincount(idx, weights=(w[:, None, None] * info).ravel(), minlength=n * n)
    return m.reshape(n, n)


def _error(m: np.ndarray, theta: np.ndarray, mask: np.ndarray, games: float, prior: float) -> tuple[float, np.ndarray]:
    """The expected count of misordered pairs (of ``mask``), and the pair weights of its gradient."""
    n = len(theta)
    inv = np.linalg.inv(games * m + prior * np.eye(n))
    dg = np.diag(inv)
    var = np.maximum(dg[:, None] + dg[None, :] - 2.0 * inv, 1e-15)
    s = np.sqrt(var)
    gap = np.abs(theta[:, None] - theta[None, :])
    z = gap / s
    wrong = 0.5 * erfc(z / math.sqrt(2.0))
    value = float((wrong * mask).sum())
    density = np.exp(-0.5 * z ** 2) / math.sqrt(2.0 * math.pi)
    a = mask * density * gap / (2.0 * var * s)  # d Phi(-gap / s) / d var
    return value, a


def design(theta: np.ndarray, k: int, objective: str, top: int, games: float, prior: float = 0.01,
           iters: int = ITERS) -> tuple[np.ndarray, np.ndarray]:
    """(candidate tables, the oracle's share of the games of each) for ``objective`` ``tau`` or ``top``."""
    n = len(theta)
    cand = candidates(theta, k)
    info = table_information(theta[cand])
    if objective == "tau":
        mask = np.triu(np.ones((n, n)), 1)
    else:
        best = np.zeros(n, dtype=bool)
        best[np.argsort(-theta, kind="stable")[:top]] = True
        mask = (best[:, None] & ~best[None, :]).astype(float)
    # start from the tables of k consecutive places (sparse and connected: every bot is measured)
    order = np.argsort(-theta, kind="stable")
    start = {tuple(sorted(order[i:i + k].tolist())) for i in range(n - k + 1)}
    w = np.array([tuple(c) in start for c in cand.tolist()], dtype=float)
    w /= w.sum()
    value, a = _error(_moment(w, cand, info, n), theta, mask, games, prior)
    for _ in range(iters):
        m = _moment(w, cand, info, n)
        inv = np.linalg.inv(games * m + prior * np.eye(n))
        sym = a + a.T
        lap = np.diag(sym.sum(axis=1)) - sym
        b = inv @ lap @ inv  # d value / d w_t = -games * <I_t, b> (up to the symmetric split)
        score = np.einsum("tij,tij->t", info, b[cand[:, :, None], cand[:, None, :]])
        t = int(np.argmax(score))
        best_value, best_w, best_a = value, w, a
        for step in STEPS:
            trial = (1.0 - step) * w
            trial[t] += step
            v, ta = _error(_moment(trial, cand, info, n), theta, mask, games, prior)
            if v < best_value:
                best_value, best_w, best_a = v, trial, ta
        if best_w is w:
            break
        value, w, a = best_value, best_w, best_a
    return cand, w


def expected_error(theta: np.ndarray, cand: np.ndarray, w: np.ndarray, games: float, objective: str,
                   top: int, prior: float = 0.01) -> float:
    """The normal approximation's expected misordered pairs of a design after ``games`` games (a check)."""
    n = len(theta)
    if objective == "tau":
        mask = np.triu(np.ones((n, n)), 1)
    else:
        best = np.zeros(n, dtype=bool)
        best[np.argsort(-theta, kind="stable")[:top]] = True
        mask = (best[:, None] & ~best[None, :]).astype(float)
    return _error(_moment(w, cand, table_information(theta[cand]), n), theta, mask, games, prior)[0]
