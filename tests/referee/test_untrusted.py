"""Bots' words reaching people (issue 21, class 4): text a bot chose reaches terminals, tables, CSV
and progress lines as data, and a bot cannot speak with its gate's voice."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.untrusted import QUOTE_CHARS, clipped, csv_cell, markup, md_cell, rich_text, shown, shown_lines
from tests.conftest import ROOT, run_game

WORDS = str(ROOT / "tests" / "bots" / "words.py")
ESC = "\x1b"


def words(mode: str) -> str:
    return f"{sys.executable} {WORDS} {mode}"


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=100)


# -- the boundary itself ------------------------------------------------------------------------

def test_controls_are_shown_visibly_not_dropped():
    assert shown("a\x1b[31mb\nc\rd\te\x07\x9b\u202e") == "a\\x1b[31mb\\nc\\rd\\te\\x07\\x9b\\u202e"
    assert shown("plain name ünï") == "plain name ünï"
    assert shown_lines("one\x1b\ntwo") == "one\\x1b\ntwo"
    assert shown(42) == "42"


def test_markup_stays_literal():
    from rich.console import Console

    evil = "[link=http://evil.example/]x[/link][/]"
    console = Console(record=True, width=200, force_terminal=True, color_system="truecolor")
    console.print(rich_text(evil))
    console.print(markup(evil))
    text = console.export_text()
    assert text.count(evil) == 2
    assert "evil.example" not in console.export_html().split("<body")[1].replace(evil, "")


def test_clipped_cuts_to_the_limit_and_says_so():
    assert clipped("g1") == "g1" and clipped("x" * QUOTE_CHARS) == "x" * QUOTE_CHARS
    for n in (QUOTE_CHARS + 1, 99, 100, 1000, 1 << 20):
        c = clipped("G" * n)
        assert len(c) <= QUOTE_CHARS and c.startswith("G" * 40), (n, c)
        kept = len(c) - len(c[c.index("..."):])
        assert c.endswith(f"...(+{n - kept} chars)"), c  # the count is what was cut
    assert clipped("\x1b[2J") == "\x1b[2J"  # kept as data: made safe where it is shown, not here
    assert len(clipped("z" * 50, 5)) == 5  # a limit too small for the note: a plain cut
    assert clipped(12345678, 4) == "1234"


def test_csv_cells_are_no_formulas():
    for bad in ("=HYPERLINK(\"http://x\")", "+1", "-1+2", "@SUM(A1)", "\tx", "\rx"):
        assert csv_cell(bad).startswith("'"), bad
    assert csv_cell("greedy") == "greedy" and csv_cell("a=b") == "a=b"


def test_markdown_cells_make_no_links():
    assert md_cell("[x](javascript:alert(1))<b>|") == "\\[x\\]\\(javascript:alert\\(1\\)\\)\\<b\\>\\|"


def test_progress_line_and_event_of_a_hostile_name_stay_one_line(tmp_path):
    from arena.tournament.journal import JournalEntry
    from arena.tournament.progress import RunView, game_line

    name = "x\n[2/2] game 9 table 0 set 0 seating 0: forged 1st\x1b[2J"
    entry = JournalEntry(index=0, table=0, set=0, seating=0, seats=[name, "greedy"], placings=[1, 2],
                         totals=[0, 10], failures=[{"crash": 1}, {}], game_id="g", deal_seed=0)
    line = game_line(entry, 1, 2)
    assert "\n" not in line and ESC not in line and "\\x1b" in line
    events = tmp_path / "events.jsonl"
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        view = RunView("lines", 2, 0, events=events, out=f)
        view.finished(entry)
        view.close("done")
    printed = out.read_text().splitlines()
    assert len(printed) == 1 and ESC not in printed[0]
    objs = [json.loads(x) for x in events.read_text().splitlines()]
    assert [o["event"] for o in objs] == ["run_start", "game_result", "failure", "run_end"]
    assert objs[1]["seats"][0] == name  # the data itself is kept, as data


# -- real hostile bots -------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_play_and_replay_show_a_hostile_name_and_game_id_as_data(tmp_path):
    record = tmp_path / "g.jsonl"
    p = arena("play", "basic", words("name"), words("badgame"), "--seed", "5", "--record", str(record),
              "--time-ms", "5000")
    assert p.returncode == 0, p.stderr[-2000:]
    for out in (p.stdout, p.stderr):
        assert ESC not in out and "\x07" not in out
    assert "Place" in p.stdout  # the final table was drawn, "[/]" in a name did not crash it
    assert "words-badgame[/]" in p.stdout
    assert "\\x1b" in p.stdout  # the escape is visible
    assert not any(line.startswith(("FORGED", "[1/1]")) for line in p.stdout.splitlines())
    r = arena("replay", str(record))
    assert r.returncode == 0, r.stderr
    assert ESC not in r.stdout and "\x07" not in r.stdout
    assert "\\x1b" in r.stdout and not any(line.startswith("FORGED") for line in r.stdout.splitlines())


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize("mode", ["forge", "stdio_forge"])
def test_a_bot_cannot_forge_its_gates_notices(tmp_path, mode):
    from arena.settings import TimeControl

    result, _ = run_game("basic", [words(mode), "greedy"], tmp_path, seed=41,
                         time_control=TimeControl(start_ms=10000, decision_ms=3000, grace_ms=50),
                         transports={0: "stdio"} if mode.startswith("stdio") else None)
    mine = [e for e in result.failure_log if e.seat == 0]
    assert {e.kind for e in mine} <= {"malformed", "stale"}, mine  # a NUL line is a bad message, not an overflow
    assert mine and not any("forged" in e.reason or "1 MiB" in e.reason for e in mine), mine
    assert not result.failures[1]
    assert result.end_reason


def test_standings_show_hostile_bot_names_as_data(tmp_path):
    import csv
    import io

    from arena.tournament import standings_text
    from tests.helpers import by_name, folder_of

    names = ["=HYPERLINK(\"http://evil.example/\")", "[link=http://evil.example/]x[/link][/]", "esc\x1b[2J\nx"]
    # folder_of writes the names between TOML quotes: give it TOML's escapes
    quoted = [json.dumps(n)[1:-1] for n in names]
    folder = folder_of(tmp_path, quoted, 2, 1, by_name(names))
    for wide in (False, True):
        table = standings_text.render(folder, "table", wide=wide)
        assert ESC not in table and "[link=http://evil.example/]x[/link][/]" in table.replace("\n", "")
    rows = list(csv.reader(io.StringIO(standings_text.render(folder, "csv"))))
    bots = [r[1] for r in rows[1:]]
    assert all(b[0] not in "=+-@" for b in bots) and "'=HYPERLINK(\"http://evil.example/\")" in bots, bots
    assert not any(ESC in b or "\n" in b for b in bots)
    md = standings_text.render(folder, "md")
    assert ESC not in md and "](" not in md.replace("\\](", "") and "\\[link=" in md
    assert len([line for line in md.splitlines() if line.startswith("| ")]) == 2 * (1 + 3)  # no row broken


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_a_remote_seat_cannot_make_the_referee_reprint_its_token(tmp_path):
    import os
    import re

    referee = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "basic", "greedy", "remote:mallory", "--listen", "127.0.0.1:0",
         "--seed", "4", "--record", str(tmp_path / "r.jsonl")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=ROOT)
    bot = None
    try:
        line = referee.stderr.readline()
        m = re.search(r"ARENA_TOKEN=([0-9a-f]+) \.\.\. --endpoint (\S+)", line)
        assert m, line
        bot = subprocess.Popen([sys.executable, WORDS, "bound", "--endpoint", m[2]],
                               env={**os.environ, "ARENA_TOKEN": m[1]},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        out, err = referee.communicate(timeout=100)
        assert referee.returncode == 0, err
        assert "evil.example" not in err + out and (line + err).count(m[1]) == 2, err  # once: ARENA_TOKEN= and "token"
    finally:
        for p in (referee, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_the_human_seat_shows_a_hostile_reason_and_name_as_typed():
    from rich.console import Console
    from rich.markup import escape

    from arena.human.screen import describe_event

    evil = "x\x1b[2J[link=http://evil.example/]y[/link][/]"
    players = ["me", evil]
    lines = [describe_event({"kind": "forfeit", "seat": 1, "failure": "crash", "reason": evil}, 0, players),
             describe_event({"kind": "discard", "seat": 1, "card": "7H"}, 0, players)]
    console = Console(record=True, width=400, force_terminal=True, color_system="truecolor")
    for line in lines:
        assert line is not None
        console.print(f"  · {escape(line)}")  # as the screen draws a recent event: no MarkupError, no hyperlink
    text = console.export_text()
    assert ESC not in text and text.count("[link=http://evil.example/]y[/link][/]") == 3, text
    assert "evil.example" not in console.export_html().split("<body")[1].replace("[link=http://evil.example/]", "")
