"""Standings that tell the truth: W-L-D and LOS per pair, no ±0 without information, noise notes, 100 columns."""

from __future__ import annotations

import json
import math
import random
import re
import statistics
from pathlib import Path

import pytest
import scipy.stats

from arena.settings import FAILURE_KINDS
from arena.tournament import standings, standings_stats, standings_text
from arena.tournament.journal import JournalEntry
from tests.helpers import by_name, folder_of


def test_wld_counts_placings_per_pair_at_multi_seat_tables(tmp_path: Path) -> None:
    # A always first, then B, C: at 3-seat tables every pair is decided by who placed higher
    # and C and D always tie for last place
    def result(g):
        place = {"A": 1, "B": 2, "C": 3, "D": 3}
        return [place[b] for b in g.seats], [{"A": 30, "B": 20, "C": 5, "D": 5}[b] for b in g.seats]

    st = standings.compute(folder_of(tmp_path, list("ABCD"), 3, 2, result), resamples=20)
    x = st.crosstable
    together = 2 * 2 * 6  # tables holding a given pair (2 of 4) x deal-sets x seatings
    ab, ba, cd = x["A"]["B"], x["B"]["A"], x["C"]["D"]
    assert ab is not None and ba is not None and cd is not None
    assert (ab.wins, ab.losses, ab.draws) == (together, 0, 0)
    assert (ba.wins, ba.losses, ba.draws) == (0, together, 0)
    assert (cd.wins, cd.losses, cd.draws) == (0, 0, together)
    # LOS counts deal-sets, not games: A won all 4 deal-sets it shared with B (2 tables x 2 sets); of the 16
    # sign flips of those sets only the observed one does as well, so LOS = 1 - 1/16, not the 0.99999 of 24
    # independent games; B's LOS over A: every flip does at least as well as B did, so 0
    assert ab.los == pytest.approx(1 - 0.5 ** 4)
    assert ba.los == 0.0 and cd.los is None  # draws only: no information
    assert ab.mean == 10 and ab.games == together
    data = json.loads(standings_text.render_standings(st, "json"))
    cell = data["crosstable"]["A"]["B"]
    assert {"mean", "ci", "games", "wins", "losses", "draws", "los"} <= set(cell)
    assert {"rank", "bot", "rating", "ci", "games", "first_pct", "avg_place", "avg_score", "margin", "points",
            "failures", "rating_low", "rating_high"} <= set(data["rows"][0])
    assert data["deal_sets"] == 8 and isinstance(data["notes"], list)


def test_heads_up_wld_is_first_place_and_los_follows_wins_and_losses(tmp_path: Path) -> None:
    rng = random.Random(3)

    def result(g):
        a_wins = rng.random() < 0.7
        first = g.seats.index("A") if a_wins else g.seats.index("B")
        placings = [1 if s == first else 2 for s in range(2)]
        return placings, [50 if p == 1 else 20 for p in placings]

    folder = folder_of(tmp_path, ["A", "B"], 2, 20, result)
    st = standings.compute(folder, resamples=20)
    ab = st.crosstable["A"]["B"]
    assert ab is not None and ab.wins + ab.losses == 40 and ab.draws == 0
    sums: dict[int, int] = {}
    for e in standings.counted_lines(folder)[0].entries:  # per deal-set: A's wins minus losses
        won = e.placings[e.seats.index("A")] == 1
        sums[e.set] = sums.get(e.set, 0) + (1 if won else -1)
    x = list(sums.values())
    t = statistics.mean(x) / (statistics.stdev(x) / math.sqrt(len(x)))
    assert ab.los == pytest.approx(float(scipy.stats.t.cdf(t, len(x) - 1)))
    assert standings_stats.los([]) is None and standings_stats.los([0, 0]) is None
    assert standings_stats.los([2]) is None  # one deal-set: nothing says how far luck goes
    assert standings_stats.los([2, 2, 2]) == 1 - 0.5 ** 3 and standings_stats.los([-1, -1]) == 0.0
    # 3 sets won by 1, one lost by 3: of 16 flips, 9 total >= 0 (8 with +3, and +1+1+1-3) (exact sign-flip test)
    assert standings_stats.los([1, 1, 1, -3]) == pytest.approx(1 - 9 / 16)
    assert standings_stats.los([1, -1, 1, -1]) == standings_stats.los([-1, 1, -1, 1]) == pytest.approx(1 - 11 / 16)
    table = standings_text.render_standings(st, "table")
    assert ab.los is not None and f"{ab.wins}-{ab.losses}-0" in table and f"{100 * ab.los:.1f}%" in table


