"""The small holes of bots' and entrants' words (issue 21, third round): what a bot says is quoted in
reasons at a bounded size, so a record's size is bounded; a tournament's name and output folder hold
no control characters; a hello name is never markup on the human seat's last screen; ``--listen
:PORT`` is loopback."""

from __future__ import annotations

import json
import sys

import pytest

from arena.referee.game import MAX_RECORDED_FAILURES, REASON_CHARS
from arena.settings import TimeControl
from arena.untrusted import QUOTE_CHARS
from tests.conftest import ROOT, run_game

HOSTILE = str(ROOT / "tests" / "bots" / "hostile.py")
ESC = "\x1b"


# -- a reason quotes at most QUOTE_CHARS of a bot's string; a record's failure lines are bounded ------------

@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
def test_huge_game_ids_and_values_make_no_huge_record(tmp_path):
    result, _ = run_game("basic", [f"{sys.executable} {HOSTILE} huge_words", "greedy"], tmp_path, seed=3,
                         time_control=TimeControl(start_ms=10000, decision_ms=3000, grace_ms=50))
    record = tmp_path / "record.jsonl"
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    fails = [d for d in lines if d.get("e") == "failure"]
    # The bot sent ~8 MiB of game ids at every request: they were counted, and quoted only in part.
    assert result.failures[0]["stale"] > MAX_RECORDED_FAILURES and result.failures[0]["malformed"] >= 1, \
        result.failures
    assert {d["kind"] for d in fails} >= {"stale", "malformed"}
    assert len(fails) <= MAX_RECORDED_FAILURES + 1
    assert all(len(d["reason"]) <= REASON_CHARS and "G" * (QUOTE_CHARS * 2 + 1) not in d["reason"] for d in fails)
    assert any("chars)" in d["reason"] for d in fails)  # the cut is said
    # Before the cut this record was 15.7 MB (20 stale lines quoting a 1 MiB id, and the decoder's detail).
    assert record.stat().st_size < 200_000, record.stat().st_size
    # The honest seat was charged nothing; the game was played to its end.
    assert not result.failures[1]
    assert result.end_reason and result.decisions > 20


# -- the human seat's last line: hello names are data, not markup -----------------------------------

def test_the_human_seats_game_over_line_shows_hostile_names_as_typed():
    import os

    from arena.human.seat import HumanSeat
    from protocol.messages import GameOver

    evil = "x\x1b[2J[link=http://evil.example/]click[/link][/]"
    master, slave = os.openpty()
    try:
        seat = HumanSeat(os.ttyname(slave))  # draws on a terminal, as `arena play ... human` makes it
        seat.me = 0
        seat.view.players = ["me", evil, "[bold red]mallory"]
        seat.on_game_over(GameOver(game="g", placings=[2, 1, 3], totals=[10, 0, 30], reason="deals[/]"))
        seat.screen.flush()
        out = os.read(master, 1 << 16).decode()
        seat.keys.close()
        seat.screen.close()
    finally:
        os.close(master)
        os.close(slave)
    assert "Game over" in out
    assert "[link=http://evil.example/]click[/link][/]" in out and "[bold red]mallory" in out, out
    assert "\x1b]8;" not in out and "\x1b[2J" not in out, repr(out)  # no hyperlink, no clear-screen
    assert "deals[/]" in out


# -- --listen :PORT is loopback; 0.0.0.0:PORT is every interface --------------------------------------

def test_a_tournaments_listen_without_a_host_is_loopback(tmp_path):
    import os

    from arena.tournament.config import load
    from arena.tournament.remote_seats import seats
    from tests.helpers import remote_tournament

    t = load(remote_tournament(tmp_path, 5))
    key = os.urandom(32)
    mine = seats(t, key, ":7000")["alice"]
    assert (mine.bind, mine.endpoint) == ("tcp://127.0.0.1:7000", "tcp://127.0.0.1:7000")
    assert seats(t, key, "0.0.0.0:7000")["alice"].bind == "tcp://0.0.0.0:7000"  # said: every interface


def _listening(port: int) -> set[str]:
    """The addresses on which this machine listens on TCP ``port``."""
    import psutil

    return {c.laddr.ip for c in psutil.net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port}


