"""`arena match A B`: duplicate pairs until the SPRT decides; pairs from the journal, verdicts, end to end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.settings import BotSpec, TimeControl
from arena.tournament import match
from arena.tournament import sprt as sprt_mod
from arena.tournament.journal import JournalEntry
from arena.tournament.sprt import H0, H1, Sprt
from tests.conftest import ROOT
from tests.helpers import CLI, cli, settle


def entry(index: int, a_place: int, b_place: int) -> JournalEntry:
    """Game ``index`` of deal-set index // 2; A in seat 0 on even indices, seat 1 on odd ones."""
    seats, placings = (["A", "B"], [a_place, b_place]) if index % 2 == 0 else (["B", "A"], [b_place, a_place])
    return JournalEntry(index=index, game_id=f"g{index}", deal_seed=index // 2, table=0, set=index // 2,
                        seating=index % 2, seats=seats, placings=placings, totals=[0, 0])


def test_pairs_are_counted_per_deal_set_in_any_order() -> None:
    games = [entry(0, 1, 2), entry(1, 1, 2),      # A wins both: 2-0
             entry(2, 1, 2), entry(3, 2, 1),      # one each: 1-1
             entry(4, 1, 1), entry(5, 2, 1),      # a draw and a loss: 0.5-1.5
             entry(6, 1, 2)]                      # its twin not played yet
    forward = match.tally(games, "A")
    backward = match.tally(games[::-1], "A")
    assert forward.counts == backward.counts == [0, 1, 1, 0, 1]
    assert forward.pairs == 3 and forward.games == 7 and list(forward.waiting) == [(0, 3)]
    assert match.game_score(games[4], "A") == 0.5 and match.game_score(games[3], "B") == 1.0
    assert match.game_score(games[0], "C") is None


def test_reports_say_what_was_decided() -> None:
    test = Sprt(0, 200)
    swept = match.Pairs("A", counts=[0, 0, 0, 0, 8])
    r = match.report(swept, "B", test)
    assert r.verdict == H1 and r.llr >= test.upper
    assert r.verdict_line(100).startswith("H1 accepted: A is stronger than B")
    assert "LLR +3." in r.progress_line() and "[0, 0, 0, 0, 8]" in r.progress_line()
    lost = match.report(match.Pairs("A", counts=[8, 0, 0, 0, 0]), "B", test)
    assert lost.verdict == H0 and lost.verdict_line(100).startswith("H0 accepted: A is not stronger than B")
    even = match.report(match.Pairs("A", counts=[0, 1, 2, 1, 0]), "B", test)
    assert even.verdict is None and even.verdict_line(4).startswith("no decision after 4 pair(s) (--max-pairs 4)")


def entry4(index: int, deal_set: int, seats: list[str], placings: list[int], totals: list[int]) -> JournalEntry:
    return JournalEntry(index=index, game_id=f"g{index}", deal_seed=deal_set, table=0, set=deal_set,
                        seating=index % 2, seats=seats, placings=placings, totals=totals)


def test_a_four_seat_pair_compares_a_and_b_in_the_same_seat_by_margin_and_placing() -> None:
    games = [
        entry4(0, 0, ["A", "X", "Y", "Z"], [1, 2, 3, 4], [120, 40, 20, 0]),   # A: +100 over the others' mean
        entry4(1, 0, ["B", "X", "Y", "Z"], [2, 1, 3, 4], [50, 100, 30, 0]),   # B: 50 - 130/3
        entry4(3, 1, ["Z", "B", "X", "Y"], [1, 2, 2, 4], [100, 10, 10, 0]),   # its twin comes first
        entry4(2, 1, ["Z", "A", "X", "Y"], [2, 1, 3, 4], [50, 90, 20, 0]),
    ]
    pairs = match.tally(games, match.Pairs("A", "B", seats=4))
    assert pairs.pairs == 2 and pairs.games == 4 and not pairs.waiting
    assert pairs.diffs == pytest.approx([100 - (50 - 130 / 3), (90 - 70 / 3) - (10 - 110 / 3)])
    # placing scores: A beat 3 of 3 and B 2 of 3 -> (1 + 1 - 2/3) / 2 = 8/12; then A 3/3, B 1.5/3 -> 9/12
    assert len(pairs.counts) == 13 and pairs.counts[8] == 1 and pairs.counts[9] == 1
    # penalty scoring (the lowest total places first): the margin's sign follows the placings
    low = entry4(0, 0, ["A", "X"], [1, 2], [10, 60])
    assert match.margin(low, "A") == 50 and match.margin(low, "X") == -50
    assert match.game_score(games[2], "B") == pytest.approx(1.5 / 3) and match.margin(games[0], "Q") is None


