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
from arena.report.folderdata import merge_latency
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
        row = re.search(rf'<tr data-bot="{re.escape(r.bot)}" data-rating="([0-9.]+)" data-ci="([0-9.]*)"', html)
        assert row, r.bot
        assert float(row.group(1)) == pytest.approx(r.rating, abs=0.05)
        if r.bound:  # a bot that never lost (or won): a bound, no interval
            assert row.group(2) == "" and r.ci is None
        else:
            assert float(row.group(2)) == pytest.approx(r.ci, abs=0.05)
    assert "Running: 20 of 24 games" in html
    assert '<meta http-equiv="refresh" content="7">' in html
    assert "http://" not in html.replace("http-equiv", "") and "https://" not in html  # nothing from the network


def test_every_game_is_listed_with_a_replay_page_that_exists(report):
    page, html = report
    games = games_data(html)
    assert sorted(g["index"] for g in games) == list(range(20))
    for g in games:
        assert g["href"] and not g["held"]  # 20 games are 10 whole deal-sets of 2 seatings
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
    writes: list[tuple[int, bool]] = []
    played = [0]

    def fake_write(folder: Path, running: bool | None = None) -> Path:
        writes.append((played[0], bool(running)))
        now[0] += 1.5  # each rewrite takes 1.5 s, so the next waits 7.5 s after it
        return folder / "report.html"

    monkeypatch.setattr(live, "write_report", fake_write)
    lr = live.LiveReport(running, every=5, warn=lambda m: None, clock=lambda: now[0])
    for played[0] in range(1, 41):
        now[0] += 1.0  # a game a second
        lr.game_done(played[0])
    # game 5 (t=5) ends at 6.5, so nothing before 14: games 10 (t=11.5) and 12 (t=13.5) are too early, game 13
    # (t=14.5) is written although 13 is no multiple of 5 (the old rule waited for 15); then 21, 29, 37
    assert [p for p, _ in writes] == [5, 13, 21, 29, 37]
    assert all(r for _, r in writes)
    assert lr.finish() == running / "report.html" and lr.written == 6
    assert writes[-1] == (40, False)  # the last page, of a run that has ended, does not reload


def test_a_live_report_waits_for_every_games_not_only_for_the_pause(running: Path, monkeypatch):
    from arena.report import live

    writes: list[int] = []
    n = 0

    def fake_write(folder: Path, running: bool | None = None) -> Path:
        writes.append(n)
        return folder

    monkeypatch.setattr(live, "write_report", fake_write)
    lr = live.LiveReport(running, every=3, warn=lambda m: None, clock=lambda: 0.0)  # rewrites take no time
    for n in range(1, 11):
        lr.game_done(n)
    assert writes == [3, 6, 9]


def test_an_interrupted_run_leaves_a_report_that_does_not_reload(running: Path, tmp_path: Path):
    html = write_report(running, tmp_path / "stopped.html", running=False).read_text()
    assert "http-equiv" not in html and "reloads" not in html
    assert "Stopped: 20 of 24 games" in html


def test_a_live_report_failure_is_a_warning(tmp_path: Path, monkeypatch):
    from arena.report import live
    from arena.report.live import LiveReport

    def full_disk(folder: Path, running: bool | None = None) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(live, "write_report", full_disk)
    said: list[str] = []
    lr = LiveReport(tmp_path, every=1, warn=said.append)
    lr.game_done(1)
    assert lr.finish() is None and len(said) == 2 and said[0].startswith("warning: the report was not written")
    assert "No space left on device" in said[0]


