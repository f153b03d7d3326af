"""A sequential probability ratio test on duplicate pairs, the statistics of ``arena match``.

Owns the numbers ``arena match`` prints and stops on (docs/ARCHITECTURE.md section 5).

The unit is a duplicate pair: the two games of one deal-set with the seats
swapped.  A pair's outcome is bot A's score over its two games (win 1, draw
1/2, loss 0), one of five values 0, 1/2, 1, 3/2, 2: the pentanomial counts
``[LL, LD, WL+DD, WD, WW]``.  The pair is the independent unit: the two games
of a deal-set share their cards, so counting them as two independent games
would understate the noise.

The test is the generalized SPRT that fastchess and Fishtest run on pentanomial
data, with logistic Elo: H0 says A's expected score per game is
``s0 = 1 / (1 + 10 ** (-elo0 / 400))``, H1 says ``s1`` (same with ``elo1``).
The log-likelihood ratio compares the most likely pentanomial distributions
with mean ``s1`` and with mean ``s0``, given the observed frequencies
(M. Van den Bergh, "Comments on Normalized Elo", proposition 1.1: the
constrained maximum is ``p_i = phat_i / (1 + theta (a_i - s))`` with theta the
root of ``sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0``).  For many pairs it
equals the familiar ``N (s1 - s0) (2 mean - s0 - s1) / (2 var)`` on the pair
scores' mean and variance; unlike that approximation it stays honest after a
handful of pairs (two pairs won 2-0 are not yet proof of anything).  Empty
counts are regularized to 1e-3, as fastchess does, so the root always exists.

The test stops with H1 at ``LLR >= log((1 - beta) / alpha)`` and with H0 at
``LLR <= log(beta / (1 - alpha))``.  ``tests/tournament/test_sprt.py`` checks on simulated
pairs of known strength that it accepts H1 at most ``alpha`` of the time when
H0 is true, and about ``1 - beta`` of the time when H1 is.

Everything here is pure arithmetic; ``llr`` takes counts of shape ``(5,)`` or
``(m, 5)`` so a simulation can run many tests at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

OUTCOMES = 5                                               # pair scores 0, 1/2, 1, 3/2, 2 (A's points)
PAIR_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])        # the same per game, as the logistic model scores
OUTCOME_NAMES = ("0-2", "0.5-1.5", "1-1", "1.5-0.5", "2-0")
REGULARIZE = 1e-3
Z95 = 1.959963984540054
H0, H1 = "H0", "H1"


def score_of_elo(elo: float) -> float:
    """Expected score per game of a bot ``elo`` logistic Elo points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference of an expected score per game; +-inf at 1 and 0."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def pair_outcome(a_first: float, a_second: float) -> int:
    """The pentanomial index (0 to 4) of a pair from A's score in each game (1, 0.5 or 0)."""
    return round(2 * (a_first + a_second))


def _mle(phat: np.ndarray, s: float, support: np.ndarray = PAIR_SCORES) -> np.ndarray:
    """The most likely distribution over PAIR_SCORES with mean ``s``, given frequencies ``phat`` (rows).

    Newton's method on theta inside the bracket where every probability stays
    positive; a step that leaves the bracket goes 90% of the way to its end
    instead, so a root next to a pole (a lopsided sample) is reached in a few
    steps rather than by halving.
    """
    c = support - s                                       # a_i - s: negative below s, positive above
    lo = np.full(phat.shape[:-1], -1.0 / c[-1])           # poles of the last and the first term
    hi = np.full(phat.shape[:-1], -1.0 / c[0])
    theta = np.zeros(phat.shape[:-1])
    for _ in range(100):
        d = 1.0 + theta[..., None] * c
        f = (phat * c / d).sum(axis=-1)                   # decreasing in theta
        df = -(phat * c * c / (d * d)).sum(axis=-1)
        lo = np.where(f > 0, theta, lo)
        hi = np.where(f > 0, hi, theta)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = theta - f / df
        inside = (step > lo) & (step < hi)
        new = np.where(inside, step, np.where(step >= hi, theta + 0.9 * (hi - theta), theta + 0.9 * (lo - theta)))
        converged = np.all(np.abs(new - theta) <= 1e-13 * np.maximum(1.0, np.abs(theta)))
        theta = new
        if converged:
            break
    p: np.ndarray = phat / (1.0 + theta[..., None] * c)
    return p


