"""Issue 22: what a new user meets in the first hour, met the way the user meets it (the command line).

Each test here failed before its fix: a game whose bot never started, a stdio bot that print-debugs
before its hello, the JavaScript sample without its packages, ...
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def arena(*args: str, cwd: Path = ROOT, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, start_new_session=True, **kw)


@pytest.mark.slow
def test_a_bot_that_never_started_is_recorded_once_after_game_start_and_the_record_verifies(tmp_path, no_leaks):
    (tmp_path / "dead.py").write_text("import sys\nsys.exit(3)\n")
    done = arena("play", "basic", f"{sys.executable} dead.py", "greedy", "--no-sandbox", "--seed", "5",
                 "--record", "g.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kinds = [json.loads(line)["e"] for line in (tmp_path / "g.jsonl").read_text().splitlines()[1:]]
    assert kinds == ["game_start", "deal_start", "failure", "forfeit", "game_end"], kinds
    assert done.stderr.count("game over") + done.stdout.count("game over") == 1, done.stderr
    verified = arena("replay", "--verify", "g.jsonl", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr


@pytest.mark.slow
def test_a_stdio_bot_that_prints_before_hello_is_shown_its_line_and_the_fix_at_once(tmp_path, no_leaks):
    (tmp_path / "chatty.py").write_text("import sys\nprint('starting up, hand is', [1, 2])\nsys.stdout.flush()\n"
                                        "for line in sys.stdin:\n    pass\n")
    t0 = time.monotonic()
    done = arena("play", "basic", f"stdio:{sys.executable} chatty.py", "greedy", "--no-sandbox", "--seed", "5",
                 "--record", "g.jsonl", cwd=tmp_path)
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    assert "printed 'starting up, hand is [1, 2]' on stdout before its hello" in done.stderr, done.stderr
    assert "print debug output to stderr" in done.stderr
    assert took < 8, took  # not the whole 10 s start clock
    logs = "".join(p.read_text() for p in (tmp_path / "logs").iterdir())
    assert "starting up, hand is [1, 2]" in logs


@pytest.mark.slow
def test_the_js_sample_without_its_packages_names_the_missing_module_and_npm_ci(tmp_path, no_leaks):
    if shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript sample bot (README: requirements)")
    (tmp_path / "js").mkdir()
    for name in ("bot.js", "package.json"):
        shutil.copy(ROOT / "sample_bots" / "js" / name, tmp_path / "js" / name)
    done = arena("play", "basic", "node js/bot.js", "greedy", "--no-sandbox", "--seed", "5", "--record", "g.jsonl",
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Cannot find module 'zeromq'" in done.stderr, done.stderr
    assert "npm ci --prefix js" in done.stderr
    assert "last output: Node.js" not in done.stderr


def test_a_per_count_table_override_changes_only_the_counts_it_names():
    from arena.cli import _rules
    from arena.rules.options import resolve, rules_from_data

    basic = resolve("basic")
    eight = _rules("basic", ['hand_size={"2" = 8}'])  # README's own example
    assert eight.count_value("hand_size", 2) == 8
    for n in range(3, 7):
        assert eight.count_value("hand_size", n) == basic.count_value("hand_size", n)
    assert eight.to_data()["hand_size"] == {"2": 8, "3-4": 7, "5-6": 6}
    assert resolve("basic", {"hand_size": {"3-5": 6}}).to_data()["hand_size"] == {"2": 10, "3-5": 6, "6": 6}
    # A record's rules read back as written: its table is the whole table, not laid over a preset.
    assert rules_from_data({**eight.to_data(), "players": [2, 4], "hand_size": {"2-4": 9}}).to_data()["hand_size"] == {"2-4": 9}