def forfeit_folder(out: Path) -> Path:
    """3 bots heads-up, 2 deal-sets, every game played; "random-0" forfeits every game it sits in."""
    make_folder(out, 0, bots=3, pool=1, deal_sets=2)
    from arena.integrity import make_key
    from arena.tournament import schedule
    from arena.tournament.config import read_resolved
    from arena.tournament.journal import Journal

    t = read_resolved(out)
    key = make_key(out)
    with Journal(out, key) as journal:
        for index in range(schedule.total_games(t)):
            spec = schedule.game_at(t, index, key)
            seats = list(spec.seats)
            lost = [s for s, b in enumerate(seats) if b == "random-0"]
            placings = [2 if s in lost else 1 for s in range(2)] if lost else [1, 2]
            totals = [0 if s in lost else 40 + index for s in range(2)]
            journal.append(JournalEntry(
                index=index, game_id=spec.game_id, deal_seed=spec.deal_seed, table=spec.table, set=spec.set,
                seating=spec.seating, seats=seats, placings=placings, totals=totals,
                failures=[{"timeout": 1} if s in lost else {} for s in range(2)], forfeited=lost))
    return out


def cells(html: str) -> dict[tuple[str, str], str]:
    """Crosstable cells as text, by (row, column)."""
    found = re.findall(r'<td style="background: [^"]*" data-row="([^"]*)" data-col="([^"]*)"\s+title="([^"]*)">(.*?)</td>',
                       html, re.S)
    return {(a, b): title + " | " + re.sub(r"\s+", " ", body).strip() for a, b, title, body in found}


def test_a_bot_that_forfeited_every_game_has_no_margin_and_its_pairs_show_dashes(tmp_path: Path):
    folder = forfeit_folder(tmp_path / "results")
    st = standings.compute(folder)
    loser = next(r for r in st.rows if r.bot == "random-0")
    p = st.crosstable["random-0"]["greedy-1"]
    assert loser.margin is None and p is not None and p.mean is None
    html = write_report(folder).read_text()
    row = re.search(r'<tr data-bot="random-0".*?</tr>', html, re.S)
    assert row and '<td data-value="">-</td>' in row.group(0)
    cell = cells(html)[("random-0", "greedy-1")]
    assert f"W-L-D {p.wins}-{p.losses}-{p.draws}" in cell and p.wins == 0 and p.losses == 4
    assert cell.endswith(f'- <br><span class="wld" title="wins-losses-draws">0-{p.losses}-0</span>')
    for n in st.notes:
        assert html.count(f"Note: {n}") == 1


def test_crosstable_cells_and_notes_are_the_standings_own(running: Path, report):
    _, html = report
    st = standings.compute(running)
    got = cells(html)
    for a, row in st.crosstable.items():
        for b, p in row.items():
            if a == b:
                continue
            if p is None:
                assert got[(a, b)].endswith("&middot;")
                continue
            los = "-" if p.los is None else f"{100 * p.los:.1f}%"
            assert f"LOS {los}; W-L-D {p.wins}-{p.losses}-{p.draws}" in got[(a, b)]
            mean = "-" if p.mean is None else f"{p.mean:+.1f}"
            assert got[(a, b)].split(" | ")[1].startswith(mean)
    assert st.notes and all(f"Note: {n}" in html for n in st.notes)


def test_a_folder_of_one_deal_set_has_no_intervals_and_says_so(tmp_path: Path):
    folder = make_folder(tmp_path / "results", 2, bots=2, pool=2, deal_sets=1)
    st = standings.compute(folder)
    assert st.deal_sets == 1 and all(r.ci is None for r in st.rows)
    html = write_report(folder).read_text()
    for r in st.rows:
        assert re.search(rf'<tr data-bot="{r.bot}" data-rating="[0-9.]+" data-ci=""', html)
        assert f"<title>{r.bot}: {r.rating:.0f} ({bound_title(r)})</title>" in html
    assert "only 1 deal-set was played" in html
    assert html.count("stroke-width=\"4\"") == 0  # no interval bars


def test_the_interval_plot_draws_the_standings_own_asymmetric_interval(running: Path, report):
    _, html = report
    for r in standings.compute(running).rows:
        span = bound_title(r) if r.bound else f"{r.rating_low:.0f} to {r.rating_high:.0f}"
        assert r.ci is not None or r.bound
        assert f"<title>{r.bot}: {r.rating:.0f} ({span})</title>" in html


