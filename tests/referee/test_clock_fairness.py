"""Clock fairness on a loaded machine: with twice as many games at once as cores, bots that
compute (burn CPU) for half of a 20 ms limit before every answer are never timed out on the
CPU clock, the tournaments' default.  (On the wall clock the same load would time them out:
each waits for a core.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.tournament.journal import read
from tests.conftest import MISBEHAVE

pytestmark = [pytest.mark.slow, pytest.mark.timing, pytest.mark.timeout(400), pytest.mark.usefixtures("no_leaks")]


def test_half_limit_bot_is_never_timed_out(tmp_path):
    games_at_once = 2 * (os.cpu_count() or 2)
    bots = "\n".join(f'[[bots]]\nname = "half{i}"\ncommand = "{sys.executable} {MISBEHAVE} halfcpu"\n' for i in range(4))
    file = tmp_path / "fair.toml"
    file.write_text(f"""
name = "fairness"
variant = "basic"
seats = 2
deal_sets = 1
concurrency = {games_at_once}
seed = 3
records = false
output = "out"

[rules]
target = 10

[time]
decision_ms = 20
grace_ms = 50
clock = "cpu"

[failures]
timeout = "forfeit"

{bots}""")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "arena", "run", str(file), "--format", "json"],
                          capture_output=True, timeout=380)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    entries = read(out).entries
    decisions = sum(e.decisions for e in entries)
    timeouts = sum(f.get("timeout", 0) for e in entries for f in e.failures)
    print(f"{len(entries)} games, {decisions} decisions, {timeouts} timeouts")
    assert decisions >= 3_000  # deterministic (fixed seed and bots): 3,056; bench/flood.py measures more
    assert timeouts == 0