def support_of(outcomes: int) -> np.ndarray:
    """The pair scores (per game, 0 to 1 in equal steps) of a placing test with ``outcomes`` values."""
    return np.linspace(0.0, 1.0, outcomes)


def llr(counts: Sequence[float] | np.ndarray, elo0: float, elo1: float) -> float | np.ndarray:
    """Log-likelihood ratio of H1 (elo1) over H0 (elo0) for pentanomial ``counts`` [LL, LD, WL+DD, WD, WW].

    ``counts`` may have leading axes (many tests at once); no pairs at all give 0.  At a k-seat table
    the counts have ``4 (k - 1) + 1`` values (``support_of``): the pair's placing score in equal steps.
    """
    n = np.asarray(counts, dtype=float)
    if n.shape[-1] < 5 or (n.shape[-1] - 1) % 4:
        raise ValueError(f"expected {OUTCOMES} pentanomial counts, got shape {n.shape}")
    support = support_of(n.shape[-1])
    reg = np.where(n > 0, n, REGULARIZE)
    total = reg.sum(axis=-1)
    phat = reg / total[..., None]
    p0 = _mle(phat, score_of_elo(elo0), support)
    p1 = _mle(phat, score_of_elo(elo1), support)
    out = total * (phat * (np.log(p1) - np.log(p0))).sum(axis=-1)
    out = np.where(n.sum(axis=-1) > 0, out, 0.0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Estimate:
    """A's score per game and logistic Elo over B, with a 95% interval, from the pairs."""

    pairs: int
    score: float
    elo: float
    low: float | None    # 95% interval of the Elo difference (may be -inf / +inf); None without spread
    high: float | None
    los: float | None    # likelihood that A is the stronger (normal approximation); None without spread


def estimate(counts: Sequence[int]) -> Estimate:
    """Elo of A over B from pentanomial counts, the interval from the pair scores' variance."""
    n = np.asarray(counts, dtype=float)
    support = support_of(len(n))
    pairs = int(n.sum())
    if pairs == 0:
        return Estimate(0, 0.5, 0.0, None, None, None)
    mean = float((n * support).sum() / pairs)
    var = float((n * (support - mean) ** 2).sum() / pairs)
    se = math.sqrt(var / pairs)
    elo = elo_of_score(mean) + 0.0  # no -0.0
    if se == 0:  # every pair ended alike: no spread to make an interval of
        return Estimate(pairs, mean, elo, None, None, None)
    los = 0.5 * (1.0 + math.erf((mean - 0.5) / (se * math.sqrt(2.0))))
    return Estimate(pairs, mean, elo, elo_of_score(mean - Z95 * se), elo_of_score(mean + Z95 * se), los)


@dataclass(frozen=True)
class Sprt:
    """The test's parameters and its bounds; ``ValueError`` (one sentence) for parameters that make no test."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not all(math.isfinite(x) for x in (self.elo0, self.elo1, self.alpha, self.beta)):
            raise ValueError("elo0, elo1, alpha and beta must be finite numbers")
        if self.elo0 >= self.elo1:
            raise ValueError(f"elo0 must be below elo1, got elo0 = {self.elo0:g} and elo1 = {self.elo1:g}")
        for name, x in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < x < 1.0:
                raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {x:g}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"alpha + beta must be below 1, got {self.alpha + self.beta:g}")

    @property
    def lower(self) -> float:
        """At or below this LLR, H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """At or above this LLR, H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[int]) -> float:
        return float(llr(counts, self.elo0, self.elo1))

    def decide(self, value: float) -> str | None:
        """H1, H0, or None to go on, for an LLR ``value``."""
        if value >= self.upper:
            return H1
        if value <= self.lower:
            return H0
        return None


# -- the margin test: a GSPRT in normalized Elo on the pair's bounded score difference -------------
#
# A pair's score difference d is bot A's margin in its game minus bot B's in its twin (same deal, same
# seat, same opponents).  Scores are heavy-tailed (one big hand swings a game), so d is made bounded
# and robust before it is tested: x = clip(d / (CLIP * median |d|), -1, 1), the median over the
# pairs so far (a symmetric function of them, so the order in which pairs finish does not matter);
# x = sign(d) while the median is 0.  The test is on the normalized effect delta = E[x] / sd(x), the
# quantity Fishtest's "normalized Elo" measures: nElo = delta * NELO_PER_DELTA, which is logistic Elo
# for independent games without draws.  Being scale-free, the pairs a test needs depend only on the
# nElo difference, never on the variant's point scale or on how often the deal decides.
# LLR = n (delta1 - delta0) (2 delta_hat - delta0 - delta1) / 2 (the normal GSPRT with the plug-in
# variance); delta_hat counts two pseudo-pairs at +1 and -1 so that a few pairs alike prove nothing.

NELO_PER_DELTA = 800.0 / (math.sqrt(2.0) * math.log(10.0))   # nElo of a normalized per-pair effect of 1
CLIP = 3.0                                                     # x saturates at CLIP median absolute d


def delta_of_nelo(nelo: float) -> float:
    return nelo / NELO_PER_DELTA


def nelo_of_delta(delta: float) -> float:
    return delta * NELO_PER_DELTA


def pair_values(diffs: Sequence[float] | np.ndarray) -> np.ndarray:
    """The bounded outcome x in [-1, 1] of each pair score difference (last axis: the pairs so far)."""
    d = np.asarray(diffs, dtype=float)
    if d.shape[-1] == 0:
        return d
    scale = CLIP * np.median(np.abs(d), axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        x: np.ndarray = np.where(scale > 0, np.clip(d / scale, -1.0, 1.0), np.sign(d))
    return x


def normalized(diffs: Sequence[float] | np.ndarray) -> tuple[int, np.ndarray]:
    """(pairs, delta_hat): the estimated normalized effect of the pairs' differences (leading axes kept)."""
    x = pair_values(diffs)
    n = x.shape[-1]
    mean = x.sum(axis=-1) / (n + 2)
    var = ((x * x).sum(axis=-1) + 2.0) / (n + 2) - mean * mean
    return n, mean / np.sqrt(var)


def margin_llr(diffs: Sequence[float] | np.ndarray, elo0: float, elo1: float) -> float | np.ndarray:
    """The margin test's log-likelihood ratio of H1 (elo1 nElo) over H0 (elo0 nElo); 0 without pairs."""
    n, dhat = normalized(diffs)
    d0, d1 = delta_of_nelo(elo0), delta_of_nelo(elo1)
    out = n * (d1 - d0) * (2.0 * dhat - d0 - d1) / 2.0
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class MarginEstimate:
    """The naive normalized-Elo estimate of the pairs (biased after a sequential stop: see poststop)."""

    pairs: int
    nelo: float
    low: float | None     # naive 95% interval; None before two pairs
    high: float | None
    mean_diff: float      # mean raw score difference per pair (A minus B), in the variant's points
    drift: float          # delta_hat, the per-pair normalized effect


def margin_estimate(diffs: Sequence[float]) -> MarginEstimate:
    d = np.asarray(diffs, dtype=float)
    n, dhat = normalized(d)
    delta = float(dhat) if n else 0.0
    mean_diff = float(d.mean()) if n else 0.0
    if n < 2:
        return MarginEstimate(n, nelo_of_delta(delta), None, None, mean_diff, delta)
    half = Z95 * math.sqrt((1.0 + delta * delta / 2.0) / n)   # the standard error of a t-ratio
    return MarginEstimate(n, nelo_of_delta(delta), nelo_of_delta(delta - half), nelo_of_delta(delta + half),
                          mean_diff, delta)
