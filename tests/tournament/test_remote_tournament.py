"""Remote bots in a tournament (``remote = true``, SPEC 12): a persistent token, a CURVE-encrypted
connection to the referee's printed public key, and a wrong key refused."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import zmq

from arena.tournament.config import load
from arena.tournament.remote_seats import curve_keys, seats
from tests.conftest import ROOT
from tests.helpers import CLI, remote_tournament


def test_remote_bots_get_a_persistent_token_and_the_referees_curve_key(tmp_path):
    t = load(remote_tournament(tmp_path, 5))
    key = os.urandom(32)
    a, b = seats(t, key, "127.0.0.1:7000"), seats(t, key, "127.0.0.1:7000")
    assert a == b and list(a) == ["alice"]  # the same token on every --resume (it comes from the key)
    assert a["alice"].bind == "tcp://127.0.0.1:7000" and len(a["alice"].token) == 32
    assert seats(t, os.urandom(32), "127.0.0.1:7000")["alice"].token != a["alice"].token
    public, secret = curve_keys(key)
    assert zmq.curve_public(secret.encode()).decode() == public and curve_keys(key) == (public, secret)


def _run_with_a_remote_bot(tmp_path: Path, wait: int, server_key: str | None) -> tuple[str, list[dict], Path]:
    """Run the file; once it printed alice's token, start a greedy bot for alice with ``server_key``
    (None: the key the referee printed).  Returns the run's stderr, its journal, and the bot's log."""
    f = remote_tournament(tmp_path, wait)
    out = tmp_path / "out"
    run = subprocess.Popen(CLI + ["run", str(f), "--out", str(out), "--progress", "lines"], cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    bot = None
    log = tmp_path / "alice.log"
    try:
        assert run.stderr is not None
        seen: list[str] = []
        while True:
            line = run.stderr.readline()
            assert line, "".join(seen)
            seen.append(line)
            if m := re.search(r"remote bot alice: connect to (\S+) with ARENA_TOKEN=(\w+) "
                              r"ARENA_SERVER_KEY='([^']+)'", line):
                break
        with open(log, "wb") as f_log:
            bot = subprocess.Popen([sys.executable, "-m", "sample_bots.greedy", "--endpoint", m[1]], cwd=ROOT,
                                   env={**os.environ, "ARENA_TOKEN": m[2], "ARENA_SERVER_KEY": server_key or m[3]},
                                   stdout=f_log, stderr=subprocess.STDOUT, start_new_session=True)
        rest = run.stderr.read()
        assert run.wait(timeout=150) == 0, rest[-2000:]
        stderr = "".join(seen) + rest
        if server_key is None:  # told to shut down when the tournament ended
            assert bot.wait(timeout=10) == 0, log.read_text()[-2000:]
    finally:
        for p in (run, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    journal = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines() if x.strip()]
    mode = stat.S_IMODE((out / "remote.txt").stat().st_mode)
    assert mode == 0o600, oct(mode)  # the tokens file: the organiser's alone
    assert m[2] in (out / "remote.txt").read_text() and m[3] in (out / "remote.txt").read_text()
    return stderr, journal, log


def _alice(journal: list[dict]) -> list[tuple[dict, bool]]:
    """(failures, forfeited) of alice in each game she played."""
    got = []
    for e in journal:
        if "alice" in e["seats"]:
            seat = e["seats"].index("alice")
            got.append((e["failures"][seat], seat in e["forfeited"]))
    return got


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_remote_bot_plays_its_games_over_curve(no_leaks, tmp_path):
    _stderr, journal, _log = _run_with_a_remote_bot(tmp_path, 60, None)
    assert len(journal) == 12
    alice = _alice(journal)
    assert len(alice) == 8 and all(f == {} and not forfeited for f, forfeited in alice), alice


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_remote_bot_with_the_wrong_server_key_is_refused(no_leaks, tmp_path):
    wrong = zmq.curve_keypair()[0].decode()
    _stderr, journal, _log = _run_with_a_remote_bot(tmp_path, 2, wrong)
    assert len(journal) == 12
    alice = _alice(journal)
    # never connected: every game of hers waited 2 s and forfeited her seat as a timeout before hello
    assert len(alice) == 8 and all(f == {"timeout": 1} and forfeited for f, forfeited in alice), alice
    others = [e for e in journal if "alice" not in e["seats"]]
    assert others and all(not e["forfeited"] for e in others)
