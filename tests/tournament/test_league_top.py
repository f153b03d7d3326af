"""Adaptive leagues with ``top = K``: who is contested, uneven seats with a floor, the rounds chosen from the
journal, the file's keys and the standings' Top K% column (all in-process, no bot is started)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from arena.tournament import league_objective as lo
from arena.tournament import schedule
from arena.tournament.config import validate_text
from arena.tournament.matchmaking import league_round
from arena.tournament.standings import _standings
from arena.tournament.standings_text import render_standings, top_cell
from tests.tournament.league_helpers import BASE, T, errors_of, fake_entries, names


def test_contested_is_the_bots_near_the_cut_and_top_probability_reads_the_draws() -> None:
    strength = np.linspace(3.0, -3.0, 20)  # 0.32 apart
    cov = np.eye(20) * 0.2 ** 2
    draws = lo.posterior_draws(strength, cov, 2000, lo.generator("t", 1))
    p = lo.top_probability(draws, 5)
    assert p[0] == 1.0 and p[-1] == 0.0 and 0.2 < p[4] < 0.95 and 0.05 < p[5] < 0.8
    assert abs(p.sum() - 5) < 1e-9  # each draw has exactly 5 in its top 5
    w = lo.contested(strength, draws, 5)
    assert w[:2].max() < lo.SETTLED and w[10:].max() < lo.SETTLED and min(w[4], w[5]) > 0.08
    ordered = lo.contested(strength, draws, 5, order=True)
    assert ordered[0] > lo.SETTLED > w[0]  # its place within the top 5 is in doubt though its membership is not


def test_allocate_gives_the_contested_more_up_to_the_cap_and_keeps_the_floor() -> None:
    n, seats = 20, 20
    weight = np.zeros(n)
    weight[4:8] = [0.3, 0.5, 0.5, 0.3]
    idle = [0] * n
    idle[19] = lo.IDLE_MAX  # sat out three rounds in a row: must play
    counts = lo.allocate(weight, idle, [10] * n, seats, cap=4)
    assert counts.sum() == seats and counts.max() <= 4
    assert counts[19] == 1 and all(counts[4:8] == 4)
    assert sorted(counts[[i for i in range(n) if i not in (4, 5, 6, 7, 19)]].tolist()) == [0] * 12 + [1] * 3
    played = [10] * n
    played[0] = 0  # the spare seats go to who has played least
    assert lo.allocate(weight, [0] * n, played, seats, cap=4)[0] == 1


def test_uneven_round_seats_k_distinct_bots_as_allocated_and_is_seeded() -> None:
    n, k = 20, 4
    strength = np.linspace(2.0, -2.0, n)
    cov = np.eye(n) * 0.04
    counts = np.array([4, 4, 4, 4] + [1] * 4 + [0] * 12)
    tables = lo.uneven_round(strength, cov, k, counts, lo.generator("t", 2), 0.15)
    assert len(tables) == 5 and all(len(set(t)) == k for t in tables)
    assert Counter(b for t in tables for b in t) == {b: int(c) for b, c in enumerate(counts) if c}
    assert tables == lo.uneven_round(strength, cov, k, counts, lo.generator("t", 2), 0.15)
    # a bot holding every table: the mending cannot fail
    tight = np.array([5, 5, 5, 5] + [0] * 16)
    assert lo.uneven_round(strength, cov, k, tight, lo.generator("t", 3), 0.15) == [(0, 1, 2, 3)] * 5


def test_league_round_with_top_is_even_while_warming_up_then_uneven() -> None:
    n = 20
    fit = (np.linspace(3.0, -3.0, n), np.eye(n) * 0.04)
    warm = league_round("adaptive", n, 4, 1, lo.WARMUP - 1, fit, [], [0] * n, top=5, idle=[0] * n)
    assert sorted(b for t in warm for b in t) == list(range(n))
    later = league_round("adaptive", n, 4, 1, lo.WARMUP, fit, [], [0] * n, top=5, idle=[0] * n)
    seats = Counter(b for t in later for b in t)
    assert sum(seats.values()) == n and max(seats.values()) == lo.CAP and seats[19] == 0
    assert later == league_round("adaptive", n, 4, 1, lo.WARMUP, fit, [], [0] * n, top=5, idle=[0] * n)
    # without top the adaptive round is as before: every bot once
    plain = league_round("adaptive", n, 4, 1, lo.WARMUP, fit, [], [0] * n)
    assert sorted(b for t in plain for b in t) == list(range(n))


def test_top_league_rounds_come_from_the_journal_and_nobody_sits_out_past_the_floor() -> None:
    n = 16
    t = T(names(n), games=n * 4 * 9, top=3)  # 9 rounds of 4 tables x 4 seatings
    truth = np.linspace(3.0, -3.0, n)
    entries = fake_entries(t, 9, truth)
    size = schedule.games_per_round(t)
    seated = [{b for e in entries if e.index // size == r for b in e.seats} for r in range(9)]
    assert all(len(s) == n for s in seated[:lo.WARMUP])
    assert any(len(s) < n for s in seated[lo.WARMUP:])  # settled bots sat out
    for b in t.bot_names:  # never more than IDLE_MAX rounds in a row without a game
        run = longest = 0
        for s in seated:
            run = 0 if b in s else run + 1
            longest = max(longest, run)
        assert longest <= lo.IDLE_MAX, b
    games = Counter(b for e in entries for b in e.seats)
    assert games["b02"] + games["b03"] > games["b14"] + games["b15"]  # the cut is played more than the bottom
    again = fake_entries(t, 9, truth)
    assert [e.seats for e in again] == [e.seats for e in entries]
    assert schedule.round_tables(t, 8, list(reversed(entries))) == schedule.round_tables(t, 8, entries)
    other = fake_entries(T(names(n), games=n * 4 * 9, top=5), 9, truth)
    assert [e.seats for e in other] != [e.seats for e in entries]


def test_an_uneven_league_chooses_its_rounds_by_expected_information_from_the_journal() -> None:
    from arena.tournament import league_fit

    n = 16
    t = T(names(n), games=n * 4 * 6, top=None, uneven=True)  # 6 rounds of 4 tables x 4 seatings
    entries = fake_entries(t, 6, np.linspace(3.0, -3.0, n))
    size = schedule.games_per_round(t)
    before = [e for e in entries if e.index < 5 * size]
    strength, cov = league_fit.league_fit(before, list(t.bot_names))
    idle = [next((i for i, r in enumerate(range(4, -1, -1)) if any(b in e.seats for e in before if e.index // size == r)), 5)
            for b in t.bot_names]
    want = lo.information_round(strength, cov, 4, idle, lo.CAP, schedule.games_per_table(t))
    got = schedule.round_tables(t, 5, list(reversed(entries)))
    assert got == tuple(tuple(t.bot_names[b] for b in table) for table in want)
    seated = [{b for e in entries if e.index // size == r for b in e.seats} for r in range(6)]
    assert any(len(s) < n for s in seated[lo.WARMUP:])  # the settled sat out a round


@pytest.mark.parametrize("head,want", [
    ('format = "swiss"\ngames = 10\ntop = 3\n',
     'top: only an adaptive league has a top = K objective; add format = "adaptive" or remove top'),
    ('format = "adaptive"\ngames = 10\ntop = 9\n',
     "top: expected fewer than the 9 bots (the top K is a part of the field), got 9"),
    ('format = "adaptive"\ngames = 10\ntop = 0\n', "top: expected a whole number >= 1, got 0"),
    ('format = "adaptive"\ngames = 10\ntop_order = true\n',
     "top_order: top_order needs top = K (the places it orders); add top or remove it"),
    ('format = "adaptive"\ngames = 10\ntop = 2\ntop_order = "yes"\n', "top_order: expected true or false, got 'yes'"),
])
def test_top_keys_get_one_sentence_each(head: str, want: str) -> None:
    assert errors_of(head + BASE) == [want]


def test_uneven_without_top_plays_the_whole_orders_contested_bots_more() -> None:
    n = 24
    strength = np.concatenate([np.linspace(6.0, 3.0, 4), np.linspace(0.3, -0.3, 16), np.linspace(-3.0, -6.0, 4)])
    fit = (strength, np.eye(n) * 0.05)
    tables = league_round("adaptive", n, 4, 1, lo.WARMUP, fit, [], [0] * n, uneven=True, idle=[0] * n)
    seats = Counter(b for t in tables for b in t)
    assert sum(seats.values()) == n and all(len(set(t)) == 4 for t in tables)
    crowded = [seats[b] for b in range(4, 20)]
    lonely = [seats[b] for b in (*range(4), *range(20, 24))]
    assert sum(crowded) == n and max(lonely) == 0  # the far-apart ends are settled: they sit out
    assert tables == lo.information_round(strength, fit[1], 4, [0] * n, 4, 1)  # chosen by expected information
    errors = errors_of('format = "swiss"\ngames = 10\nuneven = true\n' + BASE)
    assert errors == ['uneven: only an adaptive league gives its seats unevenly; add format = "adaptive" '
                      "or remove uneven"]
    t, _ = validate_text('format = "adaptive"\ngames = 10\nuneven = true\n' + BASE, check_commands=False)
    assert t is not None and t.uneven and t.top is None and t.to_toml_data()["uneven"] is True


def test_top_is_kept_in_the_resolved_file() -> None:
    t, errors = validate_text('format = "adaptive"\ngames = 10\ntop = 2\ntop_order = true\n' + BASE,
                              check_commands=False)
    assert errors == [] and t is not None and (t.top, t.top_order) == (2, True)
    data = t.to_toml_data()
    assert (data["top"], data["top_order"]) == (2, True)
    plain, _ = validate_text('format = "adaptive"\ngames = 10\n' + BASE, check_commands=False)
    assert plain is not None and "top" not in plain.to_toml_data()  # other leagues' files are as before


def test_standings_show_the_chance_of_the_top_k_around_the_cut() -> None:
    t = T(names(12), games=12 * 4 * 6, top=4)
    truth = np.linspace(3.0, -3.0, 12)
    entries = fake_entries(t, 6, truth)
    st = _standings("lg", entries, list(t.bot_names), False, 1.0, 0, 20, [], league=True, top=4)
    chance = [r.top_pct for r in st.rows]
    assert all(c is not None and 0.0 <= c <= 1.0 for c in chance)
    assert abs(sum(c for c in chance if c is not None) - 4) < 1e-9
    first, last = chance[0], chance[-1]
    assert first is not None and last is not None and first > 0.9 and last < 0.1
    text = render_standings(st, "table")
    assert "Top 4%" in text
    assert "top_pct" in render_standings(st, "csv").splitlines()[0]
    assert st.to_data()["top"] == 4 and all("top_pct" in row for row in st.to_data()["rows"])
    shown = [top_cell(st, i) for i in range(len(st.rows))]
    assert shown[3] and shown[4]  # either side of the cut
    assert shown[-1] == "" and shown[0] in ("", "100%")  # settled far from it: blank
    plain = _standings("lg", entries, list(t.bot_names), False, 1.0, 0, 20, [], league=True)
    assert "Top" not in render_standings(plain, "table") and "top" not in plain.to_data()
    assert all("top_pct" not in row for row in plain.to_data()["rows"])
