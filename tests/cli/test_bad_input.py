"""Bad input to every command: one clear sentence on stderr and exit 2, never a traceback, never accepted.

These run the real command line in-process (typer's CliRunner): each case is
refused before any bot or worker process would start.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from arena.cli import app
from tests.conftest import ROOT

runner = CliRunner()
GOLDEN = ROOT / "tests" / "golden" / "basic.jsonl"

GOOD = """\
name = "t"
variant = "basic"
seats = 2

[[bots]]
name = "a"
command = "random"

[[bots]]
name = "b"
command = "greedy"
"""


def arena(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def refused(res: Result, *words: str) -> str:
    """Exit 2 with exactly one `error:` sentence (or validate's `file:line: key: message` lines); returns stderr."""
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    err = res.stderr
    assert "Traceback" not in err and "Traceback" not in res.stdout
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) <= 1, err
    for w in words:
        assert w in err, (w, err)
    return err


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def refused_file(tmp_path: Path, text: str, key: str, *words: str) -> None:
    """`validate` and `run` both report the problem as `file:line: key: message`."""
    file = write(tmp_path, text)
    commands: tuple[list[str | Path], ...] = (["validate", file], ["run", file])
    for command in commands:
        err = refused(arena(*command), *words)
        problems = [line for line in err.splitlines() if line.startswith(f"{file}:")]
        assert problems[-1].endswith("problem(s); nothing was run"), err
        assert any(f": {key}: " in p or (not key and p) for p in problems[:-1]), (key, err)
    assert not (tmp_path / "results").exists()


# -- tournament files ---------------------------------------------------------------------------

def test_a_file_nested_100000_deep(tmp_path: Path) -> None:
    refused_file(tmp_path, "x = " + "[" * 100_000 + "\n", "", "nested too deeply")
    refused_file(tmp_path, "x = " + "{a = " * 100_000 + "\n", "", "nested too deeply")


@pytest.mark.parametrize("output,words", [
    ("/dev/null/x", ["'/dev/null' is not a folder"]),
    ("/proc/arena-results", ["cannot be written", "/proc"]),
    ("results\\u0000x", ["NUL"]),
    ("a-file", ["exists and is not a folder"]),
])
def test_an_output_that_cannot_be_a_results_folder(tmp_path: Path, output: str, words: list[str]) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    refused_file(tmp_path, GOOD.replace('seats = 2\n', f'seats = 2\noutput = "{output}"\n'), "output", *words)


def test_out_option_that_cannot_be_a_results_folder(tmp_path: Path) -> None:
    file = write(tmp_path, GOOD)
    refused(arena("run", file, "--out", "/dev/null/x"), "--out", "'/dev/null' is not a folder")
    (tmp_path / "f").write_text("")
    refused(arena("run", file, "--out", tmp_path / "f"), "exists and is not a folder")


def test_a_bot_program_that_is_not_executable(tmp_path: Path) -> None:
    (tmp_path / "bot.sh").write_text("#!/bin/sh\n")
    refused_file(tmp_path, GOOD.replace('command = "greedy"', 'command = "./bot.sh"'), "bots[1].command",
                 "is not executable")
    os.chmod(tmp_path / "bot.sh", stat.S_IRWXU)
    file = write(tmp_path, GOOD.replace('command = "greedy"', 'command = "./bot.sh"'))
    assert arena("validate", file).exit_code == 0


@pytest.mark.slow  # 0.7-1.1 s of CPU or own time alone: too near the fast tier's bounds on a loaded machine
def test_a_missing_program_or_script(tmp_path: Path) -> None:
    refused_file(tmp_path, GOOD.replace('command = "greedy"', 'command = "ghost-bot-xyz --fast"'),
                 "bots[1].command", "'ghost-bot-xyz' not found", "not on PATH")
    refused_file(tmp_path, GOOD.replace('command = "greedy"', 'command = "python3 ghost_bot_typo.py"'),
                 "bots[1].command", "'ghost_bot_typo.py'", "not a file")
    refused_file(tmp_path, GOOD.replace('command = "greedy"', 'command = "node -r x ghost.js"'),
                 "bots[1].command", "'ghost.js'")
    (tmp_path / "real.py").write_text("")
    ok = write(tmp_path, GOOD.replace('command = "greedy"', 'command = "python3 -u real.py"'))
    assert arena("validate", ok).exit_code == 0
    ok = write(tmp_path, GOOD.replace('command = "greedy"', 'command = "python3 -m sample_bots.greedy"'))
    assert arena("validate", ok).exit_code == 0


