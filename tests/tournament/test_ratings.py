"""Plackett-Luce ratings, bootstrap intervals, ladder points, and the standings built on them."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random
from pathlib import Path

import choix
import numpy as np
import pytest

from arena.integrity import make_key
from arena.tournament import ratings, standings, standings_text
from arena.tournament.config import validate_text, write_resolved
from arena.tournament.journal import Journal, JournalEntry
from arena.tournament.schedule import iter_games


def tournament(names: str, seats: int, deal_sets: int = 2, extra: str = "") -> str:
    return (f'name = "syn"\nvariant = "basic"\nseats = {seats}\ndeal_sets = {deal_sets}\n{extra}\n'
            + "".join(f'[[bots]]\nname = "{b}"\ncommand = "random"\n' for b in names))


def synthetic(names: str, seats: int, strength: dict[str, float] | None = None, deal_sets: int = 2,
              seed: int = 0) -> list[JournalEntry]:
    """Games of the real schedule; without ``strength`` the alphabetical order always wins."""
    t, errors = validate_text(tournament(names, seats, deal_sets))
    assert t is not None, errors
    rng = random.Random(seed)
    out = []
    for g in iter_games(t, bytes(32)):
        if strength is None:
            order = sorted(g.seats)
        else:  # sample a Plackett-Luce ranking
            rest, order = list(g.seats), []
            while rest:
                pick = rng.choices(rest, [np.exp(strength[b]) for b in rest])[0]
                order.append(pick)
                rest.remove(pick)
        placings = [order.index(b) + 1 for b in g.seats]
        totals = [10 * (len(order) - p) for p in placings]
        out.append(JournalEntry(index=g.index, game_id=g.game_id, deal_seed=g.deal_seed, table=g.table, set=g.set,
                                seating=g.seating, seats=list(g.seats), placings=placings, totals=totals,
                                failures=[{} for _ in g.seats]))
    return out


def strict(entries: list[JournalEntry]) -> dict[str, ratings.Rating]:
    return ratings.rate(entries)


def test_a_strict_order_gives_bounds_at_the_ends_and_ordered_ratings() -> None:
    entries = synthetic("ABC", 2, deal_sets=3) + synthetic("ABC", 3, deal_sets=3)
    # renumber so indices and deal-set groups stay unique across the two batches
    for i, e in enumerate(entries):
        e.index = i
        e.table = i // 6
    r = strict(entries)
    a, b, c = r["A"], r["B"], r["C"]
    # A never lost and C never won: no finite rating fits them, so they are bounds around B
    assert (a.bound, b.bound, c.bound) == (">", None, "<")
    assert a.low == a.rating and a.high is None and c.high == c.rating and c.low is None
    assert a.plus_minus is None and c.plus_minus is None
    assert a.rating > b.rating > c.rating and b.rating == 1500.0  # the mean is over the bots with a rating
    assert a.games == b.games == c.games


def test_four_bots_strict_order_three_seats() -> None:
    r = strict(synthetic("ABCD", 3, deal_sets=3))
    vals = [r[b] for b in "ABCD"]
    assert [x.bound for x in vals] == [">", ">", None, "<"]  # B never lost once A is set aside
    assert all(x.rating > y.rating for x, y in itertools.pairwise(vals))


def test_order_of_the_journal_does_not_matter() -> None:
    entries = synthetic("ABCDE", 3, {"A": 1.0, "B": 0.5, "C": 0.0, "D": -0.2, "E": -1.0}, seed=5)
    shuffled = list(entries)
    random.Random(1).shuffle(shuffled)
    assert ratings.fit(entries) == ratings.fit(shuffled)
    assert ratings.rate(entries) == ratings.rate(shuffled)


def test_noisy_data_recovers_the_true_order() -> None:
    strength = {"A": 1.5, "B": 0.7, "C": 0.0, "D": -0.8}
    entries = synthetic("ABCD", 3, strength, deal_sets=30, seed=11)
    fitted = ratings.fit(entries)
    assert sorted(fitted, key=fitted.__getitem__, reverse=True) == ["A", "B", "C", "D"]
    # log-strength differences come back on the Elo-like scale
    assert abs((fitted["A"] - fitted["D"]) / ratings.ELO_SCALE - 2.3) < 0.5
    r = ratings.rate(entries)
    assert all(x.low is not None and x.high is not None and x.low < x.rating < x.high for x in r.values())


def test_fit_equals_choix_pairwise_maximum_likelihood() -> None:
    # without ties the fit is Bradley-Terry on every pair of seats of every game (full rank-breaking)
    entries = synthetic("ABCDE", 3, {"A": 1.0, "B": 0.5, "C": 0.0, "D": -0.2, "E": -1.0}, seed=5)
    names = list("ABCDE")
    data = [(names.index(w), names.index(lo)) for e in entries
            for w, lo in itertools.combinations(ratings.ranking_of(e), 2)]
    expected = choix.opt_pairwise(len(names), data, alpha=ratings.FIT_PRIOR, tol=1e-10)
    expected = ratings.ELO_MEAN + ratings.ELO_SCALE * (expected - expected.mean())
    fitted = ratings.fit(entries, names)
    assert np.allclose([fitted[b] for b in names], expected, atol=1e-3)


def game(i: int, seats: str, placings: list[int], table: int = 0, set_: int | None = None) -> JournalEntry:
    return JournalEntry(index=i, game_id=f"g{i}", deal_seed=1, table=table, set=i if set_ is None else set_,
                        seating=0, seats=list(seats), placings=placings, totals=[0] * len(seats))


def test_ties_are_modelled_so_tied_bots_get_equal_ratings_whatever_their_names_or_seats() -> None:
    # the old fit broke ties by a hash of the names: two identical bots with an all-draw record ended apart
    draws = [game(i, "AB" if i % 2 else "BA", [1, 1]) for i in range(12)]
    r = ratings.rate(draws)
    assert r["A"].rating == pytest.approx(r["B"].rating, abs=1e-9) == 1500.0
    # twins X and Y always tie each other; both beat W and lose to V the same number of times, in any seat
    rng = random.Random(4)
    games = []
    for i in range(60):
        seats = rng.sample("XYWV", 4)
        place = {"X": 2, "Y": 2, "W": 4, "V": 1} if i % 3 else {"X": 1, "Y": 1, "W": 3, "V": 4}
        games.append(game(i, "".join(seats), [place[b] for b in seats], set_=i // 4))
    r = ratings.rate(games)
    assert r["X"].rating == pytest.approx(r["Y"].rating, abs=1e-6)
    assert r["X"].plus_minus == pytest.approx(r["Y"].plus_minus, abs=1e-6)
    assert r["V"].rating > r["X"].rating > r["W"].rating
    # a tie for second between A and C under B: A and C equal, B never lost (a bound)
    e1 = game(0, "ABC", [2, 1, 2])
    e2 = game(1, "CAB", [2, 2, 1])
    r = ratings.rate([e1, e2])
    assert r["A"].rating == pytest.approx(r["C"].rating) and r["B"].bound == ">"


def test_a_bot_that_never_lost_is_a_bound_and_does_not_move_the_others() -> None:
    strength = {"A": 0.4, "B": 0.0, "C": -0.4}
    field = synthetic("ABC", 2, strength, deal_sets=12, seed=3)
    alone = ratings.rate(field)
    # the same games plus a bot "Z" that wins every game it plays against each of them
    extra = []
    for i, (opp, s) in enumerate(itertools.product("ABC", range(12))):
        extra.append(game(10_000 + 2 * i, "Z" + opp, [1, 2], table=50 + "ABC".index(opp), set_=s))
        extra.append(game(10_001 + 2 * i, opp + "Z", [2, 1], table=50 + "ABC".index(opp), set_=s))
    r = ratings.rate(field + extra)
    z = r["Z"]
    assert z.bound == ">" and z.high is None and z.plus_minus is None
    for b in "ABC":
        assert r[b].rating == pytest.approx(alone[b].rating, abs=1e-6)
        assert r[b].plus_minus == pytest.approx(alone[b].plus_minus, rel=1e-6)
    # the bound: 36 deal-sets each won against its opponent; P(that) = 5% at the bound, below it less
    assert z.rating > max(r[b].rating for b in "ABC")
    sig = [1 / (1 + math.exp(-(z.rating - r[b].rating) / ratings.ELO_SCALE)) for b in "ABC"]
    assert math.prod(p ** 12 for p in sig) == pytest.approx(0.05, rel=1e-3)
    # and one that never won is an upper bound
    loser = [game(20_000 + i, "AL" if i % 2 else "LA", [1, 2] if i % 2 else [2, 1], table=90, set_=i // 2)
             for i in range(8)]
    r = ratings.rate(field + loser)
    low = r["L"]
    assert low.bound == "<" and low.low is None and low.high == low.rating
    # 4 deal-sets lost to A say little: the bound is where losing all 4 has a 5% chance, near A itself
    p_loss = 1 / (1 + math.exp(-(r["A"].rating - low.rating) / ratings.ELO_SCALE))
    assert p_loss ** 4 == pytest.approx(0.05, rel=1e-3)


def test_no_games_means_everyone_at_the_mean() -> None:
    assert ratings.fit([], ["x", "y"]) == {"x": 1500.0, "y": 1500.0}
    assert ratings.rate([], ["x"])["x"].games == 0


def test_few_games_or_deal_sets_are_provisional() -> None:
    entries = synthetic("ABC", 2, {"A": 0.3, "B": 0.0, "C": -0.3}, deal_sets=3, seed=1)
    r = ratings.rate(entries)
    assert all(x.deal_sets == 6 and x.games == 12 and not x.provisional for x in r.values())
    r = ratings.rate(entries[:8])
    assert any(x.provisional for x in r.values())
    assert all(x.provisional == (x.games < ratings.PROVISIONAL_GAMES or x.deal_sets < ratings.PROVISIONAL_SETS)
               for x in r.values())


def test_ladder_points() -> None:
    e = JournalEntry(index=0, game_id="g", deal_seed=1, table=0, set=0, seating=0, seats=["A", "B", "C", "D"],
                     placings=[1, 2, 3, 4], totals=[9, 3, 1, 0], forfeited=[3])
    tie = JournalEntry(index=1, game_id="h", deal_seed=1, table=0, set=0, seating=1, seats=["A", "B", "C", "D"],
                       placings=[1, 1, 3, 4], totals=[9, 9, 1, 0])
    assert ratings.ladder_points([e, tie]) == {"A": 112, "B": 90, "C": 68, "D": 34}


def results_folder(tmp_path: Path, ladder: bool = False) -> Path:
    extra = "ladder_points = true" if ladder else ""
    t, errors = validate_text(tournament("ABCD", 3, 2, extra), base_dir=tmp_path)
    assert t is not None, errors
    folder = tmp_path / "results"
    write_resolved(t, folder)
    entries = synthetic("ABCD", 3, {"A": 1.5, "B": 0.5, "C": 0.0, "D": -1.0}, deal_sets=2, seed=4)
    entries[0].failures[0] = {"timeout": 2}
    entries[0].forfeited = [0]
    with Journal(folder, make_key(folder)) as j:
        for e in entries:
            j.append(e)
    return folder


def test_standings_compute(tmp_path: Path) -> None:
    folder = results_folder(tmp_path, ladder=True)
    st = standings.compute(folder)
    assert st.name == "syn" and st.games == 4 * 2 * 6
    assert [r.rank for r in st.rows] == [1, 2, 3, 4]
    assert [r.rating for r in st.rows] == sorted((r.rating for r in st.rows), reverse=True)
    assert all(r.games == 36 for r in st.rows)
    assert abs(sum(r.first_pct * r.games / 100 for r in st.rows) - st.games) < 1e-9  # one winner a game
    assert all(1.0 <= r.avg_place <= 3.0 for r in st.rows)
    assert st.failure_kinds == ["timeout"]
    first_game_bot = synthetic("ABCD", 3)[0].seats[0]
    row = next(r for r in st.rows if r.bot == first_game_bot)
    assert row.failures == {"timeout": 2}
    assert all(r.points is not None for r in st.rows)
    # crosstable is antisymmetric
    a, b = st.rows[0].bot, st.rows[1].bot
    ab, ba = st.crosstable[a][b], st.crosstable[b][a]
    assert ab is not None and ba is not None and ab.mean is not None and ba.mean is not None
    assert abs(ab.mean + ba.mean) < 1e-9 and ab.games == ba.games
    assert (ab.wins, ab.losses, ab.draws) == (ba.losses, ba.wins, ba.draws)
    assert ab.ci is not None and ab.ci >= 0
    assert st.crosstable[a][a] is None


def test_standings_render_formats(tmp_path: Path) -> None:
    folder = results_folder(tmp_path)
    table = standings_text.render(folder, "table")
    assert "Rating" in table and "Pairs" in table and "Crosstable" not in table and "Points" not in table
    wide = standings_text.render(folder, "table", wide=True)
    assert "Crosstable" in wide and "Avg score" in wide and "Timeout" in wide
    md = standings_text.render(folder, "md")
    assert md.count("| Rank |") == 1 and "|---|" in md
    rows = list(csv.reader(io.StringIO(standings_text.render(folder, "csv"))))
    assert rows[0][:3] == ["rank", "bot", "rating"] and len(rows) == 5
    data = json.loads(standings_text.render(folder, "json"))
    assert len(data["rows"]) == 4 and set(data["crosstable"]) == set("ABCD")