def test_the_match_schedule_seats_a_and_b_alike_on_the_same_deal(tmp_path: Path) -> None:
    from arena.tournament import schedule

    bots = [BotSpec(n, "greedy") for n in ("a", "b", "x", "y", "z")]
    t, errors = match.tournament(bots[0], bots[1], "basic", 8, TimeControl(), tmp_path / "out", base_dir=tmp_path,
                                 seats=4, opponents=bots[2:])
    assert errors == [] and t is not None and t.format == "match" and schedule.total_games(t) == 16
    assert schedule.seatings_per_set(t) == 2 and schedule.table_count(t) == 1   # what the report counts a set by
    key = b"k" * 32
    games = [schedule.game_at(t, i, key) for i in range(16)]
    assert [g.index for g in schedule.iter_games(t, key)] == list(range(16))
    for j in range(8):
        ga, gb = games[2 * j], games[2 * j + 1]
        assert ga.deal_seed == gb.deal_seed and ga.set == gb.set == j
        assert ga.seats.index("a") == gb.seats.index("b") == j % 4     # the same seat, rotating
        assert [s for s in ga.seats if s != "a"] == [s for s in gb.seats if s != "b"]
        assert "b" not in ga.seats and "a" not in gb.seats
    assert len({g.deal_seed for g in games}) == 8
    bad, errors = match.tournament(bots[0], bots[1], "basic", 8, TimeControl(), tmp_path / "out", base_dir=tmp_path,
                                   seats=4, opponents=bots[2:4])
    assert bad is None and any("seats - 1 other bots" in e.message for e in errors)


def test_final_reports_correct_the_margin_estimate_and_say_what_an_open_match_needs() -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    test = match.Test(match.MARGIN, Sprt(0, 20))
    pairs, r = match.Pairs("A", "B"), None
    for d in rng.standard_t(3, size=3000) + 0.25:     # about 80 nElo: H1 after some tens of pairs
        pairs.diffs.append(float(d))
        pairs.counts[2] += 1
        r = match.report(pairs, "B", test)
        if r.verdict is not None:
            break
    assert r is not None and r.verdict == H1
    final = match.report(pairs, "B", test, final=True, max_pairs=3000)
    assert final.corrected is not None and isinstance(final.estimate, sprt_mod.MarginEstimate)
    mid, lo, hi = final.corrected
    assert lo < mid < hi and mid < final.estimate.nelo     # pulled back from the lucky run that stopped it
    line = final.verdict_line(3000)
    assert "naive; corrected for the sequential stop (median-unbiased)" in line and "nElo" in line
    # undecided at the cap: both estimates, and the pairs still needed from where the walk is
    open_ = match.Pairs("A", "B", diffs=[1.0, -1.0, 2.0, -1.5, 0.5], counts=[0, 0, 5, 0, 0])
    shown = match.report(open_, "B", test, final=True, max_pairs=5)
    assert shown.verdict is None and shown.corrected is not None and shown.more is not None and shown.more > 100
    assert "the data show nElo" in shown.verdict_line(5) and "more pair(s) at the current estimate" in shown.verdict_line(5)
    # the placing test keeps its naive estimate only, and says so
    swept = match.report(match.Pairs("A", counts=[0, 0, 0, 1, 12]), "B", Sprt(0, 200), final=True, max_pairs=100)
    assert swept.verdict == H1 and swept.corrected is None
    assert "naive (biased away from 0 by the stop)" in swept.verdict_line(100)


def test_the_match_is_a_two_bot_tournament(tmp_path: Path) -> None:
    t, errors = match.tournament(BotSpec("greedy", "greedy"), BotSpec("random", "random"), "basic", 50,
                                 TimeControl(decision_ms=500, clock="cpu"), tmp_path / "out", base_dir=tmp_path)
    assert errors == [] and t is not None
    assert (t.seats, t.seating, t.deal_sets, t.bot_names, t.format) == (2, "all", 50, ("greedy", "random"), "round_robin")
    assert t.time.decision_ms == 500 and t.output_dir == tmp_path / "out"
    t, errors = match.tournament(BotSpec("a", "greedy"), BotSpec("b", "random"), "basci", 50, TimeControl(),
                                 tmp_path / "out", base_dir=tmp_path)
    assert t is None and any("did you mean 'basic'" in e.message for e in errors)