@pytest.mark.parametrize("env,key,words", [
    ('{ "A=B" = "1" }', "bots[1].env.A=B", ["without '='"]),
    ('{ A = "x\\u0000y" }', "bots[1].env.A", ["NUL"]),
    ('{ A = 3 }', "bots[1].env.A", ["expected a string value"]),
])
def test_bad_environment_variables(tmp_path: Path, env: str, key: str, words: list[str]) -> None:
    refused_file(tmp_path, GOOD.replace('command = "greedy"', f'command = "greedy"\nenv = {env}'), key, *words)


def test_a_huge_schedule_says_how_many_games_and_is_refused_unless_asked(tmp_path: Path) -> None:
    huge = GOOD.replace("seats = 2\n", "seats = 2\ndeal_sets = 1000000000\n")
    refused_file(tmp_path, huge, "deal_sets", "2,000,000,000 games", "max_games = 1,000,000")
    allowed = write(tmp_path, huge.replace("seats = 2\n", "seats = 2\nmax_games = 2000000000\n"))
    res = arena("validate", allowed)
    assert res.exit_code == 0 and "2000000000 games" in res.stdout


def test_concurrency_beyond_the_maximum(tmp_path: Path) -> None:
    refused_file(tmp_path, GOOD.replace("seats = 2\n", "seats = 2\nconcurrency = 100000\n"), "concurrency",
                 "at most 256")


# -- replay -------------------------------------------------------------------------------------

def _record(tmp_path: Path, change_header: dict | None = None, line: int | None = None, entry: object = None,
            raw: str | None = None) -> Path:
    lines = GOLDEN.read_text().splitlines()
    if change_header is not None:
        header = json.loads(lines[0]) | change_header
        lines[0] = json.dumps({k: v for k, v in header.items() if v is not ...})
    if line is not None:
        lines[line - 1] = raw if raw is not None else json.dumps(entry)
    p = tmp_path / "r.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def _draw(seat: object = 0, **extra: object) -> dict:
    return {"e": "draw", "seat": seat, "source": "stock", "card": "7H"} | extra


BAD_RECORDS: dict[str, tuple[dict[str, Any] | None, int | None, object, str | None, str]] = {
    "players 0": ({"players": 0}, None, None, None, "header says 0 players"),
    "players 1000": ({"players": 1000}, None, None, None, "header says 1000 players"),
    "seed of the wrong type": ({"seed": "7"}, None, None, None, "'seed' must be a whole number"),
    "no rules": ({"rules": ...}, None, None, None, "'rules' must be an object"),
    "bad rules": ({"rules": {"decks": "many"}}, None, None, None, "not a valid rule set"),
    "seat names": ({"seats": ["a"]}, None, None, None, "'seats' must be a list of 3 names"),
    "seat out of range": (None, 4, _draw(seat=3), None, "r.jsonl:4: draw entry field 'seat' must be a seat number"),
    "negative seat": (None, 4, _draw(seat=-1), None, "from 0 to 2, got -1"),
    "seat of the wrong type": (None, 4, _draw(seat="0"), None, "got \"0\""),
    "missing field": (None, 4, {"e": "draw", "seat": 0}, None, "r.jsonl:4: draw entry has no 'source' field"),
    "wrong type": (None, 5, {"e": "play", "seat": 0, "actions": "none", "discard": "7H"}, None,
                   "r.jsonl:5: play entry field 'actions'"),
    "bad action": (None, 5, {"e": "play", "seat": 0, "actions": [{"type": "meld", "cards": 7}], "discard": None},
                   None, "action 0 (meld) field 'cards'"),
    "unknown kind": (None, 4, {"e": "teleport"}, None, "r.jsonl:4: unknown entry kind 'teleport'"),
    "not an object": (None, 4, [1, 2], None, "r.jsonl:4: an entry must be a JSON object"),
    "not JSON": (None, 6, None, "{nope", "r.jsonl:6: not a JSON line"),
    "nested 100000 deep": (None, 6, None, "[" * 100_000, "r.jsonl:6: JSON nested too deeply"),
    "header not an object": (None, 1, None, "[1, 2]", "r.jsonl:1: not a game record"),
}


