"""Fixes from an independent review of the tournament side, each with the test that failed before it.

Fast tests only (no process is started): log names, check-bot's output check, the tournament
file's ``[[history]]`` and gauntlet checks, the standings of bots with no games, fingerprints.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena.referee.checks import OUTPUT_LIMIT, output
from arena.referee.launch import LOG_CAP_BYTES, log_path, rotated
from arena.tournament import standings, standings_text
from arena.tournament.config import Tournament, validate_text
from tests.helpers import folder_of


def test_different_bot_names_never_share_a_log_file(tmp_path: Path) -> None:
    names = ["a b", "a_b", "a/b", "a.b", "x" * 61, "x" * 60, "", "é", "_"]
    paths = [log_path(tmp_path, n) for n in names]
    assert len(set(paths)) == len(names)
    assert all(p.parent == tmp_path and p.name.endswith(".log") and "/" not in p.name for p in paths)
    assert log_path(tmp_path, "a_b").name == "a_b.log"  # a name that is already safe keeps its log's name
    assert log_path(tmp_path, "a b") == log_path(tmp_path, "a b")  # the same name, the same log (restarts)


def _output_check(log_dir: Path, name: str, current: int, older: int) -> tuple[bool | None, str]:
    """check-bot's output check on a bot whose log holds ``current`` bytes and its rotated half ``older``."""
    log = log_path(log_dir / "session", name)
    log.parent.mkdir(parents=True)
    log.write_bytes(b"x" * current)
    if older:
        rotated(log).write_bytes(b"y" * older)
    seen: list[tuple[bool | None, str]] = []
    checker = SimpleNamespace(log_dir=log_dir, transport="zmq", games_played=3,
                              emit=lambda _name, ok, detail: seen.append((ok, detail)))
    output(checker, None, SimpleNamespace(spec=SimpleNamespace(name=name)))  # type: ignore[arg-type]
    assert len(seen) == 1
    return seen[0]


def test_the_output_check_counts_the_rotated_log(tmp_path: Path) -> None:
    ok, detail = _output_check(tmp_path, "chatty", 1000, LOG_CAP_BYTES)
    assert ok is False
    assert f"at least {LOG_CAP_BYTES + 1000} bytes" in detail and "latest 1-2 MiB" in detail
    assert "dropping the oldest" in detail and " -- fix: " in detail


def test_the_output_check_passes_a_quiet_bot(tmp_path: Path) -> None:
    ok, detail = _output_check(tmp_path, "quiet", OUTPUT_LIMIT - 1, 0)
    assert ok is True and f"{OUTPUT_LIMIT - 1} bytes of output" in detail


HISTORY_BASE = """\
name = "club"
variant = "basic"
seats = 2
deal_sets = 2

[[bots]]
name = "a"
command = "random"

[[bots]]
name = "b"
command = "greedy"

[[bots]]
name = "c"
command = "random"

[[history]]
"""


@pytest.mark.parametrize(("generation", "words"), [
    ('bots = ["a", "a"]\ndeal_sets = 1', "history[0].bots: 'a' is named twice"),
    ('bots = ["b", "a"]\ndeal_sets = 1', "history[0].bots: expected the bots in the order of the [[bots]] entries"),
    ('bots = ["a"]\ndeal_sets = 1', "history[0].bots: a 2-seat table needs at least 2 bots"),
    ('bots = ["a", "z"]\ndeal_sets = 1', "history[0].bots: 'z' is not one of the [[bots]]"),
    ('bots = ["a", "b"]\ndeal_sets = 3', "history[0].deal_sets: deal_sets = 3 is more than the file's deal_sets = 2"),
])
def test_a_history_the_file_could_not_have_grown_from_is_refused(generation: str, words: str) -> None:
    t, errors = validate_text(HISTORY_BASE + generation + "\n", base_dir=Path("/tmp"), file="t.toml")
    assert t is None and len(errors) == 1, [str(e) for e in errors]
    assert words in str(errors[0]) and "written by `arena run --resume`" in str(errors[0])


def test_a_history_the_file_grew_from_is_accepted() -> None:
    t, errors = validate_text(HISTORY_BASE + 'bots = ["a", "c"]\ndeal_sets = 1\n', base_dir=Path("/tmp"), file="t.toml")
    assert t is not None, [str(e) for e in errors]
    assert [(g.bots, g.deal_sets) for g in t.history] == [(("a", "c"), 1)]


def _without_d(tmp_path: Path) -> Path:
    """A results folder of A, B, C, D heads-up where A beats B beats C and no game of D is played yet."""
    def result(g):
        if "D" in g.seats:
            return None
        placings = [sorted(g.seats).index(b) + 1 for b in g.seats]
        return placings, [10 * (2 - p) for p in placings]

    return folder_of(tmp_path, list("ABCD"), 2, 2, result)


def test_a_bot_with_no_games_is_ranked_last_without_a_rating(tmp_path: Path) -> None:
    st = standings.compute(_without_d(tmp_path), resamples=20)  # standings during a run
    assert [(r.bot, r.games > 0) for r in st.rows] == [("A", True), ("B", True), ("C", True), ("D", False)]
    table = standings_text.render_standings(st, "table")
    d_line = next(line for line in table.splitlines() if "│ D " in line)
    assert d_line.split("│")[3].strip() == "-", table
    rows = json.loads(standings_text.render_standings(st, "json"))["rows"]
    assert [r["rating"] is None for r in rows] == [False, False, False, True]
    assert standings_text.render_standings(st, "csv").splitlines()[4].startswith("4,D,,")


