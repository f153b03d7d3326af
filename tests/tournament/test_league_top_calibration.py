"""The Top K% column's calibration bench (bench/top_k_calibration.py): it measures the column the standings
print, its reliability table and intervals are right, and it tells a calibrated posterior from an
overconfident one on simulated leagues of known strengths (in-process, no bot is started)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.tournament import league_fit, ratings
from arena.tournament.standings import _standings
from arena.tournament.standings_stats import top_chances
from bench import top_k_calibration as cal
from tests.tournament.league_helpers import T, fake_entries, names


def test_the_bench_measures_the_chance_the_standings_print() -> None:
    t = T(names(12), games=12 * 4 * 6, top=4)
    entries = fake_entries(t, 6, np.linspace(3.0, -3.0, 12))
    st = _standings("lg", entries, list(t.bot_names), False, 1.0, 5, 20, [], league=True, top=4)
    order = ratings.bot_order(entries, list(t.bot_names))
    chance = top_chances(*league_fit.league_fit(entries, order), 4, 5)
    assert {r.bot: r.top_pct for r in st.rows} == {b: float(chance[i]) for i, b in enumerate(order)}


def test_wilson_interval_matches_known_values() -> None:
    lo, hi = cal.wilson(5, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.2366, 0.7634)
    lo, hi = cal.wilson(0, 20)
    assert lo == 0.0 and 0.15 < hi < 0.17
    assert cal.wilson(0, 0) == (0.0, 1.0)


def test_reliability_tells_calibrated_chances_from_overconfident_ones() -> None:
    rng = np.random.default_rng(3)
    chance = rng.uniform(0, 1, 20000)
    honest = rng.uniform(0, 1, 20000) < chance
    table = cal.reliability(chance, honest)
    assert sum(row["count"] for row in table) == 20000
    for row in table:
        lo, hi = row["interval"]
        assert lo <= row["printed"] <= hi and row["bin"][0] <= row["printed"] <= row["bin"][1]
    # a column that prints 75% where the truth is 56% (chance ** 2): its 60-80% bin is caught
    bold = rng.uniform(0, 1, 20000) < chance ** 2
    row = next(r for r in cal.reliability(chance, bold) if r["bin"] == [0.6, 0.8])
    assert row["interval"][1] < row["printed"] - 0.1


def test_spiegelhalter_z_is_near_zero_for_calibrated_chances_and_signs_bold_and_timid_ones() -> None:
    rng = np.random.default_rng(4)
    chance = rng.uniform(0, 1, 20000)
    assert abs(cal.spiegelhalter(chance, rng.uniform(0, 1, 20000) < chance)) < 3
    bold = np.clip(0.5 + 1.5 * (chance - 0.5), 0, 1)  # printed further from 1/2 than the truth is
    assert cal.spiegelhalter(bold, rng.uniform(0, 1, 20000) < chance) > 5
    timid = 0.5 + 0.5 * (chance - 0.5)
    assert cal.spiegelhalter(timid, rng.uniform(0, 1, 20000) < chance) < -5


@pytest.mark.slow
def test_a_top_league_on_known_strengths_prints_calibrated_chances(monkeypatch) -> None:
    def z() -> float:
        snaps = [s for seed in range(20)
                 for s in cal.play("top", 40, 4, 600 / ratings.ELO_SCALE, seed, [320, 640], 5, cal.DEAL_SD)]
        chance = np.concatenate([c for c, _ in snaps])
        truly = np.concatenate([t for _, t in snaps])
        assert np.mean((chance - truly) ** 2) < 0.2 * np.mean((5 / 40 - truly) ** 2)  # it knows a lot
        return cal.spiegelhalter(chance, truly)

    assert abs(z()) < 3  # +0.1 when written
    # the same leagues printed from a posterior half as wide: the bench sees it (z +6.0 when written)
    monkeypatch.setattr(cal, "top_chances", lambda s, c, top, seed: top_chances(s, c / 4, top, seed))
    assert z() > 3