@pytest.mark.parametrize("verify", [False, True], ids=["replay", "verify"])
@pytest.mark.parametrize("case", list(BAD_RECORDS))
def test_a_malformed_record_names_its_line(tmp_path: Path, case: str, verify: bool) -> None:
    header, line, entry, raw, words = BAD_RECORDS[case]
    path = _record(tmp_path, header, line, entry, raw)
    refused(arena("replay", path, *(["--verify"] if verify else [])), words)


def test_an_empty_or_unreadable_record(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    refused(arena("replay", tmp_path / "empty.jsonl"), "empty file")
    refused(arena("replay", tmp_path), "cannot read the record")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\n")
    refused(arena("replay", tmp_path / "bin.jsonl"), "bin.jsonl:1: not UTF-8")


def test_a_well_formed_record_that_does_not_hold_is_exit_1(tmp_path: Path) -> None:
    lines = GOLDEN.read_text().splitlines()
    n = next(i for i, x in enumerate(lines) if json.loads(x).get("e") == "draw")
    wrong = json.loads(lines[n]) | {"seat": (json.loads(lines[n])["seat"] + 1) % 3}
    path = _record(tmp_path, None, n + 1, wrong)
    res = arena("replay", path, "--verify")
    assert res.exit_code == 1 and "does not verify" in res.stdout
    assert arena("replay", GOLDEN, "--verify").exit_code == 0


# -- play ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,words", [
    (["--record", "/dev/null/x.jsonl"], ["--record /dev/null/x.jsonl", "/dev/null is not a folder"]),
    (["--listen", "notaport"], ["--listen 'notaport'", "HOST:PORT"]),
    (["--listen", "127.0.0.1:99999"], ["from 0 to 65535"]),
    (["--listen", "203.0.113.7:5555"], ["cannot listen there"]),
    (["--stdio", "5"], ["--stdio 5: no such seat", "0 to 1"]),
    (["--remote-wait-s", "0"], ["--remote-wait-s"]),
], ids=["record", "listen-word", "listen-port", "listen-foreign-address", "stdio-seat", "remote-wait"])
def test_play_options(tmp_path: Path, args: list[str], words: list[str]) -> None:
    refused(arena("play", "basic", "greedy", "greedy", *args), *words)


def test_check_bot_refuses_tcp_for_a_stdio_bot() -> None:
    refused(arena("check-bot", "greedy", "--tcp", "--stdio"), "--tcp", "a stdio bot has none")
    refused(arena("check-bot", "stdio:node x.js", "--tcp"), "drop --tcp")


def test_play_refuses_to_overwrite_a_record_or_to_invent_its_folder(tmp_path: Path) -> None:
    existing = tmp_path / "game.jsonl"
    existing.write_text("my earlier game\n")
    refused(arena("play", "basic", "greedy", "greedy", "--record", existing), "the file exists", "--force")
    assert existing.read_text() == "my earlier game\n"
    missing = tmp_path / "no" / "such" / "game.jsonl"
    refused(arena("play", "basic", "greedy", "greedy", "--record", missing), f"the folder {missing.parent} does "
            "not exist", "mkdir -p")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("bot,words", [
    ("", ["seat 1: the bot command is empty"]),
    ("   ", ["seat 1: the bot command is empty"]),
    ("stdio:", ["seat 1: `stdio:` needs a command"]),
    ("python3 ghost_bot_typo.py", ["'ghost_bot_typo.py'", "not a file"]),
    ("./README.md", ["is not executable"]),
    ('"unclosed', ["cannot split"]),
], ids=["empty", "blank", "stdio-empty", "missing-script", "not-executable", "unsplittable"])
def test_play_bot_commands(bot: str, words: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    refused(arena("play", "basic", "greedy", bot, "--record", "/dev/null/never-written"), *words)


# -- init, standings ----------------------------------------------------------------------------------

def test_init_into_a_missing_folder_or_onto_a_folder(tmp_path: Path) -> None:
    refused(arena("init", "/nonexistent/dir/t.toml"), "cannot write /nonexistent/dir/t.toml",
            "No such file or directory")
    refused(arena("init", tmp_path, "--force"), "is a folder")


def test_standings_of_a_folder_whose_journal_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "journal.jsonl").mkdir()
    refused(arena("standings", tmp_path), "no journal.jsonl here")


def test_a_record_of_an_unknown_version(tmp_path: Path) -> None:
    for version in (0, 99, "1", True):
        refused(arena("replay", _record(tmp_path, {"record": version})), "r.jsonl:1: record version")