def _gauntlet_text(max_tables: int) -> str:
    return (f'name = "g"\nvariant = "basic"\nseats = 3\nformat = "gauntlet"\nchallengers = ["A", "B"]\n'
            f"max_tables = {max_tables}\n" + "".join(f'[[bots]]\nname = "{b}"\ncommand = "random"\n' for b in "ABCDEFG"))


def test_a_gauntlet_cap_that_would_give_challengers_unequal_fields_is_refused(tmp_path: Path) -> None:
    t, errors = validate_text(_gauntlet_text(7), base_dir=tmp_path, file="g.toml")
    assert t is None and len(errors) == 1, [str(e) for e in errors]
    assert "max_tables: expected a multiple of the 2 challengers" in str(errors[0]) and "use 6" in str(errors[0])


def test_a_gauntlet_cap_that_is_a_multiple_gives_each_challenger_the_same_opponents(tmp_path: Path) -> None:
    from arena.tournament.schedule import table_at, table_count

    t, errors = validate_text(_gauntlet_text(6), base_dir=tmp_path, file="g.toml")
    assert t is not None, [str(e) for e in errors]
    tables = [table_at(t, i) for i in range(table_count(t))]
    fields = {c: sorted(tuple(b for b in tab if b != c) for tab in tables if c in tab) for c in "AB"}
    assert len(fields["A"]) == 3 and fields["A"] == fields["B"]
    full, _ = validate_text(_gauntlet_text(2 * 10 + 1), base_dir=tmp_path, file="g.toml")  # above the 2 x C(5, 2)
    assert full is not None and table_count(full) == 20


def test_games_of_a_bot_that_is_not_in_the_folder_is_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from arena.cli import app

    folder = _without_d(tmp_path)
    bad = CliRunner().invoke(app, ["games", str(folder), "--bot", "nosuchbot"])
    assert bad.exit_code == 2, bad.output
    assert "--bot 'nosuchbot': no bot of that name" in bad.output and "the bots are: A, B, C, D" in bad.output
    none_yet = CliRunner().invoke(app, ["games", str(folder), "--bot", "D"])
    assert none_yet.exit_code == 0 and "0 game(s)" in none_yet.output
    some = CliRunner().invoke(app, ["games", str(folder), "--bot", "A"])
    assert some.exit_code == 0 and "8 game(s)" in some.output  # A-B and A-C, 2 deal-sets x 2 seatings


def test_growing_a_tournament_keeps_its_bots_in_order(tmp_path: Path) -> None:
    from arena.tournament.growth import growth_problem

    def of(names: str) -> Tournament:
        text = ('name = "g"\nvariant = "basic"\nseats = 2\n'
                + "".join(f'[[bots]]\nname = "{b}"\ncommand = "random"\n' for b in names))
        t, errors = validate_text(text, base_dir=tmp_path)
        assert t is not None, errors
        return t

    assert growth_problem(of("ABC"), of("AXBCY"), []) is None  # new bots anywhere
    why = growth_problem(of("ABC"), of("BAC"), [])
    assert why is not None and "reordered" in why  # else [[history]] would name them out of the file's order


def test_what_the_arena_writes_in_a_bots_folder_does_not_change_its_fingerprint(tmp_path: Path) -> None:
    from dataclasses import replace

    from arena.report.render import ASSETS
    from arena.tournament import fingerprints
    from arena.tournament.config import load

    assert fingerprints.REPORT_ASSETS == ASSETS
    (tmp_path / "bot.py").write_text("print('hello')\n")
    text = ('name = "here"\nvariant = "basic"\nseats = 2\ndeal_sets = {n}\noutput = "results"\nsandbox = false\n'
            '[[bots]]\nname = "mine"\ncommand = "python3 bot.py"\ncwd = "."\n'
            '[[bots]]\nname = "other"\ncommand = "greedy"\n')
    file = tmp_path / "t.toml"
    file.write_text(text.format(n=2))
    events = tmp_path / "events.jsonl"
    events.write_text("")

    def mine() -> str:
        t = replace(load(file), arena_files=(str(events),))
        [fp] = [fp for fp in fingerprints.of_tournament(t, tmp_path / "results") if fp.bot == "mine"]
        return fp.program

    first = mine()
    file.write_text(text.format(n=5))  # raising deal_sets: how a tournament grows
    events.write_text('{"event": "game"}\n')
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.key").write_bytes(b"k" * 32)  # an earlier --out
    (tmp_path / "elsewhere" / "journal.jsonl").write_text("{}\n")
    (tmp_path / "rep" / "games").mkdir(parents=True)  # arena report --out rep.html
    for name in ASSETS:
        (tmp_path / "rep" / name).write_text("asset")
    (tmp_path / "rep.html").write_text("<html>")
    assert mine() == first
    (tmp_path / "bot.py").write_text("print('changed')\n")
    assert mine() != first  # the bot's own files still count
    (tmp_path / "bot.py").write_text("print('hello')\n")
    (tmp_path / "notes.html").write_text("mine")  # an HTML file that is not a report is the bot's
    assert mine() != first
