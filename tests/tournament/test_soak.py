"""Soak: honest and adversarial bots at concurrency 2 for about 150 games,
the runner killed with SIGKILL at random points and resumed each time.

Afterwards: every game is in the journal exactly once, each adversarial bot's
failures carry the right kinds, the honest bots have none, no process of the
run exists (grandchildren of bots included), and the referee's memory stayed
flat.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournament import schedule
from arena.tournament.config import load
from arena.tournament.journal import read
from tests.conftest import MISBEHAVE, arena_processes

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.usefixtures("no_leaks")]

ADVERSARIES: dict[str, set[str]] = {
    # mode: the failure kinds it may cause (and must cause at least one of, unless empty)
    "crash_random": {"crash"},
    "hang": {"timeout"},
    "sigstop": {"timeout", "disconnect"},
    "flood": {"stale"},
    "huge": {"oversized"},
    "not_json": {"malformed"},
    "fork_child": {"crash"},
    "connect_twice": set(),
    "late": {"timeout", "stale"},
    "exit_clean": {"crash"},
    "chatty": set(),
}
MAY_BE_QUIET = {"connect_twice", "chatty", "crash_random"}  # crash_random may draw a late decision


def soak_file(tmp: Path) -> Path:
    bots = ['[[bots]]\nname = "greedy"\ncommand = "greedy"\n', '[[bots]]\nname = "random"\ncommand = "random"\n']
    for mode in ADVERSARIES:
        bots.append(f'[[bots]]\nname = "{mode}"\ncommand = "{sys.executable} {MISBEHAVE} {mode}"\n')
    text = """
name = "soak"
variant = "basic"
seats = 2
deal_sets = 1
concurrency = 2
seed = 7
records = false
output = "out"

[rules]
target = 30

[time]
start_ms = 10000
decision_ms = 400
grace_ms = 50
clock = "wall"   # the sleeping bots (late, hang, sleep) must time out at the limit itself

[failures]
timeout = "forfeit"
crash = "forfeit"
disconnect = "forfeit"
oversized = "forfeit"
malformed = "forfeit"
strikes = 3

""" + "\n".join(bots)
    path = tmp / "soak.toml"
    path.write_text(text)
    return path


def start_run(file: Path, out: Path, resume: bool) -> subprocess.Popen:
    args = [sys.executable, "-m", "arena", "run", str(file), "--out", str(out), "--format", "json"]
    if resume:
        args.append("--resume")
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def journal_lines(out: Path) -> int:
    try:
        return (out / "journal.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_soak_with_kills_and_resume(tmp_path):
    file = soak_file(tmp_path)
    out = tmp_path / "out"
    t = load(file)
    total = schedule.total_games(t)
    assert total >= 150
    rng = random.Random(1)
    kills = 0
    resume = False
    # Kill the whole runner (main process and workers) three times at random points.
    for target in sorted(rng.sample(range(20, total // 2), 3)):
        proc = start_run(file, out, resume)
        deadline = time.monotonic() + 240
        while journal_lines(out) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.random() * 0.3)  # somewhere inside a game, or a journal write
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        kills += 1
        resume = True
    proc = start_run(file, out, resume=True)
    stdout, stderr = proc.communicate(timeout=540)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    assert kills == 3

    # Every game exactly once.
    contents = read(out)
    indices = [e.index for e in contents.entries]
    assert sorted(indices) == list(range(total)), "missing or repeated games"
    lines = [json.loads(x) for x in (out / "journal.jsonl").read_text().splitlines() if x.strip()]
    assert len([x["index"] for x in lines]) == len({x["index"] for x in lines}) == total

    # Failures: the right kinds against each adversary, none against honest bots.
    kinds: dict[str, set[str]] = {name: set() for name in t.bot_names}
    for e in contents.entries:
        for seat, fails in enumerate(e.failures):
            kinds[e.seats[seat]].update(k for k, n in fails.items() if n)
    assert kinds["greedy"] == set() and kinds["random"] == set(), kinds
    for mode, allowed in ADVERSARIES.items():
        # A 400 ms wall clock can time any misbehave.py bot out on a loaded machine (its own slowness,
        # never the referee's: the honest bots above stay clean); every other kind must be its own.
        assert kinds[mode] <= allowed | {"timeout"}, (mode, kinds[mode])
        if mode not in MAY_BE_QUIET:
            assert kinds[mode] & allowed, f"{mode} never caused its own failure: {kinds[mode]}"

    # Memory: the referee (runner + workers) stays flat over the last run.
    rss = [(e.index, e.runner_rss_mb) for e in contents.entries if e.runner_rss_mb]
    assert len(rss) > 40
    early = [r for _, r in rss[5:25]]
    late = [r for _, r in rss[-20:]]
    assert max(late) < 1.5 * max(early) + 30, (early, late)

    # The standings were printed, and nothing of the run is left.
    assert json.loads(stdout)
    assert not arena_processes()