@pytest.mark.parametrize("args,words", [
    (["--elo0", "10", "--elo1", "5"], "elo0 must be below elo1"),
    (["--alpha", "0"], "alpha must be between 0 and 1"),
    (["--max-pairs", "0"], "--max-pairs: expected at least 1"),
    (["--variant", "nope"], "expected one of"),
    (["--test", "elo"], "--test: expected one of margin, penta"),
    (["--seats", "7"], "--seats: expected 2 to 6"),
    (["--seats", "4"], "--opponents: a 4-seat match needs 3 opponent(s), got 0"),
    (["--seats", "3", "--opponents", "random"], "needs 2 opponent(s), got 1"),
    (["--opponents", "random,,greedy"], "without empty names"),
])
def test_bad_match_options_are_one_sentence(tmp_path: Path, args: list[str], words: str) -> None:
    base = ["match", "greedy", "random", "--variant", "basic", "--out", str(tmp_path / "m")]
    res = CliRunner().invoke(app, base + args)
    assert res.exit_code == 2, res.output
    assert words in res.stderr and "Traceback" not in res.output
    assert not (tmp_path / "m").exists()  # refused before anything started


# -- end to end: real bots, sandboxed, through the tournament runner ---------------------------------

@pytest.mark.slow
@pytest.mark.timeout(300)  # whole matches: ~110 s each under load 20
@pytest.mark.usefixtures("no_leaks")
def test_greedy_against_random_accepts_h1_quickly_and_the_folder_is_a_tournament(tmp_path: Path) -> None:
    out = tmp_path / "m"
    got = cli("match", "greedy", "random", "--variant", "basic", "--test", "penta", "--elo0", "0", "--elo1", "200",
              "--max-pairs", "40", "--out", out)
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    progress = [x for x in lines if x.startswith("pairs ")]
    assert progress and all("LLR" in x and "(-2.94, +2.94)" in x and "penta [" in x for x in progress)
    assert [int(x.split()[1]) for x in progress] == list(range(1, len(progress) + 1))  # a line per pair
    verdict = lines[-1]
    assert verdict.startswith("H1 accepted: greedy is stronger than random"), got.stdout
    pairs = int(progress[-1].split()[1])
    assert pairs < 40
    assert not settle(), "the match left processes running"
    # the folder is an ordinary results folder: every line verifies, standings count it
    st = cli("standings", out, "--format", "json")
    assert st.returncode == 0, st.stderr
    data = json.loads(st.stdout)
    assert data["games"] == 2 * pairs and data["deal_sets"] == pairs
    cell = data["crosstable"]["greedy"]["random"]
    assert cell["wins"] + cell["losses"] + cell["draws"] == 2 * pairs
    # a decided match resumed plays nothing and says the same
    again = cli("match", "greedy", "random", "--variant", "basic", "--test", "penta", "--elo0", "0", "--elo1", "200",
                "--max-pairs", "40", "--out", out, "--resume")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == verdict
    assert len((out / "journal.jsonl").read_text().splitlines()) == 2 * pairs
    # without --resume the folder is not overwritten
    refused = cli("match", "greedy", "random", "--variant", "basic", "--elo1", "200", "--max-pairs", "40", "--out", out)
    assert refused.returncode == 2 and "--resume" in refused.stderr


@pytest.mark.slow
@pytest.mark.timeout(300)  # whole matches: ~110 s each under load 20
@pytest.mark.usefixtures("no_leaks")
def test_random_against_greedy_accepts_h0_and_max_pairs_stops_an_open_match(tmp_path: Path) -> None:
    got = cli("match", "random", "greedy", "--variant", "basic", "--test", "penta", "--elo1", "200",
              "--out", tmp_path / "h0")
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[-1].startswith("H0 accepted: random is not stronger than greedy")
    # two copies of one bot under a narrow hypothesis: no decision in 2 pairs
    open_ = cli("match", "greedy", "greedy", "--variant", "basic", "--max-pairs", "2", "--out", tmp_path / "open")
    assert open_.returncode == 0, open_.stderr
    assert open_.stdout.splitlines()[-1].startswith("no decision after 2 pair(s) (--max-pairs 2)")
    assert "greedy vs greedy#2" in open_.stdout
    assert not settle()


