"""Issue 22: what a new user meets in the first hour, met the way the user meets it (the command line).

Each test here failed before its fix: a game whose bot never started, a stdio bot that print-debugs
before its hello, the JavaScript sample without its packages, ...
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.timing  # asserts on how soon the failure shows
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
    from arena.cli import _rules, _toml_value
    from arena.rules.options import RulesError, resolve, rules_from_data

    basic = resolve("basic")
    eight = _rules("basic", ['hand_size={"2" = 8}'])  # README's own example
    assert eight.count_value("hand_size", 2) == 8
    for n in range(3, 7):
        assert eight.count_value("hand_size", n) == basic.count_value("hand_size", n)
    assert eight.to_data()["hand_size"] == {"2": 8, "3-4": 7, "5-6": 6}
    assert resolve("basic", {"hand_size": {"3-5": 6}}).to_data()["hand_size"] == {"2": 10, "3-5": 6, "6": 6}
    for table, words in (('{"0-1" = 5}', "basic is played by 2 to 6 players, so this entry would change no game"),
                         ('{"5-2" = 5}', 'the first player count is above the second; write "2-5"')):
        with pytest.raises(typer.Exit):
            _rules("basic", [f"hand_size={table}"])
        with pytest.raises(RulesError, match=re.escape(words)):
            resolve("basic", {"hand_size": _toml_value(table)})
    # A record's rules read back as written: its table is the whole table, not laid over a preset.
    assert rules_from_data({**eight.to_data(), "players": [2, 4], "hand_size": {"2-4": 9}}).to_data()["hand_size"] == {"2-4": 9}


@pytest.mark.slow
def test_check_bot_reports_a_slow_bot_once_as_a_timeout_not_as_stale_in_the_games_after(tmp_path, no_leaks):
    from arena.referee.compliance import check_bot

    lines: list[str] = []
    report = check_bot(f"{sys.executable} {ROOT / 'tests' / 'bots' / 'misbehave.py'} sleep", ["basic"],
                       decision_ms=500, out=lines.append, log_dir=tmp_path, sandbox=False)
    text = "\n".join(lines)
    assert report.get("game basic 2p").ok is False and "timeout" in report.get("game basic 2p").detail, text
    assert "stale" not in text and "echo the game and seq" not in text, text
    assert report.get("game basic 4p").ok, text  # its late reply to game 1 was awaited, not spilled into game 2
    assert report.get("illegal-retry").ok, text


def _sample_bot(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_") or k == "ARENA_SESSION"}
    return subprocess.run([sys.executable, str(ROOT / "sample_bots" / "greedy.py"), *args], capture_output=True,
                          text=True, timeout=timeout, env={**clean, **(env or {})}, cwd=ROOT, start_new_session=True)


def test_no_sample_bot_shadows_a_standard_module():
    # `python3 sample_bots/greedy.py` puts sample_bots/ first on the import path: a sample_bots/random.py
    # was imported as the standard `random` by the engine, and the bot died of a circular import.
    names = {p.stem for p in (ROOT / "sample_bots").glob("*.py")}
    assert "greedy" in names and not names & sys.stdlib_module_names


@pytest.mark.slow
def test_a_remote_bot_without_a_token_is_one_sentence_not_a_traceback(no_leaks):
    done = _sample_bot("--endpoint", "tcp://127.0.0.1:9")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "ARENA_TOKEN" in done.stderr


@pytest.mark.slow
def test_a_remote_bot_with_the_wrong_server_key_is_told_so_at_once(no_leaks):
    import zmq

    ctx = zmq.Context()
    server = ctx.socket(zmq.ROUTER)  # a referee's remote seat: a CURVE server (SPEC 12)
    public, secret = zmq.curve_keypair()
    server.curve_secretkey, server.curve_publickey, server.curve_server = secret, public, True
    plain = ctx.socket(zmq.ROUTER)  # arena play --listen: not encrypted
    try:
        port = server.bind_to_random_port("tcp://127.0.0.1")
        plain_port = plain.bind_to_random_port("tcp://127.0.0.1")
        wrong = zmq.curve_keypair()[0].decode()
        t0 = time.monotonic()
        done = _sample_bot("--endpoint", f"tcp://127.0.0.1:{port}",
                           env={"ARENA_TOKEN": "t" * 32, "ARENA_SERVER_KEY": wrong})
        assert done.returncode == 1 and time.monotonic() - t0 < 20, done.stderr
        assert "refused the encrypted connection: the server key" in done.stderr, done.stderr
        done = _sample_bot("--endpoint", f"tcp://127.0.0.1:{port}", env={"ARENA_TOKEN": "t" * 32})
        assert done.returncode == 1 and "expects an encrypted connection" in done.stderr, done.stderr
        done = _sample_bot("--endpoint", f"tcp://127.0.0.1:{plain_port}",
                           env={"ARENA_TOKEN": "t" * 32, "ARENA_SERVER_KEY": public.decode()})
        assert done.returncode == 1 and "refused the encrypted connection" in done.stderr, done.stderr
        assert "arena play --listen does not: drop the key" in done.stderr
    finally:
        server.close(linger=0)
        plain.close(linger=0)
        ctx.term()


@pytest.mark.parametrize("width", [80, 120])
def test_variants_fits_the_terminal_and_says_where_presets_come_from_in_plain_words(width):
    from typer.testing import CliRunner

    from arena.cli import app
    from arena.rules.options import OPTION_NAMES
    from arena.rules.presets import PRESETS

    shown = CliRunner().invoke(app, ["variants"], env={"COLUMNS": str(width)})
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert max(map(len, lines)) <= width, max(lines, key=len)
    assert "seed 0" not in shown.stdout
    headers = [line for line in lines if line.startswith("┃ option") and "meaning" not in line]
    assert [c.strip() for h in headers for c in h.split("┃")[2:-1]] == list(PRESETS), headers
    for opt in OPTION_NAMES:  # whole, not cut with an ellipsis
        assert any(line.startswith(f"│ {opt} ") for line in lines), opt


@pytest.mark.slow
def test_run_says_what_it_does_before_the_first_game_and_explains_the_standings(tmp_path, no_leaks):
    (tmp_path / "tournaments").mkdir()
    (tmp_path / "tournaments" / "t.toml").write_text('''
name = "first"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = 1
seed = 3
sandbox = false
output = "../results/first"
[rules]
deals = 1
[[bots]]
name = "one"
command = "greedy"
[[bots]]
name = "two"
command = "random"
''')
    ran = arena("run", "tournaments/t.toml", "--progress", "lines", cwd=tmp_path, env={**__import__("os").environ,
                                                                                    "COLUMNS": "100"})
    assert ran.returncode == 0, ran.stderr
    assert "results in results/first" in ran.stderr and ".." not in ran.stderr.splitlines()[0], ran.stderr
    err = ran.stderr.splitlines()
    check = err.index("starting each of the 2 bots once to check it says hello...")
    assert check < next(i for i, line in enumerate(err) if line.startswith("[1/"))
    assert "computing the standings (ratings and their intervals)..." in err
    legend = ran.stdout.split("\nColumns. ", 1)[1]
    for column in ("Rating:", "Margin ±CI:", "LOS:", "Place:", "1st%:"):
        assert column in legend, column
    assert max(map(len, ran.stdout.splitlines())) <= 100
    again = arena("standings", "results/first", cwd=tmp_path)
    assert again.returncode == 0 and "\nColumns. " in again.stdout and "LOS:" in again.stdout
    assert "Columns." not in arena("standings", "results/first", "--format", "csv", cwd=tmp_path).stdout
    journal = tmp_path / "results" / "first" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    lines[1] = lines[1].replace('"placings":[', '"placings":[7,', 1)  # a line that no longer verifies
    journal.write_text("\n".join(lines) + "\n")
    dropped = arena("standings", "results/first", "--drop-bad-lines", cwd=tmp_path)
    assert dropped.returncode == 0, dropped.stderr
    warned = [line for line in dropped.stderr.splitlines() if "set aside" in line]
    assert len(warned) == 1 and warned[0].count("set aside in journal.rejected.jsonl") == 1, warned


def test_the_bar_says_what_the_start_up_check_does_until_the_first_game():
    import io

    from arena.tournament.progress import RunView

    out = io.StringIO()
    view = RunView("bar", 48, 0, out=out, phase="starting each of the 48 bots once to check it says hello...")
    assert out.getvalue() == "starting each of the 48 bots once to check it says hello..."  # not "0/48"
    view.started(0)
    assert out.getvalue().endswith(" 0/48 0.0/s ETA - fail 0") and "\r[" in out.getvalue()
    view.close("finished")


@pytest.mark.slow
def test_a_bot_silent_at_start_is_told_what_to_send_and_which_clock_to_raise(tmp_path, no_leaks):
    (tmp_path / "silent.py").write_text("import time\ntime.sleep(30)\n")
    done = arena("play", "basic", f"{sys.executable} silent.py", "greedy", "--no-sandbox", "--start-ms", "300",
                 "--seed", "5", "--record", "g.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "did not say hello within the start clock of 300 ms: send hello as the bot's first message" in done.stderr
    assert "--start-ms, or start_ms in [time]" in done.stderr


@pytest.mark.slow
def test_the_start_up_check_shows_a_stray_line_and_a_missing_package_with_their_fixes(tmp_path, no_leaks):
    (tmp_path / "chatty.py").write_text("import sys\nprint('hello? debugging here')\nsys.stdout.flush()\n"
                                        "for line in sys.stdin:\n    pass\n")
    (tmp_path / "js").mkdir()
    for name in ("bot.js", "package.json"):
        shutil.copy(ROOT / "sample_bots" / "js" / name, tmp_path / "js" / name)
    (tmp_path / "t.toml").write_text(f'''
name = "check"
variant = "basic"
seats = 2
sandbox = false
output = "out"
[[bots]]
name = "chatty"
command = "{sys.executable} chatty.py"
transport = "stdio"
[[bots]]
name = "js"
command = "node js/bot.js"
''')
    t0 = time.monotonic()
    done = arena("validate", "t.toml", "--start", cwd=tmp_path)
    assert done.returncode != 0 and time.monotonic() - t0 < 9, done.stderr  # not the 10 s start clock
    text = done.stdout + done.stderr
    chatty = next(line for line in text.splitlines() if "'chatty'" in line)
    assert "printed 'hello? debugging here' on stdout before its hello" in chatty, chatty
    assert "print debug output to stderr" in chatty and "it wrote no output" not in chatty
    js = next(line for line in text.splitlines() if "'js'" in line)
    assert "Cannot find module 'zeromq'" in js and "npm ci --prefix js" in js, js


@pytest.mark.slow
def test_a_failed_start_shows_this_start_s_output_not_an_earlier_run_s_from_the_same_log(tmp_path, no_leaks):
    bot = tmp_path / "dead.py"
    bot.write_text("import sys\nprint('an old problem', file=sys.stderr)\nsys.exit(3)\n")
    first = arena("play", "basic", f"{sys.executable} dead.py", "greedy", "--no-sandbox", "--record", "a.jsonl",
                  cwd=tmp_path)
    assert "last output: an old problem" in first.stderr, first.stderr
    bot.write_text("import sys\nsys.exit(4)\n")  # the same bot's log (logs/dead.log), nothing written this time
    again = arena("play", "basic", f"{sys.executable} dead.py", "greedy", "--no-sandbox", "--record", "b.jsonl",
                  cwd=tmp_path)
    assert "exited with code 4 before saying hello" in again.stderr, again.stderr
    assert "an old problem" not in again.stderr
