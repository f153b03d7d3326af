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
    # The honest seat was charged nothing; the game was played to its end (no timeout from 1 MiB errors).
    assert not result.failures[1] and "timeout" not in result.failures[0]
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
    from tests.test_remote_tournament import tournament

    t = load(tournament(tmp_path, 5))
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
