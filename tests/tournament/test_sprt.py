"""The SPRT of `arena match` on simulated duplicate pairs of known strength: error rates within alpha and beta."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.tournament import sprt

TESTS = 2000          # simulated SPRTs per case
MAX_PAIRS = 4000      # a cap no test of these cases comes near on average; an unfinished test counts as no H1
ALPHA = BETA = 0.05


def independent_games(elo: float, draws: float = 0.2) -> np.ndarray:
    """Pentanomial probabilities of two independent games at ``elo`` (a win, draw or loss each)."""
    s = sprt.score_of_elo(elo)
    w, d, loss = s - draws / 2, draws, 1 - s - draws / 2
    game = np.array([loss, d, w])
    return np.convolve(game, game)


def duplicate_pairs(elo: float) -> np.ndarray:
    """Strongly correlated pairs (the deal decides most games, so most pairs split 1-1), tilted to ``elo``'s mean."""
    base = np.array([0.05, 0.10, 0.70, 0.10, 0.05])
    target = sprt.score_of_elo(elo)
    lo, hi = -50.0, 50.0
    for _ in range(200):  # exponential tilt with the mean score per game equal to the target
        lam = (lo + hi) / 2
        p = base * np.exp(lam * sprt.PAIR_SCORES)
        p /= p.sum()
        lo, hi = (lam, hi) if (p * sprt.PAIR_SCORES).sum() < target else (lo, lam)
    return p


def simulate(probs: np.ndarray, test: sprt.Sprt, seed: int) -> tuple[float, float, float]:
    """Run TESTS independent SPRTs on pairs drawn from ``probs``: (share H1, share H0, mean pairs)."""
    assert abs(probs.sum() - 1) < 1e-12 and (probs >= 0).all()
    rng = np.random.default_rng(seed)
    counts = np.zeros((TESTS, 5))
    verdict = np.zeros(TESTS, dtype=np.int8)   # 0 running, 1 H1, -1 H0
    length = np.zeros(TESTS)
    for n in range(1, MAX_PAIRS + 1):
        running = np.flatnonzero(verdict == 0)
        if running.size == 0:
            break
        counts[running, rng.choice(5, size=running.size, p=probs)] += 1
        value = sprt.llr(counts[running], test.elo0, test.elo1)
        assert isinstance(value, np.ndarray)
        verdict[running[value >= test.upper]] = 1
        verdict[running[value <= test.lower]] = -1
        length[running] = n
    return float((verdict == 1).mean()), float((verdict == -1).mean()), float(length.mean())


def margin(p: float) -> float:
    """Three binomial standard errors of a rate ``p`` over TESTS tests."""
    return 3 * math.sqrt(p * (1 - p) / TESTS)


@pytest.mark.slow  # about a second each: 2,000 tests of about 100 pairs
@pytest.mark.parametrize("model", [independent_games, duplicate_pairs])
def test_false_positive_rate_is_within_alpha_at_elo0(model) -> None:
    test = sprt.Sprt(elo0=0, elo1=50, alpha=ALPHA, beta=BETA)
    h1, h0, pairs = simulate(model(test.elo0), test, seed=1)
    assert h1 <= ALPHA + margin(ALPHA), (h1, pairs)
    assert h0 >= 1 - ALPHA - BETA - margin(BETA)  # nearly every test ended, with H0
    assert pairs < 1000


@pytest.mark.slow
@pytest.mark.parametrize("model", [independent_games, duplicate_pairs])
def test_power_is_about_one_minus_beta_at_elo1(model) -> None:
    test = sprt.Sprt(elo0=0, elo1=50, alpha=ALPHA, beta=BETA)
    h1, h0, pairs = simulate(model(test.elo1), test, seed=2)
    assert h1 >= 1 - BETA - margin(BETA), (h1, pairs)
    assert h0 <= BETA + margin(BETA)


@pytest.mark.slow
def test_a_shifted_hypothesis_is_tested_at_its_own_elo0() -> None:
    test = sprt.Sprt(elo0=20, elo1=70, alpha=ALPHA, beta=BETA)
    h1, _, _ = simulate(independent_games(20), test, seed=3)
    assert h1 <= ALPHA + margin(ALPHA)
    h1_far, _, _ = simulate(independent_games(-30), test, seed=4)  # well below elo0: hardly ever H1
    assert h1_far < 0.01


