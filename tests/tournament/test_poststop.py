"""Estimates after a sequential stop (arena.tournament.poststop): closed forms, and coverage on simulated SPRTs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.tournament import poststop


@pytest.mark.parametrize("mu", [-0.05, 0.0, 0.03])
def test_exit_probabilities_match_the_closed_form(mu: float) -> None:
    a, b = 30.0, 20.0
    ever = b / (a + b) if mu == 0 else (1 - math.exp(2 * mu * b)) / (math.exp(-2 * mu * a) - math.exp(2 * mu * b))
    assert poststop.exit_up_by(mu, a, b, 1e5) == pytest.approx(ever, abs=1e-4)
    # by a finite time less has left; what has not left is still alive between the bounds
    early = poststop.exit_up_by(mu, a, b, 300) + poststop.exit_up_by(-mu, b, a, 300)
    assert early + poststop.alive_above(mu, a, b, 300, -b) == pytest.approx(1.0, abs=2e-3)
    # with no drift the expected exit time is a b
    assert poststop.expected_more(0.0, poststop.Design(a - poststop.RHO, b - poststop.RHO, 0), 0.0) == pytest.approx(a * b)


def stopped_walks(mu: float, runs: int, design: poststop.Design, seed: int) -> list[tuple[str | None, int, float]]:
    """Gaussian random walks with drift ``mu`` stopped as an SPRT stops: (verdict, pairs, W)."""
    rng = np.random.default_rng(seed)
    walks = np.cumsum(rng.normal(mu, 1.0, (runs, design.cap)), axis=1)
    out: list[tuple[str | None, int, float]] = []
    for w in walks:
        up, down = np.flatnonzero(w >= design.a), np.flatnonzero(w <= -design.b)
        iu = int(up[0]) if up.size else design.cap
        idn = int(down[0]) if down.size else design.cap
        verdict, n = ("H1", iu + 1) if iu < idn else ("H0", idn + 1) if idn < iu else (None, design.cap)
        out.append((verdict, n, float(w[n - 1])))
    return out


@pytest.mark.slow  # about 10 s: 200 stopped walks, three root findings each
def test_the_corrected_interval_covers_and_the_estimate_is_median_unbiased() -> None:
    design = poststop.Design(a=24.0, b=24.0, cap=1500)   # an SPRT at alpha = beta = 0.05 with delta1 = 0.12
    mu = 0.045                                            # a true drift that stops early on a lucky run
    runs = stopped_walks(mu, 200, design, seed=11)
    got = [poststop.corrected(design, v, n, w) for v, n, w in runs]
    cover = np.mean([g.low <= mu <= g.high for g in got])
    assert cover >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / len(runs)), cover
    # the corrected estimate is above the truth about half the time; the naive one is biased away from 0
    above = np.mean([g.mu > mu for g in got])
    assert abs(above - 0.5) <= 3 * math.sqrt(0.25 / len(runs)), above
    naive = np.array([w / n for _, n, w in runs])
    assert np.mean(naive) > mu + 0.01                     # what the stop does to the plain estimate
    assert abs(np.median([g.mu for g in got]) - mu) < abs(np.mean(naive) - mu)