def test_a_pair_where_one_side_forfeited_every_game_shows_no_margin(tmp_path: Path) -> None:
    def result(g):  # B crashes at once every game: frozen totals 0-0, A placed first
        b = g.seats.index("B")
        failures = [{"crash": 1} if s == b else {} for s in range(2)]
        return [2 if s == b else 1 for s in range(2)], [0, 0], failures, [b]

    st = standings.compute(folder_of(tmp_path, ["A", "B"], 2, 6, result), resamples=20)
    ab = st.crosstable["A"]["B"]
    assert ab is not None and (ab.wins, ab.losses, ab.draws) == (12, 0, 0)
    assert ab.mean is None and ab.ci is None and ab.games == 0
    assert all(r.margin is None for r in st.rows)
    for wide in (False, True):
        text = standings_text.render_standings(st, "table", wide)
        assert "+0.0" not in text and "±0.0" not in text and "12-0-0" in text
    assert st.rows[0].bot == "A" and st.rows[0].failures == {"crash": 0}


def test_no_interval_without_information(tmp_path: Path) -> None:
    # one table, one deal-set: a bootstrap over one deal-set can only draw that deal-set again
    one_set = standings.compute(folder_of(tmp_path / "one", list("AB"), 2, 1, by_name(list("AB"))), resamples=20)
    assert all(r.ci is None for r in one_set.rows)
    assert all(p is None or p.ci is None for row in one_set.crosstable.values() for p in row.values())
    text = standings_text.render_standings(one_set, "table")
    assert "±0" not in text and "±-" in text
    assert "only 1 deal-set was played" in text
    # many deal-sets, but every one ends the same way: no spread, so no interval either
    same = standings.compute(folder_of(tmp_path / "same", list("AB"), 2, 5, by_name(list("AB"))), resamples=20)
    ab = same.crosstable["A"]["B"]
    assert ab is not None and ab.mean == 10 and ab.ci is None
    assert all(r.margin is not None and r.margin.ci is None for r in same.rows)
    assert "±0" not in standings_text.render_standings(same, "table", wide=True)


def test_bots_within_noise_get_a_note_and_clearly_ordered_ones_do_not(tmp_path: Path) -> None:
    rng = random.Random(7)

    def coin(g):  # "twin" and "twin2" are the same bot: every game a coin flip between them; both beat "weak"
        order = sorted(g.seats, key=lambda b: (b == "weak", rng.random()))
        placings = [order.index(b) + 1 for b in g.seats]
        return placings, [10 * (3 - p) for p in placings]

    st = standings.compute(folder_of(tmp_path, ["twin", "twin2", "weak"], 2, 10, coin), resamples=100)
    assert [set(r) for r in st.within_noise] == [{"twin", "twin2"}]
    text = standings_text.render_standings(st, "table")
    assert "are within noise of each other" in text and "weak" not in text.split("note:")[1]
    clear = standings.compute(folder_of(tmp_path / "clear", list("ABC"), 2, 10, by_name(list("ABC"))), resamples=50)
    assert clear.within_noise == [] and "within noise" not in standings_text.render_standings(clear, "table")


def test_default_table_fits_100_columns_and_wide_shows_everything(tmp_path: Path) -> None:
    names = [f"{'bot-with-a-long-name' if i % 3 == 0 else 'b'}{i}" for i in range(12)]
    rng = random.Random(1)

    def result(g):
        order = sorted(g.seats, key=lambda b: rng.random())
        placings = [order.index(b) + 1 for b in g.seats]
        failures = [{FAILURE_KINDS[(g.index + s) % len(FAILURE_KINDS)]: 1} for s in range(len(g.seats))]
        return placings, [rng.randrange(-300, 300) for _ in g.seats], failures, []

    folder = folder_of(tmp_path, names, 2, 2, result, extra="ladder_points = true")
    st = standings.compute(folder, resamples=20)
    assert st.failure_kinds == list(FAILURE_KINDS)
    text = standings_text.render_standings(st, "table")
    assert max(len(line) for line in text.splitlines()) <= standings_text.WIDTH
    assert all(r.bot in text for r in st.rows) and "Fails" in text
    wide = standings_text.render_standings(st, "table", wide=True)
    assert max(len(line) for line in wide.splitlines()) > standings_text.WIDTH
    for column in ["Avg score", "Points", "Crosstable"] + [k.capitalize() for k in FAILURE_KINDS]:
        assert column in wide
    assert "\n".join(line.rstrip() for line in wide.splitlines()) + "\n" == wide


