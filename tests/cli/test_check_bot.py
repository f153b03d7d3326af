"""The bot authors' kit: ``arena check-bot``, the stdio transport, the JavaScript and stdio sample bots.

The Node.js bots need ``node`` (v18+) and, for the ZeroMQ one, ``npm ci --prefix sample_bots/js``;
these tests fail (they are never skipped) when either is missing.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from arena.cli import app as arena_app
from arena.referee.compliance import CheckError, Report, check_bot
from arena.referee.entries import Timed
from arena.referee.game import play_one
from arena.referee.host import BotHost
from arena.rules.log import DealEnd, PlayEntry
from arena.rules.options import resolve
from arena.rules.presets import PRESETS
from arena.rules.record import Header, replay
from arena.settings import BotSpec, FailurePolicy, TimeControl
from protocol.codec import decode_from_bot, decode_from_referee
from tests.conftest import run_game

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("no_leaks")]

ROOT = Path(__file__).resolve().parents[2]
JS_BOT = f"node {ROOT / 'sample_bots' / 'js' / 'bot.js'}"
MINIMAL = f"node {ROOT / 'sample_bots' / 'stdio' / 'minimal.js'}"
BROKEN = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'broken.py'}"
STDIO_LINES = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'stdio_lines.py'}"
NPM_CI = "npm ci --prefix sample_bots/js"


@pytest.fixture(scope="module")
def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        pytest.fail("node is not on PATH: install Node.js 18 or later (e.g. apt-get install nodejs npm)")
    return exe


@pytest.fixture(scope="module")
def js_bot(node: str) -> str:
    if not (ROOT / "sample_bots" / "js" / "node_modules" / "zeromq").is_dir():
        pytest.fail(f"the JavaScript sample bot's packages are not installed: run `{NPM_CI}`")
    return JS_BOT


def run_check(command: str, **kwargs) -> tuple[Report, list[str]]:
    lines: list[str] = []
    report = check_bot(command, out=lines.append, **kwargs)
    return report, lines


def failing(report: Report) -> set[str]:
    return {c.name for c in report.checks if c.ok is False}


ALL_CHECKS = (
    ["handshake"]
    + [f"{what} {v}" for v in PRESETS for what in ("game", "decisions")]
    + ["illegal-retry", "several-games", "shutdown", "output", "version-refusal"]
)


def assert_passes_everything(report: Report, lines: list[str]) -> None:
    text = "\n".join(lines)
    assert report.ok, text
    assert report.failed == 0 and report.skipped == 0, text
    for v in PRESETS:
        for size in sorted({2, min(4, PRESETS[v].players[1])}):
            assert f"PASS game {v} {size}p: " in text, text
        assert f"PASS decisions {v}: " in text, text
    for name in ["handshake", "illegal-retry", "several-games", "shutdown", "output", "version-refusal"]:
        assert f"PASS {name}: " in text, text
    assert lines[-1].startswith(f"{report.passed} passed, 0 failed"), lines[-1]
    assert all(line.startswith(("PASS ", "checking ")) for line in lines[:-1]), text


# -- every sample bot passes --------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["greedy", "random"])
def test_python_sample_bot_passes_every_check(bot):
    report, lines = run_check(bot)
    assert_passes_everything(report, lines)
    assert report.bot_name == bot
    assert report.log_dir is None  # nothing failed: the logs were removed


@pytest.mark.slow
def test_javascript_sample_bot_passes_every_check(js_bot):
    report, lines = run_check(js_bot)
    assert_passes_everything(report, lines)
    assert report.bot_name == "greedy-js"


@pytest.mark.slow
def test_minimal_stdio_bot_passes_every_check(node):
    report, lines = run_check(MINIMAL, transport="stdio")
    assert_passes_everything(report, lines)
    assert report.bot_name == "minimal-js"
    assert "lines on stdout were JSON messages" in report.get("output").detail


# -- deliberately broken bots fail, with the right reason ------------------------------------

BROKEN_CASES = {
    # mode: (the checks that fail, the check whose reason is looked at, words of the reason)
    "no_hello": ({"handshake"}, "handshake", "no hello arrived under its token"),
    "wrong_version": ({"handshake"}, "handshake", "you speak [99]"),
    "no_play": ({"game basic 2p", "game basic 4p", "decisions basic", "illegal-retry"}, "decisions basic",
                "no play reply within 500 ms"),
    "illegal_discard": ({"game basic 2p", "game basic 4p", "illegal-retry"}, "game basic 2p",
                        "taken from the discard pile this turn (RULES 3.3)"),
    "ignore_shutdown": ({"shutdown"}, "shutdown", "still running 3 s after shutdown"),
    "one_game": ({"game basic 4p", "several-games"}, "several-games", "in game 2 on the same connection"),
    "ignore_version": ({"version-refusal"}, "version-refusal", "still running 3 s after an error of kind version"),
    "resend_old_seq": ({"illegal-retry"}, "illegal-retry", "was not answered: stale"),
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(BROKEN_CASES))
def test_broken_bot_fails_with_the_right_reason(mode):
    fails, check, words = BROKEN_CASES[mode]
    start_ms = 1500 if mode == "no_hello" else 10000  # the start clock is all a silent bot costs
    report, lines = run_check(f"{BROKEN} {mode}", variants=["basic"], decision_ms=500, start_ms=start_ms)
    text = "\n".join(lines)
    assert not report.ok
    assert failing(report) == fails, text
    c = report.get(check)
    assert words in c.detail, text
    assert all(" -- fix: " in f.detail for f in report.failures()), text
    assert f"FAIL {check}: " in text
    assert lines[-1].startswith(f"{report.passed} passed, {report.failed} failed"), lines[-1]
    assert report.log_dir and Path(report.log_dir).is_dir()  # kept for the author to read
    shutil.rmtree(report.log_dir)
    if mode == "no_hello":  # nothing else can run without a handshake: each check it has is said skipped
        skipped = [c.name for c in report.checks if c.ok is None]
        assert skipped == ["game basic 2p", "game basic 4p", "decisions basic", "illegal-retry", "several-games",
                           "shutdown", "output", "version-refusal"], text


@pytest.mark.slow
def test_stdio_bot_writing_logs_on_stdout_fails_the_output_check():
    report, lines = run_check(f"{STDIO_LINES} chatter", variants=["basic"], transport="stdio", decision_ms=500)
    out = report.get("output")
    assert out.ok is False, "\n".join(lines)
    assert "were not JSON messages" in out.detail and "debug: new game" in out.detail
    assert "write logs to stderr" in out.detail
    assert all(" -- fix: " in f.detail for f in report.failures())
    assert report.get("handshake").ok and report.get("shutdown").ok
    shutil.rmtree(report.log_dir)


def test_bad_arguments_raise_check_error():
    with pytest.raises(CheckError, match="unknown preset"):
        check_bot("greedy", ["nope"], out=lambda _l: None)
    with pytest.raises(CheckError, match="remote"):
        check_bot("remote:alice", out=lambda _l: None)
    with pytest.raises(CheckError, match="transport"):
        check_bot("greedy", transport="pigeon", out=lambda _l: None)


# -- the command line: `arena check-bot` -------------------------------------------------------


def cli() -> typer.Typer:
    return arena_app


@pytest.mark.slow
def test_check_bot_command_exit_codes():
    runner = CliRunner()
    ok = runner.invoke(cli(), ["check-bot", "greedy", "--variant", "basic", "--seed", "3", "--time-ms", "1000"])
    assert ok.exit_code == 0, ok.output
    assert "PASS handshake: " in ok.output and "PASS game basic 2p: " in ok.output
    assert "0 failed" in ok.output.strip().splitlines()[-1]
    assert "over the stdio transport" in ok.output  # a bundled bot runs on stdio, and is checked as it runs

    bad = runner.invoke(cli(), ["check-bot", f"{BROKEN} wrong_version", "--variant", "basic"])
    assert bad.exit_code == 1, bad.output
    assert "FAIL handshake: no common protocol version" in bad.output

    usage = runner.invoke(cli(), ["check-bot", "greedy", "--variant", "nope"])
    assert usage.exit_code == 2
    assert "unknown preset 'nope'" in usage.output


@pytest.mark.slow
def test_check_bot_command_stdio_flag(node):
    runner = CliRunner()
    res = runner.invoke(cli(), ["check-bot", MINIMAL, "--stdio", "--variant", "wrotham"])
    assert res.exit_code == 0, res.output
    assert "over the stdio transport" in res.output


# -- real games with the JavaScript bot and a stdio bot ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(PRESETS))
def test_js_and_stdio_bots_play_real_games(variant, js_bot, tmp_path):
    result, _ = run_game(variant, [js_bot, MINIMAL, "greedy"], tmp_path, seed=7, transports={1: "stdio"})
    assert result.failure_log == [], result.failure_log
    assert sorted(result.placings)[0] == 1 and len(result.placings) == 3
    assert all(result.latencies_ms[s] for s in range(3)), "every seat answered decisions"
    lines = [json.loads(x) for x in open(tmp_path / "record.jsonl")]
    game = replay(Header.from_data(lines[0]), lines[1:])
    assert game.totals == result.totals
    # the JavaScript bot puts cards on the table (it is greedy, not just legal)
    assert any(isinstance(e, Timed) and isinstance(e.entry, PlayEntry) and e.entry.seat == 0 and e.entry.actions
               for e in result.record)


@pytest.mark.slow
def test_js_bot_goes_out(js_bot, tmp_path):
    result, _ = run_game("basic", [js_bot, "greedy"], tmp_path, seed=2)
    outs = [e.out for e in result.record if isinstance(e, DealEnd)]
    assert 0 in outs, outs
    assert not result.failure_log


# -- the stdio bridge ------------------------------------------------------------------------------


FAST = TimeControl(start_ms=5000, decision_ms=500, grace_ms=50)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["crlf", "split"])
def test_stdio_line_endings_and_partial_writes(mode, tmp_path):
    result, _ = run_game("wrotham", [f"{STDIO_LINES} {mode}", "greedy"], tmp_path, seed=3,
                         transports={0: "stdio"}, time_control=FAST,
                         overrides={"end": "deals", "deals": 1})
    assert result.failure_log == []
    assert result.latencies_ms[0]


@pytest.mark.slow
def test_stdio_over_long_line_is_one_oversized_message(tmp_path):
    result, _ = run_game("basic", [f"{STDIO_LINES} huge", "greedy"], tmp_path, seed=4, transports={0: "stdio"},
                         time_control=FAST)
    kinds = [e.kind for e in result.failure_log]
    assert kinds.count("oversized") == 1, result.failure_log
    # the rest of the long line is dropped, not forwarded as more messages
    assert "malformed" not in kinds, result.failure_log
    assert not result.failures[1]


@pytest.mark.slow
def test_stdio_bot_restarted_after_a_crash_plays_again(tmp_path):
    rules = resolve("basic")
    with BotHost(FAST, tmp_path / "logs") as host:
        bot = host.add(BotSpec(name="crasher", command=f"{STDIO_LINES} crash", transport="stdio"))
        other = host.add(BotSpec(name="greedy", command="greedy"))
        assert host.start(other)
        for game in range(2):
            assert host.start(bot), bot.problem
            result = play_one(host, [bot, other], rules, 5 + game, f"g{game}", FAST, FailurePolicy())
            assert [e.kind for e in result.failure_log] == ["crash"], result.failure_log
            assert len(result.latencies_ms[0]) == 3  # three answers before the crash at the 4th request
        assert bot.starts == 2
    assert not [t for t in threading.enumerate() if t.name.startswith("log-") and t.is_alive()]


@pytest.mark.slow
def test_stdio_bot_pipes_and_log_reader_end_with_the_host(node, tmp_path):
    with BotHost(FAST, tmp_path / "logs") as host:
        bot = host.add(BotSpec(name="minimal", command=MINIMAL, transport="stdio"))
        assert host.start(bot)
        proc = bot.process
        assert proc is not None and proc.alive()
        assert bot.lines == 1 and bot.bad_lines == 0  # its hello
    assert not proc.alive() and proc.channel.eof
    assert not [t for t in threading.enumerate() if t.name == "log-minimal" and t.is_alive()]


# -- the spec's bots and transcripts are the real thing ------------------------------------------

SPEC = (ROOT / "protocol" / "SPEC.md").read_text(encoding="utf-8")


def spec_block(marker: str, lang: str) -> str:
    found = re.search(rf"<!-- {marker} -->\n```{lang}\n(.*?)```", SPEC, flags=re.S)
    assert found, f"SPEC.md lost its {marker} block"
    return found.group(1)


def test_spec_lists_the_minimal_stdio_bot_verbatim():
    assert spec_block("minimal-stdio-bot", "js") == (ROOT / "sample_bots" / "stdio" / "minimal.js").read_text()


@pytest.mark.slow
def test_spec_first_bot_passes_check_bot(tmp_path):
    script = tmp_path / "setbot.py"
    script.write_text(spec_block("first-bot", "python"))
    report, lines = run_check(f"{sys.executable} {script}", variants=["basic", "german"])
    assert report.ok, "\n".join(lines)
    assert report.bot_name == "setbot"


def test_spec_stdio_session_messages_are_valid():
    lines = [x for x in spec_block("stdio-session", "text").splitlines() if x.startswith(("> ", "< "))]
    assert lines[0].startswith("> ") and lines[-1].startswith("< ")
    for line in lines:
        data = line[2:].replace("{...}", "{}")
        msg = json.loads(data)
        if line.startswith("> "):
            decode_from_bot(data.encode())  # every bot line is complete
        elif "{}" not in data:
            decode_from_referee(data.encode())
        assert msg["v"] == 1 and msg["type"]