@pytest.mark.slow
@pytest.mark.timeout(300)  # whole matches: ~110 s each under load 20
@pytest.mark.usefixtures("no_leaks")
def test_an_interrupted_match_resumes_where_it_stopped(tmp_path: Path) -> None:
    import signal

    out = tmp_path / "m"
    args = ["match", "greedy", "random", "--variant", "basic", "--test", "penta", "--elo1", "200", "--out", str(out)]
    # niced (CPU clock: its bots are charged the same) so that on a loaded machine this test reads the
    # first pair's line and signals before the match can decide on its own
    proc = subprocess.Popen(CLI + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: os.nice(10))
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("pairs    1 "):
                proc.send_signal(signal.SIGINT)
                break
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted after" in err and "--resume" in err
    before = len((out / "journal.jsonl").read_text().splitlines())
    assert 2 <= before < 16
    again = cli(*args, "--resume")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1].startswith("H1 accepted: greedy is stronger than random")
    lines = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines()]
    indices = [e["index"] for e in lines]
    assert len(indices) == len(set(indices)) > before  # nothing played twice, nothing lost
    # it stopped after the pair an uninterrupted match would have stopped after: the first
    # pair, in game order, at which the SPRT over these same games decides
    test, pairs, decided_at = Sprt(0, 200), match.Pairs("greedy", "random"), None
    for e in sorted((msgspec.convert(x, JournalEntry) for x in lines), key=lambda e: e.index):
        if pairs.add(e) and decided_at is None and match.report(pairs, "random", test).verdict is not None:
            decided_at = pairs.pairs
    assert decided_at is not None and pairs.pairs == decided_at, (pairs.pairs, decided_at)
    assert f"after {decided_at} pair(s)" in again.stdout.splitlines()[-1]
    assert not settle()


@pytest.mark.slow
@pytest.mark.timeout(300)  # whole matches: ~110 s each under load 20
@pytest.mark.usefixtures("no_leaks")
def test_the_margin_test_decides_greedy_over_random_on_few_pairs_and_corrects_its_estimate(tmp_path: Path) -> None:
    got = cli("match", "greedy", "random", "--variant", "basic", "--max-pairs", "200", "--out", tmp_path / "m")
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert "margin test: nElo of the pairs' score differences" in got.stdout
    progress = [x for x in lines if x.startswith("pairs ")]
    assert progress and all("diff " in x and "nElo " in x and "(-2.94, +2.94)" in x for x in progress)
    assert lines[-1].startswith("H1 accepted: greedy is stronger than random (elo1 = 20 nElo")
    assert "naive; corrected for the sequential stop (median-unbiased)" in lines[-1]
    assert len(progress) < 100
    assert not settle()


@pytest.mark.slow
@pytest.mark.timeout(300)  # whole matches: ~110 s each under load 20
@pytest.mark.usefixtures("no_leaks")
def test_a_four_seat_match_against_opponents_resumes_and_says_what_an_open_match_shows(tmp_path: Path) -> None:
    out = tmp_path / "m4"
    args: list[str | Path] = ["match", "greedy", "random", "--variant", "basic", "--seats", "4", "--opponents",
                              "greedy,random,greedy", "--elo1", "20", "--max-pairs", "3", "--out", out]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert "4 seats, both against greedy#2, random#2, greedy#3 in the same seat on the same deal" in first.stdout
    lines = sorted((json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines()), key=lambda e: e["index"])
    assert len(lines) == 6

    def seed(e: dict) -> int:   # the journal hides deal seeds; a game's record header keeps its own
        return json.loads((out / e["record"]).read_text().splitlines()[0])["seed"]

    for a_game, b_game in zip(lines[0::2], lines[1::2]):
        assert seed(a_game) == seed(b_game)
        assert a_game["seats"].index("greedy") == b_game["seats"].index("random")
        assert "random" not in a_game["seats"] and "greedy" not in b_game["seats"]
    assert len({seed(e) for e in lines}) == 3
    last = first.stdout.splitlines()[-1]
    # 3 pairs cannot reach the bound at elo1 = 20 nElo (the pseudo-pairs cap delta_hat at 0.75: LLR <= 0.17)
    assert last.startswith("no decision after 3 pair(s) (--max-pairs 3)"), last
    assert "the data show nElo" in last and "more pair(s) at the current estimate" in last
    # cut the journal back to one pair and a half, then resume: the same games again, nothing twice
    journal = out / "journal.jsonl"
    kept = journal.read_text().splitlines()[:3]
    journal.write_text("\n".join(kept) + "\n")
    again = cli(*args, "--resume")
    assert again.returncode == 0, again.stderr
    after = [json.loads(x) for x in journal.read_text().splitlines()]
    assert sorted(e["index"] for e in after) == list(range(6))
    assert [seed(e) for e in sorted(after, key=lambda e: e["index"])] == [seed(e) for e in lines]
    penta = cli("match", "greedy", "random", "--variant", "basic", "--seats", "4", "--opponents",
                "greedy,random,greedy", "--test", "penta", "--max-pairs", "2", "--out", tmp_path / "p4")
    assert penta.returncode == 0, penta.stderr
    assert "pentanomial test on placings" in penta.stdout and "penta [" in penta.stdout
    assert not settle()
