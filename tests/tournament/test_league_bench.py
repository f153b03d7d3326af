"""bench/league.py's parts against known truth: the simulated deal-sets, the fit, the oracle's information
and design, and the error-curve fit that turns a bench into games-to-target figures."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from arena.tournament import league_fit, ratings
from arena.tournament.journal import JournalEntry
from bench import league_oracle as oracle
from bench.league import fit_curve, games_to, reach
from bench.league_sim import Field, top_missing


def test_a_table_plays_a_duplicate_deal_set_whose_seat_luck_is_shared() -> None:
    f = Field.make(4, 4, 0.0, seed=1, deal_sd=100.0, stream="t")  # equal bots, the deal decides everything
    f.play((0, 1, 2, 3))
    first = f.rankings[0]
    seat_order = [(b + 0) % 4 for b in first]  # game 0: bot i in seat i
    for g in range(1, 4):  # game g: bot i in seat (i + g) % 4, so the same seats win, held by other bots
        assert [(int(b) + g) % 4 for b in f.rankings[g]] == seat_order
    assert f.games == 4 and f.tables == [(0, 1, 2, 3)] * 4
    independent = Field.make(4, 4, 0.0, seed=1, deal_sd=0.0, stream="t")
    for _ in range(30):
        independent.play((0, 1, 2, 3))
    winners = {int(r[0]) for r in independent.rankings}
    assert winners == {0, 1, 2, 3}  # without the deal's luck nothing ties the games together


def test_the_bench_fit_is_the_league_fit() -> None:
    f = Field.make(8, 4, 1.0, seed=2, deal_sd=0.5, stream="t")
    for combo in itertools.islice(itertools.cycle(itertools.combinations(range(8), 4)), 40):
        f.play(combo)
    theta, cov = f.fit()
    names = [f"b{i}" for i in range(8)]
    entries = []
    for i, (table, ranking) in enumerate(zip(f.tables, f.rankings)):
        seats = [int(b) for b in table]
        placings = [int(np.flatnonzero(ranking == b)[0]) + 1 for b in seats]
        entries.append(JournalEntry(index=i, game_id=f"g{i}", deal_seed=0, table=i // 4, set=0, seating=i % 4,
                                    seats=[names[b] for b in seats], placings=placings, totals=[0] * 4))
    want, want_cov = league_fit.league_fit(entries, names)
    assert np.allclose(theta, want, atol=1e-6) and np.allclose(cov, want_cov, atol=1e-6)


def test_the_round_fit_is_the_league_fit_updated_round_by_round() -> None:
    import random

    f = Field.make(30, 4, 2.0, seed=1, deal_sd=1.0, stream="t")
    rng = random.Random(1)
    for table in [tuple(rng.sample(range(30), 4)) for _ in range(40)]:
        f.play(table)
    first = f.round_fit()  # the first round fit is exact
    exact = f.fit()
    assert np.allclose(first[0], exact[0]) and np.allclose(first[1], exact[1])
    for _ in range(6):  # rounds folded in by the filter, below the doubling that refits exactly
        for table in [tuple(rng.sample(range(30), 4)) for _ in range(4)]:
            f.play(table)
        theta, cov = f.round_fit()
    assert f.anchored < f.folded == f.games  # the last rounds came through the filter
    exact = f.fit()
    sd = np.sqrt(np.diag(exact[1]))
    assert np.abs(theta - exact[0]).max() < 0.05 * sd.min()
    assert np.allclose(np.sqrt(np.diag(cov)), sd, rtol=0.05)


def test_table_information_is_the_exact_plackett_luce_fisher_information() -> None:
    two = oracle.table_information(np.array([[0.5, 0.0]]))[0]
    p = 1.0 / (1.0 + np.exp(-0.5))
    assert np.allclose(two, p * (1 - p) * np.array([[1, -1], [-1, 1]]))
    theta = np.array([0.3, -0.2, 1.0, 0.1])
    info = oracle.table_information(theta[None, :])[0]
    assert np.allclose(info.sum(axis=1), 0.0) and np.allclose(info, info.T)
    # against the variance of the score (the gradient of the log-likelihood) over all 24 orders
    e = np.exp(theta)
    score_var = np.zeros((4, 4))
    for perm in itertools.permutations(range(4)):
        chance, grad = 1.0, np.zeros(4)
        for j in range(3):
            rest = list(perm[j:])
            chance *= e[perm[j]] / e[rest].sum()
            grad[perm[j]] += 1.0
            grad[rest] -= e[rest] / e[rest].sum()
        score_var += chance * np.outer(grad, grad)
    assert np.allclose(info, score_var)


@pytest.mark.slow  # two Frank-Wolfe designs: a few seconds of CPU
def test_the_oracle_design_beats_even_local_tables_on_its_own_objective() -> None:
    theta = np.random.default_rng(3).normal(0.0, 600 / ratings.ELO_SCALE, 40)
    for objective, games in (("tau", 1200.0), ("top", 400.0)):
        cand, w = oracle.design(theta, 4, objective, 5, games, iters=60)
        assert abs(w.sum() - 1.0) < 1e-9 and (w >= 0).all()
        even = np.full(len(cand), 1.0 / len(cand))
        best = oracle.expected_error(theta, cand, w, games, objective, 5)
        assert best < oracle.expected_error(theta, cand, even, games, objective, 5)
    top = oracle.design(theta, 4, "top", 5, 400.0, iters=60)
    cut = np.sort(theta)[::-1][4:6]
    heavy = top[0][top[1] > 0.02]
    near = np.abs(theta[heavy] - cut.mean()).min(axis=1)
    assert np.median(near) < np.median(np.abs(theta - cut.mean()))  # the top design plays at the cut


def test_the_curve_fit_finds_the_games_of_a_known_power_law() -> None:
    g = np.array([400.0, 800.0, 1600.0, 3200.0, 8000.0])
    curve = fit_curve(g, 3.0 * g ** -0.5)
    assert curve is not None and curve[1] == pytest.approx(-0.5)
    assert games_to(curve, 3.0 / 40.0) == pytest.approx(1600.0)
    assert games_to(fit_curve(g, np.full(5, 0.1)), 0.05) == float("inf")  # a curve that never falls
    # two formats on paired fields: one with a quarter of the error variance needs a quarter of the games
    fields = np.arange(3)
    err = {"subset": np.tile(2.0 * g ** -0.5, (3, 1)), "better": np.tile(1.0 * g ** -0.5, (3, 1))}
    got = reach(g, err, fields)
    assert got["subset"] == pytest.approx(8000.0) and got["better"] == pytest.approx(2000.0)


def test_top_missing_counts_the_true_top_left_out() -> None:
    truth = np.arange(10.0)[::-1]  # bot 0 best
    assert top_missing(truth, truth, 3) == 0
    swapped = truth.copy()
    swapped[[2, 3]] = swapped[[3, 2]]  # the 3rd and 4th change places: one of the top 3 is named wrongly
    assert top_missing(swapped, truth, 3) == 1 and top_missing(-truth, truth, 3) == 3
