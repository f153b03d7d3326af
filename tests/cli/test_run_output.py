"""What `arena run` shows while it runs: a progress line that fits 80 columns, one line per game when
stderr is not a terminal, standings every N games, and a JSON Lines event stream for other tools."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.journal import JournalEntry
from arena.tournament.progress import RunView, bar_line, game_line
from tests.conftest import MISBEHAVE

ROOT = Path(__file__).resolve().parents[2]


def _entry(**kw) -> JournalEntry:
    base = dict(index=40, game_id="g1", deal_seed=1, table=3, set=1, seating=2, seats=["greedy", "random", "mine"],
                placings=[2, 3, 1], totals=[10, 40, 0], failures=[{}, {"timeout": 2}, {}], forfeited=[1])
    return JournalEntry(**{**base, **kw})


def test_bar_line_keeps_count_rate_eta_and_failures_within_80_columns():
    for done, total, fails in ((0, 180, 0), (41, 180, 3), (99_999, 1_000_000, 123_456), (180, 180, 0)):
        line = bar_line(done, total, played=max(done, 1), elapsed_s=12.5, failures=fails)
        assert len(line) <= 80, line
        assert f"{done}/{total}" in line and f"fail {fails}" in line and "ETA" in line and "/s" in line


def test_game_line_names_table_seats_placings_and_failures():
    line = game_line(_entry(), done=41, total=180)
    assert line.startswith("[41/180] game 40 table 3 set 1 seating 2: mine 1st, greedy 2nd, random 3rd")
    assert "failures: random timeout 2" in line and "forfeited: random" in line


def test_events_stream_and_standings_every_n(tmp_path):
    shown: list[str] = []

    class Out:
        def write(self, text: str) -> None:
            shown.append(text)

        def flush(self) -> None:
            pass

    events = tmp_path / "ev.jsonl"
    view = RunView("lines", total=4, already=1, standings_every=2, standings=lambda: "THE TABLE", events=events,
                   out=Out())
    for i in (1, 2, 3):
        view.started(i)
        view.finished(_entry(index=i, failures=[{}, {}, {"crash": 1}] if i == 2 else [{}, {}, {}], forfeited=[]))
    view.close("finished")
    text = "".join(shown)
    assert [line.split("]")[0] for line in text.splitlines() if line.startswith("[")] == ["[2/4", "[3/4", "[4/4"]
    assert text.count("THE TABLE") == 1 and "standings after 3 of 4 games" in text
    got = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["event"] for e in got] == ["run_start", "game_start", "game_result", "game_start", "game_result",
                                         "failure", "game_start", "game_result", "run_end"]
    assert got[5] == {**got[5], "index": 2, "bot": "mine", "kind": "crash", "count": 1}
    assert all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", e["time"]) for e in got)


@pytest.mark.slow
def test_run_without_a_terminal_prints_a_line_per_game_and_writes_events(tmp_path):
    (tmp_path / "t.toml").write_text(f'''
name = "lines"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = 2
seed = 1
sandbox = false
output = "out"
[rules]
end = "deals"
deals = 1
[[bots]]
name = "greedy"
command = "greedy"
[[bots]]
name = "crasher"
command = "{sys.executable} {MISBEHAVE} crash"
''')
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tmp_path / "t.toml"), "--standings-every", "2",
                           "--events", str(tmp_path / "ev.jsonl")], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if re.match(r"\[\d+/4\] game \d+ table 0 ", line)]
    assert len(lines) == 4 and all("crasher" in line and "greedy" in line for line in lines)
    assert any("failures: crasher crash 1" in line for line in lines)
    assert done.stderr.count("standings after") == 2
    events = [json.loads(line) for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end" and events[-1]["outcome"] == "finished"
    assert kinds.count("game_start") == 4 and kinds.count("game_result") == 4
    assert sorted(e["index"] for e in events if e["event"] == "game_result") == [0, 1, 2, 3]
    assert any(e["event"] == "failure" and e["bot"] == "crasher" and e["kind"] == "crash" for e in events)


@pytest.mark.slow
def test_games_lists_a_bots_failed_games_with_their_records(tmp_path):
    (tmp_path / "t.toml").write_text(f'''
name = "games"
variant = "basic"
seats = 2
deal_sets = 1
concurrency = 1
seed = 2
sandbox = false
output = "out"
[rules]
end = "deals"
deals = 1
[[bots]]
name = "greedy"
command = "greedy"
[[bots]]
name = "crasher"
command = "{sys.executable} {MISBEHAVE} crash"
''')
    ran = subprocess.run([sys.executable, "-m", "arena", "run", str(tmp_path / "t.toml"), "--progress", "none"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert ran.returncode == 0, ran.stderr
    out = tmp_path / "out"

    def games(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena", "games", str(out), *args], capture_output=True,
                              text=True, cwd=ROOT, timeout=60)

    every = games().stdout.splitlines()
    assert len(every) == 2 and all(line.startswith("game ") and "| record: " in line for line in every)
    crashed = games("--bot", "crasher", "--kind", "crash").stdout.splitlines()
    assert crashed and all("crasher crash" in line for line in crashed)
    assert games("--bot", "greedy", "--failed").stdout == ""  # greedy itself never failed
    listed = json.loads(games("--failed", "--format", "json").stdout)
    assert listed and all(Path(g["record_path"]).is_file() for g in listed)
    bad = games("--kind", "crashh")
    assert bad.returncode == 2 and "expected one of" in bad.stderr