def test_llr_matches_the_mean_variance_approximation_for_many_pairs() -> None:
    counts = [100, 300, 1000, 350, 120]
    n = np.array(counts, dtype=float)
    mean = (n * sprt.PAIR_SCORES).sum() / n.sum()
    var = (n * (sprt.PAIR_SCORES - mean) ** 2).sum() / n.sum()
    s0, s1 = sprt.score_of_elo(0), sprt.score_of_elo(10)
    approx = n.sum() * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    assert sprt.llr(counts, 0, 10) == pytest.approx(approx, rel=0.01)
    # ten times the pairs in the same proportions: ten times the evidence
    assert sprt.llr([10 * c for c in counts], 0, 10) == pytest.approx(10 * sprt.llr(counts, 0, 10), rel=1e-6)


def test_a_few_clean_sweeps_are_not_yet_proof() -> None:
    # two pairs won 2-0 at elo0 = 0 vs elo1 = 10: about log(s1 / s0) each, far from the bound
    value = sprt.llr([0, 0, 0, 0, 2], 0, 10)
    assert 0 < value < 0.1
    assert value == pytest.approx(2 * math.log(sprt.score_of_elo(10) / sprt.score_of_elo(0)), rel=0.05)
    assert sprt.llr([2, 0, 0, 0, 0], 0, 10) < 0
    assert sprt.llr([0, 0, 0, 0, 0], 0, 10) == 0.0


def test_bounds_and_decisions() -> None:
    test = sprt.Sprt(elo0=0, elo1=10, alpha=0.05, beta=0.1)
    assert test.lower == pytest.approx(math.log(0.1 / 0.95))
    assert test.upper == pytest.approx(math.log(0.9 / 0.05))
    assert test.decide(test.upper) == sprt.H1 and test.decide(test.lower) == sprt.H0
    assert test.decide(0.0) is None


@pytest.mark.parametrize("kwargs,word", [({"elo0": 10, "elo1": 10}, "elo0 must be below elo1"),
                                         ({"alpha": 0}, "alpha must be between 0 and 1"),
                                         ({"beta": 1.5}, "beta must be between 0 and 1"),
                                         ({"alpha": 0.6, "beta": 0.5}, r"alpha \+ beta must be below 1"),
                                         ({"elo1": math.inf}, "finite")])
def test_parameters_that_make_no_test_are_refused(kwargs, word) -> None:
    with pytest.raises(ValueError, match=word):
        sprt.Sprt(**kwargs)


def test_estimate_of_the_elo_difference() -> None:
    est = sprt.estimate([10, 30, 100, 35, 12])
    assert est.pairs == 187 and est.elo == pytest.approx(sprt.elo_of_score(est.score))
    assert est.low is not None and est.high is not None and est.low < est.elo < est.high
    assert est.los is not None and 0.5 < est.los < 1
    sweep = sprt.estimate([0, 0, 0, 0, 5])   # no spread: no interval, no LOS, an infinite point estimate
    assert sweep.elo == math.inf and sweep.low is None and sweep.los is None
    assert sprt.estimate([0, 0, 0, 0, 0]).low is None
    assert sprt.pair_outcome(1, 0) == 2 and sprt.pair_outcome(1, 0.5) == 3 and sprt.pair_outcome(0, 0) == 0
    assert sprt.elo_of_score(sprt.score_of_elo(123.0)) == pytest.approx(123.0)


# -- the margin test: nElo on the pairs' bounded score differences ------------------------------------

MARGIN_TESTS = 600
MARGIN_CAP = 3000


def heavy_diffs(rng: np.random.Generator, shape: tuple[int, ...], shift: float) -> np.ndarray:
    """Pair score differences with heavy tails (Student t, 1.5 degrees of freedom: no variance), in points."""
    return 40.0 * (rng.standard_t(1.5, size=shape) + shift)


def shift_of_nelo(nelo: float) -> float:
    """The shift of ``heavy_diffs`` at which the bounded outcome has normalized Elo ``nelo`` (bisection, 400k draws)."""
    rng = np.random.default_rng(99)
    base = rng.standard_t(1.5, size=400_000)
    lo, hi = 0.0, 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        x = sprt.pair_values(40.0 * (base + mid))
        lo, hi = (mid, hi) if sprt.nelo_of_delta(float(x.mean() / x.std())) < nelo else (lo, mid)
    return (lo + hi) / 2


