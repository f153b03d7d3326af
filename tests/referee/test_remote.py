"""Remote seats: `arena play ... remote:NAME --listen ADDR` waits for a bot that connects by itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120), pytest.mark.usefixtures("no_leaks")]


def test_remote_seat_plays_when_a_bot_connects_with_the_printed_token(tmp_path):
    record = tmp_path / "remote.jsonl"
    referee = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "basic", "greedy", "remote:alice", "--listen", "127.0.0.1:0",
         "--seed", "4", "--record", str(record)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    bot = None
    try:
        line = referee.stderr.readline()
        m = re.search(r"ARENA_TOKEN=([0-9a-f]+) \.\.\. --endpoint (\S+)", line)
        assert m, line
        bot = subprocess.Popen([sys.executable, "-m", "sample_bots.random_bot", "--endpoint", m[2]],
                               env={**os.environ, "ARENA_TOKEN": m[1]},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        out, err = referee.communicate(timeout=100)
        assert referee.returncode == 0, err
        assert "alice" in out and "Place" in out
        assert bot.wait(timeout=10) == 0  # told to shut down at the end
        verify = subprocess.run([sys.executable, "-m", "arena", "replay", "--verify", str(record)],
                                capture_output=True, text=True)
        assert verify.returncode == 0, verify.stdout
    finally:
        for p in (referee, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_remote_seat_that_never_connects_is_a_timeout(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "play", "basic", "greedy", "remote:bob", "--listen", "127.0.0.1:0",
         "--remote-wait-s", "1", "--record", str(tmp_path / "r.jsonl")],
        capture_output=True, text=True, timeout=200,
    )
    # The game is still played: the referee plays safe moves for the absent seat (timeout: default).
    assert proc.returncode == 0, proc.stderr
    assert "timeout" in proc.stdout and "did not say hello" in proc.stderr
