"""The standings' numbers mean what they say, by simulation with known truth (bench/ratings_calibration.py).

Sizes run in a second each; bounds allow the Monte Carlo error (about 3 standard errors).  The bench
prints the full figures.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.tournament import ratings
from bench.ratings_calibration import Design, coverage, los_alarms, noise_rates, round_robin

ELO = ratings.ELO_SCALE


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
def test_intervals_cover_at_their_level_in_a_balanced_round_robin() -> None:
    d = Design("balanced", tuple(np.linspace(-250, 250, 4) / ELO), round_robin(4, 2), 10)
    c = coverage(d, 150, seed=1)  # 600 intervals: standard error about 1 point
    assert 0.92 <= c["coverage"] <= 0.98, c


@pytest.mark.slow  # seconds of CPU: a Monte Carlo of hundreds of fits
def test_intervals_cover_a_wide_field_with_few_deal_sets() -> None:
    # the old bootstrap over 5 deal-sets covered 77% where it said 95%
    rng = np.random.default_rng(5)
    d = Design("wide", tuple(rng.normal(0.0, 250.0, 12) / ELO), round_robin(12, 2), 5)
    c = coverage(d, 40, seed=2)  # 480 intervals
    assert 0.915 <= c["coverage"] <= 0.985, c


@pytest.mark.slow  # seconds of CPU: a Monte Carlo of hundreds of fits
def test_a_dominant_bot_is_not_pulled_in_its_interval_covers_and_its_bound_holds() -> None:
    # the old fit's pseudo-comparisons pulled a far stronger bot in by ~200 Elo: its own coverage was 0%
    d = Design("dominant", (700 / ELO, 50 / ELO, 0.0, -50 / ELO), round_robin(4, 2), 12)
    c = coverage(d, 150, seed=3)
    assert 0.92 <= c["coverage"] <= 0.98, c
    assert c["top_coverage"] >= 0.88, c  # about 125 intervals of the dominant bot alone
    assert c["bounds"] > 0 and c["bounds_hold"] >= 0.95, c  # some runs it never lost: a bound, which holds


@pytest.mark.slow
def test_los_of_equal_bots_at_four_seats_with_deal_effects_rarely_says_95() -> None:
    d = Design("4 seats", (0.0, 0.0, 0.5, -0.5), ((0, 1, 2, 3),), 10, deal_sd=1.0, match_sd=0.7)
    a = los_alarms(d, 300, seed=4)
    assert a["los_alarm"] <= 0.085, a  # goal 5%: 3 standard errors of 300 runs is 3.8 points
    # the same runs through the old LOS, from W and L as if games were independent: about 20%
    assert a["old_los_alarm"] >= 0.12, a


def test_los_heads_up_rarely_says_95_for_equal_bots() -> None:
    d = Design("heads-up", (0.0, 0.0), ((0, 1),), 8, deal_sd=1.0, match_sd=0.7)
    assert los_alarms(d, 300, seed=5)["los_alarm"] <= 0.085


@pytest.mark.slow
def test_the_noise_note_is_a_5_percent_test_and_separates_real_gaps() -> None:
    equal = noise_rates(0.0, 10, 200, seed=6)
    assert equal["noise_rate"] >= 0.91, equal  # separates equal bots in at most ~5% of runs (+3 s.e.)
    gap = noise_rates(250.0, 20, 100, seed=7)
    assert gap["noise_rate"] <= 0.2, gap  # a 250-Elo gap over 20 deal-sets is seen
    assert gap["noise_rate"] <= gap["overlap_rate"]  # and more often than by overlapping intervals
