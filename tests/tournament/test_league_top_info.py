"""`uneven = true`'s round (``league_objective.information_round``): local tables, the posterior-averaged
misordering gradient, and a round's tables with the cap and the floor (in-process, no bot is started)."""

from __future__ import annotations

import math

import numpy as np

from arena.tournament import league_objective as lo
from bench import league_oracle


def test_local_tables_hold_k_bots_within_the_window_and_cover_every_bot() -> None:
    theta = np.random.default_rng(1).normal(0, 2, 30)
    place = np.argsort(np.argsort(-theta))
    tables = lo.local_tables(theta, 4)
    assert tables.shape[1] == 4 and len({tuple(t) for t in tables.tolist()}) == len(tables)
    assert all(len(set(t)) == 4 and np.ptp(place[t]) < lo.WINDOW for t in tables.tolist())
    assert set(tables.ravel().tolist()) == set(range(30))
    assert league_oracle.candidates is lo.local_tables  # the oracle's candidates are the same tables


def test_misorder_gradient_is_the_oracles_pair_weight_averaged_over_the_posterior() -> None:
    m, var = 0.7, 0.3
    cov = np.diag([var / 2, var / 2])
    b = lo.misorder_gradient(np.array([m, 0.0]), cov)
    # B = cov L cov, L the Laplacian of the pair weights: the weight is -L[0, 1]
    lap = np.linalg.inv(cov) @ b @ np.linalg.inv(cov)
    a = -lap[0, 1]
    s = math.sqrt(var)
    d = np.random.default_rng(2).normal(m, s, 200_000)  # the true gap under the posterior
    z = np.abs(d) / s
    want = float(np.mean(np.exp(-z ** 2 / 2) / math.sqrt(2 * math.pi) * np.abs(d))) / (2 * var * s)
    assert abs(a - want) < 0.01 * want
    far = lo.misorder_gradient(np.array([8.0, 0.0]), cov)
    assert abs(far[0, 1]) < 1e-6 * abs(b[0, 1])  # a pair far apart is settled: nothing to gain


def test_information_round_seats_distinct_bots_under_the_cap_and_keeps_the_floor() -> None:
    rng = np.random.default_rng(3)
    n, k = 40, 4
    theta = rng.normal(0, 2, n)
    cov = np.diag(rng.uniform(0.05, 0.5, n))
    idle = [0] * n
    settled = int(np.argmax(theta))  # far from everyone: it would not be chosen
    cov[settled, settled] = 1e-4
    idle[settled] = lo.IDLE_MAX
    tables = lo.information_round(theta, cov, k, idle, 2, k)
    assert len(tables) == n // k and all(len(set(t)) == k for t in tables)
    counts = np.bincount([b for t in tables for b in t], minlength=n)
    assert counts.max() <= 2 and counts[settled] >= 1
    unforced = lo.information_round(theta, cov, k, [0] * n, 2, k)
    assert settled not in {b for t in unforced for b in t}  # seated above by the floor alone
    assert tables == lo.information_round(theta, cov, k, idle, 2, k)  # a function of its arguments
    # the uncertain bots play more than the sure ones
    sd = np.sqrt(np.diag(cov))
    sure, unsure = sd < np.quantile(sd, 0.25), sd > np.quantile(sd, 0.75)
    assert counts[unsure].mean() > counts[sure].mean()
