"""Leagues (swiss, adaptive): pure pairing, round choice from the journal, the file's keys, the runner's
round-by-round feeding and the standings' Settled column (all in-process, no bot is started)."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest

from arena.tournament import league_fit, schedule
from arena.tournament.config import starter_toml, validate_text
from arena.tournament.executor import WAIT
from arena.tournament.journal import JournalEntry
from arena.tournament.matchmaking import (
    adaptive_round,
    league_round,
    settled,
    swiss_round,
)
from arena.tournament.runner import _pending
from arena.tournament.standings import _standings
from arena.tournament.standings_text import render_standings
from bench.league import kendall_tau
from tests.tournament.league_helpers import BASE, KEY, L, errors_of, fake_entries, names

# -- Swiss -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,k", [(8, 4), (10, 4), (9, 2), (7, 3), (20, 4)])
def test_swiss_seats_every_bot_once_or_gives_it_a_bye(n: int, k: int) -> None:
    rng = random.Random(3)
    order = rng.sample(range(n), n)
    tables, sitting = swiss_round(order, k, set(), [0] * n, rng)
    seated = [b for t in tables for b in t]
    assert len(sitting) == n % k
    assert sorted(seated + sitting) == list(range(n))
    assert all(len(t) == k and len(set(t)) == k and list(t) == sorted(t) for t in tables)


def test_swiss_tables_are_neighbours_in_the_order() -> None:
    order = [5, 3, 7, 1, 0, 2, 6, 4]
    tables, _ = swiss_round(order, 4, set(), [0] * 8, random.Random(0))
    assert tables == [(1, 3, 5, 7), (0, 2, 4, 6)]


def test_swiss_byes_go_to_who_sat_out_least_from_the_bottom() -> None:
    order = list(range(6))
    _, sitting = swiss_round(order, 4, set(), [0] * 6, random.Random(0))
    assert sorted(sitting) == [4, 5]
    _, sitting = swiss_round(order, 4, set(), [0, 0, 0, 0, 1, 1], random.Random(0))
    assert sorted(sitting) == [2, 3]  # 4 and 5 sat out already


def test_swiss_avoids_a_table_played_before_where_a_swap_can() -> None:
    order = list(range(8))
    played: set[tuple[int, ...]] = {(0, 1, 2, 3), (4, 5, 6, 7)}
    tables, _ = swiss_round(order, 4, played, [0] * 8, random.Random(0))
    assert not set(tables) & played
    assert sorted(b for t in tables for b in t) == order
    # every table of 4 from 4 bots is the same table: a repeat that cannot be avoided is played
    tables, _ = swiss_round([0, 1, 2, 3], 4, {(0, 1, 2, 3)}, [0] * 4, random.Random(0))
    assert tables == [(0, 1, 2, 3)]


# -- adaptive ----------------------------------------------------------------------------------

def test_adaptive_is_deterministic_under_a_seed_and_seats_k_distinct_bots() -> None:
    rng = np.random.default_rng(1)
    strength, cov = rng.normal(size=20), np.diag(rng.uniform(0.1, 1.0, 20))
    a = adaptive_round(strength, cov, 4, set(), [0] * 20, random.Random("s"))
    b = adaptive_round(strength, cov, 4, set(), [0] * 20, random.Random("s"))
    c = adaptive_round(strength, cov, 4, set(), [0] * 20, random.Random("other"))
    assert a == b and a != c
    tables, sitting = a
    assert sitting == [] and sorted(x for t in tables for x in t) == list(range(20))
    assert all(len(set(t)) == 4 for t in tables)


def test_adaptive_settled_bots_meet_their_neighbours_and_uncertain_ones_move() -> None:
    strength = np.arange(16, 0, -1, dtype=float)  # bot 0 best, far apart
    sure = np.eye(16) * 1e-6
    tables, _ = adaptive_round(strength, sure, 4, set(), [0] * 16, random.Random(1))
    assert tables == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)]
    unsure = np.eye(16) * 100.0  # nothing known: the draw scatters the order
    rounds = [adaptive_round(strength, unsure, 4, set(), [0] * 16, random.Random(s))[0] for s in range(5)]
    assert any(t != tables for t in rounds)


def test_adaptive_draws_bots_measured_against_each_other_together() -> None:
    # bots 0 and 1 each uncertain (variance 4) but their difference known exactly (covariance 4): the joint draw
    # moves them together, so they stay in the same order, whereas independent draws would swap them half the time
    strength = np.array([0.3, 0.0, 10.0, -10.0])
    cov = np.diag([4.0, 4.0, 1e-6, 1e-6])
    cov[0, 1] = cov[1, 0] = 4.0 - 1e-6
    together = [adaptive_round(strength, cov, 2, set(), [0] * 4, random.Random(s), floor=0.0)[0] for s in range(40)]
    assert all(t == [(0, 2), (1, 3)] for t in together)  # order 2, 0, 1, 3 in every draw
    apart = np.diag(np.diag(cov))
    alone = [adaptive_round(strength, apart, 2, set(), [0] * 4, random.Random(s), floor=0.0)[0] for s in range(40)]
    assert any(t == [(1, 2), (0, 3)] for t in alone)


def test_adaptive_floor_keeps_a_settled_field_meeting_new_neighbours() -> None:
    strength = np.arange(40, 0, -1, dtype=float) * 0.05  # neighbours 0.05 apart, known exactly
    sure = np.eye(40) * 1e-9
    neighbours = [tuple(range(i, i + 4)) for i in range(0, 40, 4)]
    assert adaptive_round(strength, sure, 4, set(), [0] * 40, random.Random(2), floor=0.0)[0] == neighbours
    floored = adaptive_round(strength, sure, 4, set(), [0] * 40, random.Random(2))[0]
    assert floored != neighbours
    assert sorted(x for t in floored for x in t) == list(range(40))
    # the floor moves bots among near neighbours, not across the field
    assert all(max(t) - min(t) < 12 for t in floored)


def test_settled_reads_the_covariance() -> None:
    s = np.array([2.0, 1.0, 0.0])
    loose, tight = np.eye(3) * 1.0, np.eye(3) * 0.01
    few, many = settled(s, loose), settled(s, tight)
    assert all(0.5 < f < m <= 1.0 for f, m in zip(few, many))
    assert settled(s, tight, [2, 1, 0])[0] < 0.5  # an order against the estimates is probably wrong
    # two bots measured against each other: their difference is surer than their variances alone say
    joint = np.eye(3) * 1.0
    joint[0, 1] = joint[1, 0] = 0.9
    assert settled(s, joint)[0] > settled(s, loose)[0]
    assert settled(s, joint)[0] == pytest.approx(0.5 * math.erfc(-1.0 / math.sqrt(0.2) / math.sqrt(2.0)))


@pytest.mark.slow  # choix and a finite-difference Hessian: seconds of CPU
def test_league_fit_equals_choix_opt_rankings_and_its_covariance_is_the_inverse_hessian() -> None:
    import choix

    rng = np.random.default_rng(7)
    truth = rng.normal(0.0, 1.5, 12)
    entries: list[JournalEntry] = []
    data: list[tuple[int, ...]] = []
    for i in range(300):
        table = rng.choice(12, 4, replace=False)
        ranking = table[np.argsort(-(truth[table] + rng.gumbel(size=4)))]
        data.append(tuple(int(b) for b in ranking))
        entries.append(JournalEntry(index=i, game_id=f"g{i}", deal_seed=0, table=i, set=0, seating=0,
                                    seats=[f"b{b:02d}" for b in table],
                                    placings=[int(np.where(ranking == b)[0][0]) + 1 for b in table],
                                    totals=[0] * 4))
    names = [f"b{b:02d}" for b in range(12)]
    theta, cov = league_fit.league_fit(entries, names)
    # choix penalizes alpha * |theta|^2, a prior of precision 2 alpha
    expected = choix.opt_rankings(12, data, alpha=league_fit.LEAGUE_PRIOR / 2, tol=1e-10)
    assert np.allclose(theta, expected, atol=1e-4)
    assert abs(theta.sum()) < 1e-6  # the prior centres the MAP: the likelihood does not move the mean
    assert np.allclose(cov, cov.T) and (np.linalg.eigvalsh(cov) > 0).all()
    # a warm start converges to the same point
    again, _ = league_fit.league_fit(entries, names, start=theta + rng.normal(0.0, 0.5, 12))
    assert np.allclose(again, theta, atol=1e-7)
    # the covariance is the curvature's inverse: a bot seen in more games has the smaller variance
    busier = league_fit.league_fit(entries + entries[:100], names)[1]
    assert (np.diag(busier) <= np.diag(cov) + 1e-12).all()


def test_league_fit_is_finite_for_a_bot_that_always_wins() -> None:
    entries = [JournalEntry(index=i, game_id=f"g{i}", deal_seed=0, table=i, set=0, seating=0,
                            seats=["a", "b", "c", "d"], placings=[1, 2, 3, 4], totals=[0] * 4) for i in range(50)]
    theta, cov = league_fit.league_fit(entries, list("abcd"))
    assert np.isfinite(theta).all() and np.isfinite(cov).all()
    assert list(np.argsort(-theta)) == [0, 1, 2, 3]


# -- the schedule of a league -------------------------------------------------------------------




def test_league_size_is_its_budget_in_whole_rounds() -> None:
    t = L(names(10), games=41)  # 2 tables a round x 4 seatings = 8 games a round
    assert schedule.tables_per_round(t) == 2 and schedule.games_per_round(t) == 8
    assert schedule.rounds(t) == 6 and schedule.total_games(t) == 48 and schedule.table_count(t) == 12
    assert schedule.round_of(t, 7) == 0 and schedule.round_of(t, 8) == 1


@pytest.mark.parametrize("fmt", schedule.LEAGUES)
def test_the_same_journal_and_seed_give_the_same_next_round(fmt: str) -> None:
    t = L(names(12), format=fmt, games=12 * 4 * 5)
    truth = np.linspace(3, -3, 12)
    entries = fake_entries(t, 3, truth)
    again = fake_entries(t, 3, truth)
    assert [(e.seats, e.placings) for e in entries] == [(e.seats, e.placings) for e in again]
    nxt = schedule.round_tables(t, 3, entries)
    assert nxt == schedule.round_tables(t, 3, list(reversed(entries)))  # the journal's order does not matter
    assert nxt == schedule.round_tables(t, 3, entries + fake_entries(t, 4, truth)[len(entries):])  # later ignored
    assert sorted(b for tb in nxt for b in tb) == sorted(t.bot_names)
    other_seed = schedule.round_tables(L(names(12), format=fmt, games=240, seed=2), 0, [])
    assert other_seed != schedule.round_tables(t, 0, [])
    with pytest.raises(ValueError, match="round 3 is chosen from the 36 game"):
        schedule.round_tables(t, 3, entries[:-1])


def test_swiss_rounds_follow_the_standings() -> None:
    t = L(names(12), games=12 * 4 * 4)
    truth = np.linspace(3, -3, 12)  # b00 best
    entries = fake_entries(t, 3, truth)
    top = schedule.round_tables(t, 3, entries)[0]
    assert "b00" in top and set(top) <= {f"b{i:02d}" for i in range(6)}  # a repeat mended by a near swap
    # games and deal seeds by index arithmetic, as for the other formats
    g = schedule.game_at(t, 3 * 12 + 5, KEY, schedule.round_tables(t, 3, entries))
    assert (g.table, g.set, g.seating) == (3 * 3 + 1, 0, 1)
    assert g.deal_seed == schedule.deal_seed(KEY, g.table, 0)
    with pytest.raises(ValueError, match="round_tables"):
        schedule.game_at(t, 0, KEY)
    with pytest.raises(ValueError):
        list(schedule.iter_games(t, KEY))


def test_pending_gives_a_round_only_after_the_previous_one_is_journaled() -> None:
    t = L(names(8), games=16)  # 2 rounds of 2 tables x 4 seatings
    size = schedule.games_per_round(t)
    done: set[int] = set()
    it = _pending(t, done)  # type: ignore[arg-type]
    first = [next(it) for _ in range(size)]
    assert first == list(range(size))
    assert next(it) == WAIT and next(it) == WAIT
    done.update(first[:-1])
    assert next(it) == WAIT
    done.add(first[-1])
    assert [next(it) for _ in range(size)] == list(range(size, 2 * size))
    assert next(it, None) is None  # the last round is out: the pool plays what it holds, then stops
    # a resumed run mid-round: the games already in the journal are skipped
    resumed = list(itertools.islice(_pending(t, {0, 2, 5}), 6))  # type: ignore[arg-type]
    assert resumed == [1, 3, 4, 6, 7, WAIT]


# -- the file ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", schedule.LEAGUES)
def test_a_league_file_validates_and_keeps_its_budget(fmt: str) -> None:
    text = f'format = "{fmt}"\ngames = 100\n' + BASE
    t, errors = validate_text(text, check_commands=False)
    assert errors == [] and t is not None
    assert t.format == fmt and t.games == 100
    assert t.to_toml_data()["games"] == 100
    assert schedule.total_games(t) == 2 * 2 * 24 * 2  # 2 tables a round x 2 deal-sets x 24 seatings, 2 rounds


@pytest.mark.parametrize("head,want", [
    ('format = "swiss"\n', 'format: a swiss league needs games = N: the budget of games it plays, in rounds'),
    ('format = "adaptive"\ngames = 0\n', "games: expected a whole number >= 1, got 0"),
    ('format = "swiss"\ngames = "many"\n', "games: expected a whole number >= 1, got 'many'"),
    ('games = 10\n', 'games: only a league has a game budget; add format = "swiss" or "adaptive", or remove it '
                     '(max_tables caps a round robin)'),
    ('format = "swiss"\ngames = 10\nmax_tables = 3\n',
     "max_tables: a swiss league is sized by games, not max_tables; remove max_tables"),
    ('format = "swiss"\ngames = 10\nmax_games = 5\n',
     "games: 96 games (whole rounds) is more than max_games = 5; lower games, or raise max_games"),
    ('format = "swis"\ngames = 10\n', "format: expected one of: round_robin, gauntlet, swiss, adaptive, "
                                      "match, got 'swis'; did you mean 'swiss'?"),
])
def test_league_keys_get_one_sentence_each(head: str, want: str) -> None:
    got = errors_of(head.replace("seating", "seating") + BASE)
    assert got == [want], got


def test_starter_file_names_the_league_formats() -> None:
    text = starter_toml()
    assert "swiss" in text and "adaptive" in text and "games = N" in text


# -- standings ---------------------------------------------------------------------------------

def test_league_standings_show_how_settled_each_place_is() -> None:
    t = L(names(8), games=8 * 4 * 6)
    truth = np.linspace(3, -3, 8)
    entries = fake_entries(t, 6, truth)
    st = _standings("lg", entries, list(t.bot_names), False, 1.0, 0, 20, [], league=True)
    assert [r.bot for r in st.rows] == list(t.bot_names)  # the true order, from placings by truth
    ahead = [r.settled for r in st.rows]
    assert ahead[-1] is None and all(a is not None and 0.5 < a <= 1.0 for a in ahead[:-1])
    text = render_standings(st, "table")
    assert "Settled" in text
    assert "settled" in render_standings(st, "csv").splitlines()[0]
    assert all("settled" in row for row in st.to_data()["rows"])
    plain = _standings("rr", entries, list(t.bot_names), False, 1.0, 0, 20, [])
    assert all(r.settled is None for r in plain.rows)
    assert "Settled" not in render_standings(plain, "table")
    assert "league" not in plain.to_data() and all("settled" not in row for row in plain.to_data()["rows"])


# -- the bench's helpers -----------------------------------------------------------------------

def test_kendall_tau_matches_counting_pairs() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=30), rng.normal(size=30)
    pairs = Counter(np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i, j in itertools.combinations(range(30), 2))
    assert kendall_tau(a, b) == pytest.approx((pairs[1.0] - pairs[-1.0]) / (30 * 29 / 2))
    assert kendall_tau(a, a) == pytest.approx(1.0) and kendall_tau(a, -a) == pytest.approx(-1.0)


def test_league_round_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown league format"):
        league_round("ladder", 8, 4, 1, 1, (np.zeros(8), np.eye(8)), [], [0] * 8)


# -- the rounds file ---------------------------------------------------------------------------

def test_rounds_file_keeps_signed_rounds_of_this_tournament_only(tmp_path) -> None:
    from arena.tournament import rounds

    tables = (("a", "b"), ("c", "d"))
    rounds.record(tmp_path, KEY, 0, tables, "tag1")
    rounds.record(tmp_path, KEY, 0, (("a", "c"), ("b", "d")), "tag1")  # a second line for a round: the first wins
    assert rounds.recorded(tmp_path, KEY, "tag1") == {0: tables}
    assert rounds.recorded(tmp_path, KEY, "other tournament") == {}
    assert rounds.recorded(tmp_path, bytes(32), "tag1") == {}  # another key: nothing verifies
    path = tmp_path / rounds.ROUNDS_FILE
    path.write_bytes(path.read_bytes().replace(b'"a","b"', b'"b","a"', 1))  # tampered: ignored
    assert rounds.recorded(tmp_path, KEY, "tag1") == {0: (("a", "c"), ("b", "d"))}
    with open(path, "ab") as f:
        f.write(b'{"round":1,"tab')  # torn by kill -9
    rounds.record(tmp_path, KEY, 1, tables, "tag1")
    assert rounds.recorded(tmp_path, KEY, "tag1") == {0: (("a", "c"), ("b", "d")), 1: tables}


def test_rounds_tag_ignores_what_resume_may_change() -> None:
    from arena.tournament import rounds

    t, _ = validate_text('format = "swiss"\ngames = 100\n' + BASE, check_commands=False)
    u, _ = validate_text('format = "swiss"\ngames = 100\nsandbox = false\noutput = "x"\n' + BASE,
                         check_commands=False)
    v, _ = validate_text('format = "swiss"\ngames = 100\nseed = 9\n' + BASE, check_commands=False)
    assert rounds.tag_of(t) == rounds.tag_of(u) != rounds.tag_of(v)


def test_bench_page_draws_one_chart_per_spread() -> None:
    from bench.league import html_page

    errors = {"subset": [0.5, 0.4], "swiss": [0.45, 0.35], "adaptive": [0.44, 0.3]}
    fig = {"spread_elo": 300.0, "budgets": [100, 200], "tau": {"error": errors}, "top": {"error": errors}}
    page = html_page([fig, fig | {"spread_elo": 600.0}], 100, 4, 3, 10)
    assert page.count("<svg") == 4 and "sd 600.0 Elo" in page  # 1 - tau and the top-K error, per spread
    assert page.count("<polyline") == 12  # three formats a chart