def test_mid_run_a_provisional_bot_is_marked_and_ranked_after_established_ones(tmp_path: Path) -> None:
    # "late" has played 2 games (one won, one lost) while the others have 40-odd: on its rating alone
    # (luck, with 2 games) it would sit above "mid"; it is ranked after every established bot instead
    rng = random.Random(2)
    strength = {"top": 0.8, "mid": 0.0, "low": -0.8, "late": 0.0}
    late_games = iter([1, 2])
    late_table: list[int] = []

    def result(g):
        if "late" in g.seats:
            late_table.append(g.table)
            if g.table != late_table[0] or g.set != 0:  # its first deal-set only: 2 games
                return None
            first = g.seats.index("late") if next(late_games, 2) == 1 else 1 - g.seats.index("late")
            return [1 if s == first else 2 for s in range(2)], [10, 0] if first == 0 else [0, 10]
        order = sorted(g.seats, key=lambda b: -(strength[b] + rng.gammavariate(1, 1)))
        placings = [order.index(b) + 1 for b in g.seats]
        return placings, [10 * (2 - p) for p in placings]

    folder = folder_of(tmp_path, ["top", "mid", "low", "late"], 2, 8, result)
    st = standings.compute(folder)
    rows = {r.bot: r for r in st.rows}
    assert rows["late"].games == 2 and rows["late"].provisional and not rows["mid"].provisional
    assert [r.bot for r in st.rows][-1] == "late" and all(not r.provisional for r in st.rows[:-1])
    assert st.total == 4 * 3 // 2 * 8 * 2 and st.games < st.total and st.partial
    text = standings_text.render_standings(st, "table")
    assert f"truth: {st.games} of {st.total} games" in text
    assert f"{rows['late'].rating:.0f}?" in text and "provisional (late)" in text
    assert "the run is not complete" in text
    data = json.loads(standings_text.render_standings(st, "json"))
    late = next(r for r in data["rows"] if r["bot"] == "late")
    assert late["provisional"] is True and late["deal_sets"] == 1 and late["rank"] == 4
    assert standings_text.render_standings(st, "csv").splitlines()[0].split(",")[10:12] == ["bound", "provisional"]


def test_a_bound_shows_as_a_bound_in_every_output(tmp_path: Path) -> None:
    rng = random.Random(5)

    def result(g):  # "ace" wins every game; the others are coin flips
        order = sorted(g.seats, key=lambda b: (b != "ace", rng.random()))
        placings = [order.index(b) + 1 for b in g.seats]
        return placings, [10 * (2 - p) for p in placings]

    st = standings.compute(folder_of(tmp_path, ["ace", "p", "q"], 2, 10, result))
    ace = st.rows[0]
    assert ace.bot == "ace" and ace.bound == ">" and ace.ci is None and ace.rating_high is None
    assert ace.rating_low == ace.rating
    text = standings_text.render_standings(st, "table")
    assert f"> {ace.rating:.0f}" in text and "lower (upper) bound" in text
    data = json.loads(standings_text.render_standings(st, "json"))["rows"][0]
    assert data["bound"] == ">" and data["rating_high"] is None and data["rating_low"] == data["rating"]
    assert standings_text.render_standings(st, "csv").splitlines()[1].split(",")[10] == ">"