def simulate_margin(shift: float, test: sprt.Sprt, seed: int) -> tuple[float, float, float]:
    """MARGIN_TESTS margin SPRTs on heavy-tailed differences: (share H1, share H0, mean pairs)."""
    rng = np.random.default_rng(seed)
    diffs = heavy_diffs(rng, (MARGIN_TESTS, MARGIN_CAP), shift)
    verdict = np.zeros(MARGIN_TESTS, dtype=np.int8)
    length = np.full(MARGIN_TESTS, MARGIN_CAP)
    for n in range(1, MARGIN_CAP + 1):
        running = np.flatnonzero(verdict == 0)
        if running.size == 0:
            break
        value = np.asarray(sprt.margin_llr(diffs[running, :n], test.elo0, test.elo1))
        for v, mask in ((1, value >= test.upper), (-1, value <= test.lower)):
            verdict[running[mask]] = v
            length[running[mask]] = n
    return float((verdict == 1).mean()), float((verdict == -1).mean()), float(length.mean())


def margin_bound(p: float) -> float:
    return 3 * math.sqrt(p * (1 - p) / MARGIN_TESTS)


@pytest.mark.slow  # a few seconds: 600 tests of about 60 pairs, twice
def test_margin_test_keeps_its_error_rates_on_heavy_tailed_differences() -> None:
    test = sprt.Sprt(elo0=0, elo1=80, alpha=ALPHA, beta=BETA)
    h1, h0, pairs = simulate_margin(0.0, test, seed=5)
    assert h1 <= ALPHA + margin_bound(ALPHA), (h1, pairs)
    assert h0 >= 1 - ALPHA - margin_bound(ALPHA)   # every test ended
    h1, h0, pairs = simulate_margin(shift_of_nelo(80), test, seed=6)
    assert h1 >= 1 - BETA - margin_bound(BETA), (h1, pairs)
    assert h0 <= BETA + margin_bound(BETA)
    # the expected length at elo1 from the design: (1 - beta) a / drift per pair, drift = delta1^2 / 2
    d1 = sprt.delta_of_nelo(80)
    assert 0.5 * (2 * test.upper / d1 ** 2) < pairs < 1.5 * (2 * test.upper / d1 ** 2)


def test_margin_test_is_scale_free_and_one_huge_score_cannot_decide() -> None:
    rng = np.random.default_rng(7)
    d = heavy_diffs(rng, (200,), 0.1)
    assert sprt.margin_llr(d, 0, 20) == pytest.approx(sprt.margin_llr(d * 37.5, 0, 20))
    x = sprt.pair_values(d)
    assert x.min() >= -1 and x.max() <= 1
    # an outlier a million times the others counts as one clean win, no more
    wild = np.append(d, 1e9)
    assert sprt.margin_llr(wild, 0, 20) - sprt.margin_llr(np.append(d, np.abs(d).max()), 0, 20) == pytest.approx(0, abs=0.05)
    # a few pairs alike are not yet proof of anything
    assert 0 < sprt.margin_llr([50.0, 50.0, 50.0], 0, 20) < 0.5
    assert sprt.margin_llr([], 0, 20) == 0.0
    assert sprt.margin_llr([0.0] * 50, 0, 20) < 0   # identical play: evidence for H0


def test_placing_test_generalizes_to_a_k_seat_pair_score() -> None:
    counts4 = [1, 2, 3, 4, 30, 4, 3, 2, 1, 0, 0, 0, 1]    # 4 seats: pair scores in steps of 1/12
    assert sprt.support_of(13)[1] == pytest.approx(1 / 12)
    est = sprt.estimate(counts4)
    assert est.score == pytest.approx((np.array(counts4) * sprt.support_of(13)).sum() / sum(counts4))
    assert sprt.llr(counts4, 0, 10) < 0 < sprt.llr(counts4[::-1], 0, 10)
    with pytest.raises(ValueError, match="pentanomial"):
        sprt.llr([1, 2, 3], 0, 10)