def bound_title(r: standings.Row) -> str:
    """The plot's title for a bot without an interval: a bound (never lost or never won), or none."""
    if r.bound is None:
        return "no interval"
    return f"never lost: &gt; {r.rating:.0f}" if r.bound == ">" else f"never won: &lt; {r.rating:.0f}"


def test_an_empty_journal_makes_a_report(tmp_path: Path):
    folder = make_folder(tmp_path / "results", 0, bots=3, pool=1, deal_sets=2)
    html = write_report(folder).read_text()
    assert "Running: 0 of 12 games" in html and games_data(html) == []
    assert "No games yet." in html
    from arena.report.live import LiveReport

    said: list[str] = []
    lr = LiveReport(folder, every=1, warn=said.append)
    lr.game_done(1)
    assert lr.finish() == folder / "report.html" and said == [] and lr.written == 2


def test_a_replay_waits_until_every_seating_of_its_deal_set_is_played(tmp_path: Path):
    folder = make_folder(tmp_path / "results", 3, bots=2, pool=3, deal_sets=2)  # set 0 whole, set 1 half
    page = write_report(folder)
    html = page.read_text()
    games = {g["index"]: g for g in games_data(html)}
    assert [games[i]["set"] for i in range(3)] == [0, 0, 1]
    assert games[0]["href"] and games[1]["href"] and not games[0]["held"]
    assert games[2]["href"] is None and games[2]["held"]
    assert not (page.parent / "report" / "games" / "g000002.html").exists()
    assert "1 game: replay after its twins" in html
    assert 'aria-label="decision latency of' in html  # its latencies count already
    whole = make_folder(tmp_path / "whole", 4, bots=2, pool=4, deal_sets=2)
    page = write_report(whole)
    assert all(g["href"] and not g["held"] for g in games_data(page.read_text()))
    assert (page.parent / "report" / "games" / "g000003.html").is_file()


def test_the_settings_leave_out_env_values_and_base_dir(tmp_path: Path):
    import tomllib

    import tomli_w

    folder = make_folder(tmp_path / "results", 2, bots=2, pool=2, deal_sets=1)
    resolved = folder / "tournament.toml"
    data = tomllib.loads(resolved.read_text())
    data["bots"][0]["env"] = {"API_TOKEN": "s3cr3t-value", "LEVEL": "3"}
    resolved.write_text("# Resolved tournament\n\n" + tomli_w.dumps(data))
    html = write_report(folder).read_text()
    settings = re.search(r'<section id="settings">.*?</section>', html, re.S)
    assert settings
    text = settings.group(0)
    assert "s3cr3t-value" not in html and str(tmp_path) not in html and "base_dir =" not in text
    assert "from results." in html  # the folder by its name, not its local path
    assert "API_TOKEN" in text and "LEVEL" in text and "&#34;\u2026&#34;" in text
    assert 'name = &#34;bench-report&#34;' in text and "[rules]" in text


def test_games_are_listed_by_their_number_whatever_order_they_finished_in(finished: Path, tmp_path: Path):
    import shutil

    folder = tmp_path / "results"
    shutil.copytree(finished, folder, ignore=shutil.ignore_patterns("report*"))
    journal = folder / "journal.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(reversed(lines)))  # as a run finishes them: any order
    assert [json.loads(x)["index"] for x in journal.read_text().splitlines()] == list(range(len(lines)))[::-1]
    games = games_data(write_report(folder).read_text())
    assert [g["index"] for g in games] == list(range(len(lines)))


def test_every_crosstable_cell_shows_wins_losses_and_draws_with_zeros(running: Path, report):
    _, html = report
    st = standings.compute(running)
    draws = []
    for (a, b), cell in cells(html).items():
        p = st.crosstable[a][b]
        if p is None:
            continue
        assert cell.endswith(f'<span class="wld" title="wins-losses-draws">{p.wins}-{p.losses}-{p.draws}</span>')
        draws.append(p.draws)
    assert draws and 0 in draws  # a pair without draws still shows its 0