@pytest.mark.slow
@pytest.mark.usefixtures("no_leaks")
@pytest.mark.parametrize(("listen", "expected"), [(":0", "127.0.0.1"), ("0.0.0.0:0", "0.0.0.0")])
def test_play_listen_without_a_host_binds_loopback_only(tmp_path, listen, expected):
    import os
    import re
    import signal
    import subprocess
    import time

    referee = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "basic", "greedy", "remote:mallory", "--listen", listen,
         "--seed", "4", "--record", str(tmp_path / "r.jsonl"), "--remote-wait-s", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=ROOT)
    try:
        line = referee.stderr.readline()
        m = re.search(r"--endpoint tcp://(\S+):(\d+)", line)
        assert m, line
        port = int(m[2])
        deadline = time.monotonic() + 20
        while not (found := _listening(port)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found == {expected}, (found, line)
        if expected == "127.0.0.1":
            assert m[1] == "127.0.0.1", line  # and it says so: the address a bot on this machine connects to
    finally:
        if referee.poll() is None:
            os.killpg(referee.pid, signal.SIGINT)  # the referee stops its gates on the way out
            try:
                referee.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(referee.pid, signal.SIGKILL)
                referee.communicate()


# -- a tournament's name and output folder are printed: no control characters ------------------------

TOURNAMENT = '''name = {name}
variant = "basic"
seats = 2
output = {output}

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "greedy"
command = "greedy"
'''


def _file(tmp_path, name: str, output: str):
    f = tmp_path / "t.toml"
    f.write_text(TOURNAMENT.format(name=json.dumps(name), output=json.dumps(output)))  # TOML's escapes are JSON's
    return f


@pytest.mark.parametrize(("name", "output", "key"), [
    ("cup\x1b[2J\x1b]8;;evil.example\x07", "results/cup", "name"),
    ("cup\n[1 of 1] game 0: forged", "results/cup", "name"),
    ("cup\u202e", "results/cup", "name"),  # a bidirectional override turns the rest of the line around
    ("cup", "results/cup\x1b[31m", "output"),
    ("cup", "results/cup\nFORGED", "output"),
])
def test_validate_refuses_control_characters_in_name_and_output(tmp_path, name, output, key):
    from arena.tournament.config import validate_file

    t, errors = validate_file(_file(tmp_path, name, output), check_commands=False, check_output=False)
    assert t is None and [e.key for e in errors] == [key], errors
    said = str(errors[0])
    assert "control characters" in said and f":{4 if key == 'output' else 1}: {key}:" in said, said
    assert "\x1b" not in said and "\n" not in said and "\u202e" not in said, said  # the sentence itself is safe


def test_validate_takes_printable_names_and_folders(tmp_path):
    from arena.tournament.config import validate_file

    t, errors = validate_file(_file(tmp_path, "Coupe d'été 2026 [final]", "results/été [1]"), check_commands=False,
                              check_output=False)
    assert not errors and t is not None and t.name == "Coupe d'été 2026 [final]"


@pytest.mark.slow
def test_arena_validate_says_the_key_and_exits_2(tmp_path):
    import subprocess

    p = subprocess.run([sys.executable, "-m", "arena", "validate", str(_file(tmp_path, "cup\x1b[2J", "results/x"))],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and "name: expected a name without control characters" in p.stderr, p.stderr
    assert ESC not in p.stderr + p.stdout and "Traceback" not in p.stderr


@pytest.mark.slow
def test_an_error_sentence_quoting_entrants_names_stays_one_safe_line(tmp_path):
    import subprocess

    from tests.helpers import by_name, folder_of

    names = ["esc\x1b[2J\x1b]8;;evil.example\x07", "nl\n[9/9] game 9: forged"]
    folder = folder_of(tmp_path, [json.dumps(n)[1:-1] for n in names], 2, 1, by_name(names))
    p = subprocess.run([sys.executable, "-m", "arena", "games", str(folder), "--bot", "nobody"],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --bot 'nobody': no bot of that name"), p.stderr
    assert ESC not in p.stderr and "\x07" not in p.stderr and "\\x1b[2J" in p.stderr, p.stderr
