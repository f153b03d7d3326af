"""Estimates after a sequential stop: the median-unbiased drift and its interval (stagewise ordering).

Owns the corrected estimate ``arena match`` prints next to the naive one (docs/ARCHITECTURE.md
section 5).  An SPRT stops when its statistic has run far, so the plain estimate at the stop is
biased away from zero (an early stop needs a lucky run).  Both tests of ``arena.tournament.sprt``
are, in normalized units, a random walk ``W_n = S_n - c n`` with unit variance per pair and drift
``mu = delta - c``, stopped at ``W >= a`` (H1), ``W <= -b`` (H0) or at the last pair ``N``.  The
outcomes are ordered by the stagewise (Siegmund) ordering: an H1 stop at pair n is more extreme the
earlier it came, an H0 stop likewise downwards, a stop at the cap by its ``W``.  ``P_mu(outcome at
least as high as the one seen)`` rises with ``mu``; the estimate is the ``mu`` where it is 1/2
(median-unbiased) and the 95% interval where it is 0.025 and 0.975 (Siegmund 1978; Whitehead,
"The Design and Analysis of Sequential Clinical Trials", ch. 5).  The walk is approximated by a
Brownian motion with the boundaries moved out by ``RHO`` to account for the overshoot of a
discretely watched walk (Siegmund's correction), whose exit probabilities have the image series
below.  ``bench/ab_test.py`` and ``tests/tournament/test_poststop.py`` measure the coverage on simulated matches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RHO = 0.5826      # E[overshoot] / sd of a Gaussian random walk's step (Siegmund's constant)
GRID = 500        # quadrature points in time (x4, geometric) and in space; checked against closed forms


@dataclass(frozen=True)
class Design:
    """The stopped walk: H1 at ``W >= a``, H0 at ``W <= -b`` (a, b > 0), at most ``cap`` pairs."""

    a: float
    b: float
    cap: int


def _images(span: float, n: float) -> range:
    """Terms each side of the image series: enough for the spread sqrt(n) to be many spans inside."""
    k = 3 + math.ceil(4.0 * math.sqrt(n) / span)
    return range(-k, k + 1)


def _log_phi(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    return -y * y / (2.0 * t) - 0.5 * np.log(2.0 * math.pi * t)


def exit_up_by(mu: float, a: float, b: float, n: float) -> float:
    """P(a Brownian motion with drift ``mu`` from 0 leaves (-b, a) through ``a``, by time ``n``)."""
    if n <= 0:
        return 0.0
    t = np.geomspace(1e-3, n, 4 * GRID)   # geometric: the mass may sit anywhere from very early to n
    span = a + b
    total = np.zeros_like(t)
    for k in _images(span, n):
        y = a - 2.0 * k * span
        # the flux through a of the killed density: exp(mu a - mu^2 t / 2) (y / t) phi_t(y)
        expo = mu * a - mu * mu * t / 2.0 + _log_phi(np.full_like(t, y), t)
        total += (y / t) * np.exp(np.minimum(expo, 700.0))
    return float(np.clip(np.trapezoid(total, t), 0.0, 1.0))  # nothing leaves before t = 0.001


def alive_above(mu: float, a: float, b: float, n: float, w: float) -> float:
    """P(the motion has left neither side by time ``n`` and is at or above ``w`` then)."""
    lo = max(w, -b)
    if lo >= a:
        return 0.0
    x = np.linspace(lo, a, GRID)
    span = a + b
    dens = np.zeros_like(x)
    for k in _images(span, n):
        dens += np.exp(_log_phi(x - 2.0 * k * span, np.full_like(x, n))) \
            - np.exp(_log_phi(x - 2.0 * a - 2.0 * k * span, np.full_like(x, n)))
    dens *= np.exp(np.minimum(mu * x - mu * mu * n / 2.0, 700.0))
    return float(np.clip(np.trapezoid(np.maximum(dens, 0.0), x), 0.0, 1.0))


def at_least(mu: float, design: Design, verdict: str | None, n: int, w: float) -> float:
    """P_mu(an outcome at least as high as: ``verdict`` "H1"/"H0"/None at pair ``n`` with walk ``w``)."""
    a, b = design.a + RHO, design.b + RHO
    if verdict == "H1":
        return exit_up_by(mu, a, b, n)
    if verdict == "H0":
        return 1.0 - exit_up_by(-mu, b, a, n)
    return exit_up_by(mu, a, b, n) + alive_above(mu, a, b, n, w)


def _solve(f: float, design: Design, verdict: str | None, n: int, w: float, lo: float, hi: float) -> float:
    """The drift at which ``at_least`` equals ``f`` (it rises with the drift), by bisection."""
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if at_least(mid, design, verdict, n, w) < f:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-5:
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Corrected:
    """The median-unbiased drift and its 95% interval, in the walk's units (add ``c`` for delta)."""

    mu: float
    low: float
    high: float


def corrected(design: Design, verdict: str | None, n: int, w: float) -> Corrected:
    """Median-unbiased drift and 95% interval of a walk stopped by ``design`` with ``verdict`` at ``n``, ``w``."""
    n = max(1, n)
    reach = 10.0 * (1.0 + (abs(w) + design.a + design.b) / math.sqrt(n))
    lo, hi = -reach, reach
    return Corrected(_solve(0.5, design, verdict, n, w, lo, hi), _solve(0.025, design, verdict, n, w, lo, hi),
                     _solve(0.975, design, verdict, n, w, lo, hi))


def expected_more(mu: float, design: Design, w: float) -> float:
    """Expected further pairs until the walk at ``w`` with drift ``mu`` leaves (-b, a) (no cap)."""
    a, b = design.a + RHO, design.b + RHO
    w = min(max(w, -b), a)
    if abs(mu) < 1e-9:
        return (a - w) * (w + b)
    u = -2.0 * mu
    if u < 0:
        up = math.expm1(u * (w + b)) / math.expm1(u * (a + b))
    else:  # the same ratio, written so that nothing overflows
        up = math.exp(-u * (a - w)) * -math.expm1(-u * (w + b)) / -math.expm1(-u * (a + b))
    return max(0.0, (up * (a - w) - (1.0 - up) * (w + b)) / mu)
