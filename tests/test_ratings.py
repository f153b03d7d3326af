"""Plackett-Luce ratings, bootstrap intervals, ladder points, and the standings built on them."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
from pathlib import Path

import choix
import numpy as np

from arena.integrity import make_key
from arena.tournament import ratings, standings
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


def test_strict_order_gives_ordered_non_overlapping_ratings() -> None:
    entries = synthetic("ABC", 2, deal_sets=3) + synthetic("ABC", 3, deal_sets=3)
    # renumber so indices and deal-set groups stay unique across the two batches
    for i, e in enumerate(entries):
        e.index = i
        e.table = i // 6
    r = ratings.rate(entries, resamples=100, seed=3)
    a, b, c = r["A"], r["B"], r["C"]
    assert a.rating > b.rating > c.rating
    assert a.low > b.high and b.low > c.high
    assert abs(np.mean([a.rating, b.rating, c.rating]) - 1500.0) < 1e-6
    assert a.games == b.games == c.games


def test_four_bots_strict_order_three_seats() -> None:
    entries = synthetic("ABCD", 3, deal_sets=3)
    r = ratings.rate(entries, resamples=100)
    vals = [r[b] for b in "ABCD"]
    assert all(x.rating > y.rating for x, y in itertools.pairwise(vals))
    assert all(x.low > y.high for x, y in itertools.pairwise(vals))


def test_order_of_the_journal_does_not_matter() -> None:
    entries = synthetic("ABCDE", 3, {"A": 1.0, "B": 0.5, "C": 0.0, "D": -0.2, "E": -1.0}, seed=5)
    shuffled = list(entries)
    random.Random(1).shuffle(shuffled)
    assert ratings.fit(entries) == ratings.fit(shuffled)
    assert ratings.rate(entries, resamples=50, seed=2) == ratings.rate(shuffled, resamples=50, seed=2)


def test_noisy_data_recovers_the_true_order() -> None:
    strength = {"A": 1.5, "B": 0.7, "C": 0.0, "D": -0.8}
    entries = synthetic("ABCD", 3, strength, deal_sets=30, seed=11)
    fitted = ratings.fit(entries)
    assert sorted(fitted, key=fitted.__getitem__, reverse=True) == ["A", "B", "C", "D"]
    # log-strength differences come back on the Elo-like scale
    assert abs((fitted["A"] - fitted["D"]) / ratings.ELO_SCALE - 2.3) < 0.5


def test_fit_equals_choix_ilsr_rankings() -> None:
    entries = synthetic("ABCDE", 3, {"A": 1.0, "B": 0.5, "C": 0.0, "D": -0.2, "E": -1.0}, seed=5)
    names = list("ABCDE")
    data = [tuple(names.index(b) for b in ratings.ranking_of(e)) for e in sorted(entries, key=lambda e: e.index)]
    expected = choix.ilsr_rankings(len(names), data, alpha=ratings.DEFAULT_ALPHA)
    assert np.allclose(ratings.strengths(entries, names), expected, atol=1e-6)


def test_weights_act_like_repeated_games() -> None:
    entries = synthetic("ABC", 3, {"A": 0.5, "B": 0.0, "C": -0.5}, seed=2)
    names = list("ABC")
    doubled = entries + [JournalEntry(**{**{f: getattr(e, f) for f in e.__struct_fields__},
                                         "index": e.index + 10_000}) for e in entries[:7]]
    w = [2.0 if i < 7 else 1.0 for i in range(len(entries))]
    assert np.allclose(ratings.strengths(entries, names, weights=w), ratings.strengths(doubled, names), atol=1e-6)


def test_ties_are_broken_deterministically_and_independently_of_seat() -> None:
    e1 = JournalEntry(index=0, game_id="g", deal_seed=1, table=0, set=0, seating=0, seats=["A", "B", "C"],
                      placings=[2, 1, 2], totals=[0, 10, 0])
    e2 = JournalEntry(index=1, game_id="g", deal_seed=1, table=0, set=0, seating=1, seats=["C", "A", "B"],
                      placings=[2, 2, 1], totals=[0, 0, 10])
    assert ratings.ranking_of(e1) == ratings.ranking_of(e2)
    assert ratings.ranking_of(e1)[0] == "B"
    r = ratings.rate([e1, e2], resamples=10)
    assert r["B"].rating > r["A"].rating and r["B"].rating > r["C"].rating


def test_no_games_means_everyone_at_the_mean() -> None:
    assert ratings.fit([], ["x", "y"]) == {"x": 1500.0, "y": 1500.0}
    assert ratings.rate([], ["x"])["x"].games == 0


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
    st = standings.compute(folder, resamples=30)
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
    table = standings.render(folder, "table")
    assert "Rating" in table and "Pairs" in table and "Crosstable" not in table and "Points" not in table
    wide = standings.render(folder, "table", wide=True)
    assert "Crosstable" in wide and "Avg score" in wide and "Timeout" in wide
    md = standings.render(folder, "md")
    assert md.count("| Rank |") == 1 and "|---|" in md
    rows = list(csv.reader(io.StringIO(standings.render(folder, "csv"))))
    assert rows[0][:3] == ["rank", "bot", "rating"] and len(rows) == 5
    data = json.loads(standings.render(folder, "json"))
    assert len(data["rows"]) == 4 and set(data["crosstable"]) == set("ABCD")
