"""The schedule (round robin and gauntlet): balance properties, duplicate deal seeds, lazy index arithmetic."""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from dataclasses import dataclass

import pytest

from arena.tournament.config import validate_text
from arena.tournament.designs import balanced_subset, seatings, unrank_combination, williams
from arena.tournament.schedule import (
    full_table_count,
    game_at,
    iter_games,
    table_count,
    total_games,
)


@dataclass(frozen=True)
class T:
    bot_names: tuple[str, ...]
    seats: int
    deal_sets: int = 2
    seating: str = "all"
    max_tables: int | None = None
    seed: int = 1
    twin_suits: str = "same"
    format: str = "round_robin"
    challengers: tuple[str, ...] = ()


KEY = bytes(range(32))  # a fixed secret key: deal seeds and game ids depend on it


def bots(n: int) -> tuple[str, ...]:
    return tuple(f"bot{i:02d}" for i in range(n))


@pytest.mark.parametrize("k", range(2, 9))
def test_williams_balances_seats_and_neighbours(k: int) -> None:
    rows = williams(k)
    assert len(rows) == (k if k % 2 == 0 else 2 * k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    for seat in range(k):
        assert Counter(r[seat] for r in rows) == {b: len(rows) // k for b in range(k)}
    pairs = Counter((r[j], r[j + 1]) for r in rows for j in range(k - 1))
    assert len(pairs) == k * (k - 1)  # every ordered pair
    assert len(set(pairs.values())) == 1  # equally often


def test_seating_designs_sizes() -> None:
    assert len(seatings(4, "all")) == 24
    assert len(seatings(5, "williams")) == 10
    assert len(seatings(6, "williams")) == 6
    assert seatings(3, "rotate") == ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    with pytest.raises(ValueError):
        seatings(3, "shuffle")


def test_unrank_matches_lexicographic_combinations() -> None:
    for n, k in [(5, 2), (6, 3), (7, 4), (4, 4)]:
        assert [unrank_combination(n, k, r) for r in range(math.comb(n, k))] == list(
            itertools.combinations(range(n), k))


@pytest.mark.parametrize("design,k,n", [("all", 3, 5), ("all", 4, 6), ("williams", 5, 7), ("williams", 4, 5),
                                        ("rotate", 3, 6)])
def test_round_robin_properties(design: str, k: int, n: int) -> None:
    t = T(bots(n), k, deal_sets=2, seating=design)
    games = list(iter_games(t, KEY))
    per_set = len(seatings(k, design))
    assert len(games) == total_games(t) == math.comb(n, k) * 2 * per_set
    assert [g.index for g in games] == list(range(len(games)))
    assert len({g.game_id for g in games}) == len(games)

    # each pair of bots meets equally often
    pairs = Counter(p for g in games for p in itertools.combinations(sorted(g.seats), 2))
    assert len(pairs) == math.comb(n, 2) and len(set(pairs.values())) == 1

    # every bot sits in every seat equally often (overall and within each table)
    seat_counts = Counter((b, s) for g in games for s, b in enumerate(g.seats))
    assert len(set(seat_counts.values())) == 1 and len(seat_counts) == n * k
    for table in range(table_count(t)):
        tg = [g for g in games if g.table == table]
        c = Counter((b, s) for g in tg for s, b in enumerate(g.seats))
        assert len(set(c.values())) == 1 and len(c) == k * k

    # duplicate play: one deal seed per (table, set), shared by all its seatings, distinct otherwise
    by_set: dict[tuple[int, int], set[int]] = {}
    for g in games:
        by_set.setdefault((g.table, g.set), set()).add(g.deal_seed)
        assert sorted(g.seats) == sorted(g.bots)
    assert all(len(s) == 1 for s in by_set.values())
    assert len({next(iter(s)) for s in by_set.values()}) == len(by_set)


def test_game_at_matches_iter_games() -> None:
    for t in [T(bots(6), 3), T(bots(7), 5, seating="williams", deal_sets=3), T(bots(9), 4, max_tables=10)]:
        games = list(iter_games(t, KEY))
        assert [game_at(t, i, KEY) for i in range(len(games))] == games
        with pytest.raises(IndexError):
            game_at(t, len(games), KEY)


def test_schedule_is_deterministic_and_deals_come_from_the_key() -> None:
    a = T(bots(5), 2, seed=1)
    assert list(iter_games(a, KEY)) == list(iter_games(T(bots(5), 2, seed=1), KEY))
    games, rekeyed = list(iter_games(a, KEY)), list(iter_games(a, bytes(32)))
    assert [(g.table, g.set, g.seating, g.seats) for g in games] == [(g.table, g.set, g.seating, g.seats) for g in rekeyed]
    assert all(g.deal_seed != r.deal_seed and g.game_id != r.game_id for g, r in zip(games, rekeyed))
    # the tournament seed makes the schedule, not the deals: without the key they cannot be computed
    assert [g.deal_seed for g in iter_games(T(bots(5), 2, seed=2), KEY)] == [g.deal_seed for g in games]
    assert len({g.game_id for g in games}) == len(games)


def test_max_tables_gives_a_balanced_distinct_subset() -> None:
    n, k, m = 10, 4, 25
    tables = balanced_subset(n, k, m, 7)
    assert len(tables) == m and len(set(tables)) == m
    use = Counter(b for tb in tables for b in tb)
    assert max(use.values()) - min(use.values()) <= 1  # 100 seats over 10 bots: exactly 10 each
    assert balanced_subset(n, k, m, 7) == tables
    assert balanced_subset(n, k, m, 8) != tables
    # nearly all combinations: still distinct
    near = balanced_subset(6, 3, 19, 1)
    assert len(set(near)) == 19
    t = T(bots(n), k, max_tables=m)
    assert table_count(t) == m and total_games(t) == m * 2 * 24
    # a cap above C(n, k) is just the full round robin
    assert table_count(T(bots(5), 2, max_tables=1000)) == 10


def test_huge_round_robin_is_not_materialized() -> None:
    t = T(bots(2000), 4, deal_sets=2, seating="all")
    start = time.perf_counter()
    total = total_games(t)
    assert total == math.comb(2000, 4) * 2 * 24
    last = game_at(t, total - 1, KEY)
    assert last.bots == bots(2000)[-4:]
    middle = game_at(t, total // 2, KEY)
    first = list(itertools.islice(iter_games(t, KEY), 5))
    assert first[0] == game_at(t, 0, KEY) and first[4] == game_at(t, 4, KEY)
    assert middle.index == total // 2
    assert time.perf_counter() - start < 2.0
    # with a cap, only the capped tables are built even for a huge C(n, k)
    capped = T(bots(500), 5, max_tables=200, seating="williams")
    assert total_games(capped) == 200 * 2 * 10
    uses = Counter(b for i in range(200) for b in game_at(capped, i * 20, KEY).bots)
    assert set(uses.values()) == {2}


def test_schedule_from_a_real_tournament() -> None:
    text = 'name = "x"\nvariant = "basic"\nseats = 2\ndeal_sets = 1\n' + "".join(
        f'[[bots]]\nname = "{b}"\ncommand = "random"\n' for b in "abc")
    t, errors = validate_text(text)
    assert errors == [] and t is not None
    games = list(iter_games(t, KEY))
    assert [g.seats for g in games] == [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]


# -- gauntlet ---------------------------------------------------------------------------------------

def gauntlet(n: int, k: int, challengers: tuple[int, ...], **kw) -> T:
    names = bots(n)
    return T(names, k, format="gauntlet", challengers=tuple(names[i] for i in challengers), **kw)


@pytest.mark.parametrize("n,k,chal,design", [(5, 2, (0,), "all"), (6, 3, (1, 4), "all"), (7, 4, (0, 3, 6), "williams"),
                                             (6, 5, (2,), "rotate")])
def test_gauntlet_tables_hold_exactly_one_challenger_and_every_pool_combination(n, k, chal, design) -> None:
    t = gauntlet(n, k, chal, seating=design, deal_sets=3)
    names, pool = t.bot_names, [b for b in bots(n) if b not in t.challengers]
    per = math.comb(len(pool), k - 1)
    assert table_count(t) == full_table_count(t) == len(chal) * per
    games = list(iter_games(t, KEY))
    assert len(games) == total_games(t) == len(chal) * per * 3 * len(seatings(k, design))
    tables = {g.table: g.bots for g in games}
    for bots_ in tables.values():
        assert sum(b in t.challengers for b in bots_) == 1  # every table holds a challenger, never two
        assert list(bots_) == sorted(bots_, key=names.index)  # file order
    # each challenger meets every (k-1)-combination of the pool exactly once
    for c in t.challengers:
        faced = sorted(tuple(b for b in bots_ if b != c) for bots_ in tables.values() if c in bots_)
        assert faced == sorted(itertools.combinations(pool, k - 1))
    # challengers take turns, so a run cut short has played them alike
    assert [next(b for b in tables[i] if b in t.challengers) for i in range(len(chal))] == list(t.challengers)
    # duplicate play as in the round robin: one deal seed per (table, set), every seating once
    by_set: dict[tuple[int, int], list] = {}
    for g in games:
        by_set.setdefault((g.table, g.set), []).append(g)
    for group in by_set.values():
        assert len({g.deal_seed for g in group}) == 1
        assert sorted(g.seating for g in group) == list(range(len(seatings(k, design))))


def test_gauntlet_games_by_index_are_deterministic_and_resumable() -> None:
    t = gauntlet(6, 3, (0, 5), deal_sets=2)
    games = list(iter_games(t, KEY))
    assert [game_at(t, i, KEY) for i in range(len(games))] == games
    assert list(iter_games(gauntlet(6, 3, (0, 5), deal_sets=2), KEY)) == games
    # a resumed run asks for the games it lacks by index: any subset in any order gives the same games
    todo = list(range(len(games)))[::-3]
    assert [game_at(t, i, KEY) for i in todo] == [games[i] for i in todo]
    with pytest.raises(IndexError):
        game_at(t, len(games), KEY)
    # the order challengers are named in does not matter: tables follow the file's order of bots
    assert list(iter_games(T(t.bot_names, 3, format="gauntlet", challengers=t.challengers[::-1]), KEY)) == games


def test_gauntlet_with_max_tables_shares_a_balanced_field() -> None:
    t = gauntlet(10, 4, (0, 1), max_tables=25, seed=3)  # 2 x C(8, 3) = 112 tables in full
    assert full_table_count(t) == 112 and table_count(t) == 25 and total_games(t) == 25 * 2 * 24
    tables = [game_at(t, i * 48, KEY).bots for i in range(25)]
    assert len(set(tables)) == 25
    assert all(sum(b in t.challengers for b in tb) == 1 for tb in tables)
    fields = {c: [tuple(b for b in tb if b != c) for tb in tables if c in tb] for c in t.challengers}
    assert len(fields[t.challengers[0]]) == 13 and len(fields[t.challengers[1]]) == 12
    assert fields[t.challengers[1]] == fields[t.challengers[0]][:12]  # the same opponents, in the same order
    use = Counter(b for f in fields[t.challengers[0]] for b in f)
    assert set(use) == set(bots(10)[2:]) and max(use.values()) - min(use.values()) <= 1
    assert [game_at(t, i * 48, KEY).bots for i in range(25)] == tables
    # a cap at or above the full gauntlet is the full gauntlet
    assert table_count(gauntlet(10, 4, (0, 1), max_tables=500)) == 112


def test_a_source_without_a_format_is_a_round_robin() -> None:
    @dataclass(frozen=True)
    class Old:
        bot_names: tuple[str, ...]
        seats: int
        deal_sets: int = 1
        seating: str = "all"
        max_tables: int | None = None
        seed: int = 1
        twin_suits: str = "same"

    assert list(iter_games(Old(bots(4), 2), KEY)) == list(iter_games(T(bots(4), 2, deal_sets=1), KEY))