def test_league_standings_show_strength_of_schedule_and_say_the_columns_depend_on_it() -> None:
    from arena.tournament.standings import _standings

    rng = random.Random(3)
    names = [f"{'a-bot-with-a-long-name-' if i % 2 else 'b'}{i}" for i in range(10)]
    entries = []
    for i in range(400):  # a league meets local opponents: the strong ones mostly meet each other
        k = rng.randrange(0, 7)
        seats = rng.sample(names[k:k + 4], 4)
        order = sorted(seats, key=lambda b: names.index(b) + rng.gauss(0, 2))
        placings = [order.index(b) + 1 for b in seats]
        entries.append(JournalEntry(index=i, game_id=f"g{i}", deal_seed=i // 4, table=i // 4, set=0,
                                    seating=i % 4, seats=seats, placings=placings, totals=[10 * (4 - p) for p in placings]))
    st = _standings("lg", entries, names, False, 1.0, 0, 0, [], league=True)
    rating = {r.bot: r.rating for r in st.rows}
    for r in st.rows:  # the mean rating of the opponents at its tables, game by game
        opps = [rating[o] for e in entries if r.bot in e.seats for o in e.seats if o != r.bot]
        assert r.sos == pytest.approx(sum(opps) / len(opps))
    top, bottom = st.rows[0].sos, st.rows[-1].sos
    assert top is not None and bottom is not None and top > bottom  # whom they met differs: 1st% is confounded
    text = standings_text.render_standings(st, "table")
    assert "SoS" in text and "depend on the opponents each bot met" in text
    assert max(len(line) for line in text.splitlines()) <= standings_text.WIDTH
    assert all("sos" in row for row in st.to_data()["rows"])
    plain = _standings("rr", entries, names, False, 1.0, 0, 0, [])
    assert "SoS" not in standings_text.render_standings(plain, "table")
    assert all("sos" not in row for row in plain.to_data()["rows"])


def test_seat_and_first_player_advantage(tmp_path: Path) -> None:
    from arena.rules.game import Game
    from arena.tournament.config import read_resolved

    # whoever plays first (as the rules engine deals it) wins every game; otherwise seats are alike
    folder = tmp_path / "first" / "results"  # where folder_of writes the tournament file before the games
    rules: list = []

    def first_wins(g):
        if not rules:
            rules.append(read_resolved(folder).rules)
        first = Game(rules[0], len(g.seats), g.deal_seed).current
        placings = [1 if s == first else 2 + (s + first) % (len(g.seats) - 1) for s in range(len(g.seats))]
        return placings, [10 * (4 - p) for p in placings]

    assert folder_of(tmp_path / "first", list("ABCD"), 3, 6, first_wins) == folder
    st = standings.compute(folder)
    (sa,) = st.seat_advantage
    assert sa["seats"] == 3 and sa["games"] == st.games and sa["fair_win_rate"] == pytest.approx(1 / 3)
    assert sa["first_player"]["win_rate"] == 1.0 and sa["first_player"]["avg_place"] == 1.0
    assert sum(s["win_rate"] * s["games"] for s in sa["by_seat"]) == pytest.approx(st.games)  # one winner a game
    data = json.loads(standings_text.render_standings(st, "json"))
    assert data["seat_advantage"][0]["first_player"]["games"] == st.games
    # seat 0 always wins: its win rate is 1 with no spread (no interval), the others 0
    seat0 = standings.compute(folder_of(tmp_path / "seat0", list("AB"), 2, 5,
                                        lambda g: ([1, 2], [10, 0])))
    by_seat = seat0.seat_advantage[0]["by_seat"]
    assert [s["win_rate"] for s in by_seat] == [1.0, 0.0] and [s["avg_place"] for s in by_seat] == [1.0, 2.0]
    assert by_seat[0]["win_ci"] is None


def test_the_report_shows_bounds_provisional_bots_and_seat_advantage(tmp_path: Path) -> None:
    from arena.report.render import write_report

    folder = folder_of(tmp_path, list("ABC"), 3, 3, by_name(list("ABC")))  # 18 games, 3 deal-sets: provisional
    st = standings.compute(folder)
    html = write_report(folder).read_text()
    a = st.rows[0]
    assert a.bot == "A" and a.bound == ">" and a.provisional
    row = re.search(r'<tr data-bot="A"[^>]*>.*?</tr>', html, re.S)
    assert row and 'class="provisional"' in row.group(0) and 'data-high=""' in row.group(0)
    assert f"&gt; {a.rating:.0f}<span" in row.group(0)
    assert "Seat advantage at 3-seat tables (18 games" in html and "first to play" in html
    assert "never lost: &gt;" in html  # the interval plot draws the bound, open to the right
