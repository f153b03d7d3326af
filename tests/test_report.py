"""The HTML report's model and files, without a browser: numbers as the standings give them, progress,
game links to viewer pages that exist, incremental rewrites, safe embedding (docs/ARCHITECTURE.md section 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.report import write_report
from arena.report.folderdata import los, merge_latency, overlap_notes, pair_counts
from arena.report.gamedata import bin_of, latency_summary, script_json
from arena.tournament import standings
from arena.tournament.journal import JournalEntry
from bench.report import FAILURE_EVERY, make_folder


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of 20 of the 24 games of a 4-bot heads-up tournament (2 deal-sets): still running."""
    return make_folder(tmp_path_factory.mktemp("running") / "results", 20, bots=4, pool=20, deal_sets=2)


@pytest.fixture(scope="module")
def report(running: Path) -> tuple[Path, str]:
    """The report of the running folder (reloading every 7 s) and its HTML."""
    page = write_report(running, refresh_s=7)
    return page, page.read_text()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("finished") / "results", 6, bots=3, pool=3, deal_sets=1)


def games_data(html: str) -> list[dict]:
    m = re.search(r'<script id="games-data" type="application/json">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_the_report_shows_the_standings_numbers_and_progress_of_a_running_folder(running: Path, report):
    _, html = report
    st = standings.compute(running)
    assert st.games == 20
    for r in st.rows:
        row = re.search(rf'<tr data-bot="{re.escape(r.bot)}" data-rating="([0-9.]+)" data-ci="([0-9.]+)"', html)
        assert row, r.bot
        assert float(row.group(1)) == pytest.approx(r.rating, abs=0.05)
        assert float(row.group(2)) == pytest.approx(r.ci, abs=0.05)
    assert "Running: 20 of 24 games" in html
    assert '<meta http-equiv="refresh" content="7">' in html
    assert "http://" not in html.replace("http-equiv", "") and "https://" not in html  # nothing from the network


def test_every_game_is_listed_with_a_replay_page_that_exists(report):
    page, html = report
    games = games_data(html)
    assert sorted(g["index"] for g in games) == list(range(20))
    for g in games:
        target = page.parent / g["href"]
        assert target.is_file()
        assert g["id"] in target.read_text()
        assert g["failed"] == (g["index"] % FAILURE_EVERY == FAILURE_EVERY - 1)
        assert g["kinds"] == (["illegal"] if g["failed"] else [])
    assert (page.parent / "report" / "viewer.js").is_file()


def test_a_finished_report_does_not_reload_and_says_finished(finished: Path, tmp_path: Path):
    page = write_report(finished, tmp_path / "elsewhere" / "final.html")
    html = page.read_text()
    assert "Finished: 6 of 6 games." in html
    assert "http-equiv" not in html
    assert (tmp_path / "elsewhere" / "final" / "games" / "g000000.html").is_file()


def test_a_rewrite_reads_only_records_it_has_not_seen(running: Path, report):
    page, _ = report
    first = page.parent / "report" / "games" / "g000003.html"
    before = first.stat().st_mtime_ns
    write_report(running)
    assert first.stat().st_mtime_ns == before


def test_failures_and_latency_come_from_the_records(running: Path, report):
    _, html = report
    assert 'class="fail">illegal</th>' in html
    rows = standings.compute(running).rows
    failing = [r for r in rows if r.failures.get("illegal")]
    assert failing and sum(r.failures["illegal"] for r in failing) == sum(
        1 for i in range(20) if i % FAILURE_EVERY == FAILURE_EVERY - 1)
    assert "Median ms" in html and html.count('aria-label="decision latency of') == 4


def test_pair_counts_and_likelihood_of_superiority():
    def entry(seats: list[str], placings: list[int]) -> JournalEntry:
        return JournalEntry(index=0, game_id="g", deal_seed=1, table=0, set=0, seating=0, seats=seats,
                            placings=placings, totals=[0] * len(seats))

    pairs = pair_counts([entry(["a", "b"], [1, 2]), entry(["b", "a"], [1, 2]), entry(["a", "b"], [1, 2]),
                         entry(["a", "b", "c"], [1, 1, 3])])
    assert pairs["a"]["b"] == [2, 1, 1]
    assert pairs["b"]["a"] == [1, 2, 1]
    assert pairs["c"]["a"] == [0, 1, 0]
    assert los(0, 0) is None
    assert los(5, 5) == pytest.approx(0.5)
    assert los(10, 0) == pytest.approx(0.99922, abs=1e-4)
    assert los(0, 10) == pytest.approx(1 - 0.99922, abs=1e-4)


def test_overlap_notes_name_neighbours_whose_intervals_overlap():
    rows = [{"bot": "a", "rating": 1600, "ci": 30}, {"bot": "b", "rating": 1550, "ci": 30},
            {"bot": "c", "rating": 1300, "ci": 20}]
    notes = overlap_notes(rows)
    assert len(notes) == 1 and notes[0].startswith("a and b")


def test_latency_quantiles_to_the_histograms_resolution():
    entries = [{"e": "draw", "seat": 0, "ms": 1.0}] * 98 + [{"e": "play", "seat": 0, "ms": 50.0},
                                                             {"e": "play", "seat": 0, "ms": 400.0},
                                                             {"e": "failure", "seat": 1}, {"e": "play", "seat": 1, "ms": 2.0}]
    summary = latency_summary(entries, 2)
    assert summary["count"] == [100, 1] and summary["max"] == [400.0, 2.0]
    e = JournalEntry(index=0, game_id="g", deal_seed=1, table=0, set=0, seating=0, seats=["x", "y"],
                     placings=[1, 2], totals=[0, 0])
    lat = merge_latency([(e, summary), (e, summary)])
    assert lat["x"]["count"] == 200 and lat["x"]["max"] == 400.0
    assert lat["x"]["median"] == pytest.approx(1.0, rel=0.13)
    assert lat["x"]["p99"] == pytest.approx(50.0, rel=0.13)
    assert lat["y"]["median"] == pytest.approx(2.0, rel=0.13)
    assert bin_of(0) == 0 and bin_of(1e9) == bin_of(1e8)


def test_embedded_json_cannot_end_its_script_element():
    text = script_json({"name": "</script><script>alert(1)</script>", "x": "\u2028"})
    assert "<" not in text and "\u2028" not in text
    assert json.loads(text)["name"].startswith("</script>")


def test_cli_report_and_its_errors(running: Path, tmp_path: Path):
    runner = CliRunner()
    got = runner.invoke(app, ["report", str(running), "-o", str(tmp_path / "r.html")])
    assert got.exit_code == 0, got.output
    assert (tmp_path / "r.html").is_file() and "report:" in got.output
    got = runner.invoke(app, ["report", str(tmp_path)])
    assert got.exit_code == 2 and "no journal.jsonl" in got.output
    got = runner.invoke(app, ["report", str(running), "--refresh-s", "-1"])
    assert got.exit_code == 2


def test_a_live_report_is_rewritten_every_n_games_but_never_hogs_the_run(running: Path, monkeypatch):
    from arena.report import live

    now = [0.0]
    writes: list[float] = []

    def fake_write(folder: Path) -> Path:
        writes.append(now[0])
        now[0] += 2.0  # each rewrite takes 2 s
        return folder / "report.html"

    monkeypatch.setattr(live, "write_report", fake_write)
    lr = live.LiveReport(running, every=5, warn=lambda m: None, clock=lambda: now[0])
    for played in range(1, 41):
        now[0] += 1.0  # a game a second
        lr.game_done(played)
    # game 5 at t=5 ends at 7, so nothing before 7 + 5 * 2 = 17: game 10 (t=12) is skipped, game 15 (t=17)
    # is written; and so on, every other multiple of 5
    assert writes == [5.0, 17.0, 29.0, 41.0]
    assert lr.finish() == running / "report.html" and lr.written == 5


def test_a_live_report_failure_is_a_warning(tmp_path: Path, monkeypatch):
    from arena.report import live
    from arena.report.live import LiveReport

    def full_disk(folder: Path) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(live, "write_report", full_disk)
    said: list[str] = []
    lr = LiveReport(tmp_path, every=1, warn=said.append)
    lr.game_done(1)
    assert lr.finish() is None and len(said) == 2 and said[0].startswith("warning: the report was not written")
    assert "No space left on device" in said[0]


def test_pair_cells_use_the_standings_own_counts_when_it_gives_them():
    from arena.report.folderdata import _pair

    assert _pair({"mean": 1.0, "ci": None, "games": 4}, [3, 1, 0]) == {
        "margin": {"mean": 1.0, "ci": None, "games": 4}, "wld": [3, 1, 0], "los": los(3, 1)}
    given = {"mean": 1.0, "ci": None, "games": 4, "wins": 2, "losses": 1, "draws": 1, "los": 0.75}
    assert _pair(given, [3, 1, 0])["wld"] == [2, 1, 1] and _pair(given, [3, 1, 0])["los"] == 0.75
    assert _pair(None, [0, 0, 0]) == {"margin": None, "wld": [0, 0, 0], "los": None}
