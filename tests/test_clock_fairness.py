"""Clock fairness (issue 6): at concurrency equal to the number of cores, a bot that
always answers in half the per-decision limit is never timed out, over at least
10,000 decisions with a 20 ms limit.  Latency is the referee's view (send to receive)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.tournament.journal import read
from tests.conftest import MISBEHAVE

pytestmark = [pytest.mark.timeout(400), pytest.mark.usefixtures("no_leaks")]


def test_half_limit_bot_is_never_timed_out(tmp_path):
    cores = os.cpu_count() or 2
    bots = "\n".join(f'[[bots]]\nname = "half{i}"\ncommand = "{sys.executable} {MISBEHAVE} halftime"\n' for i in range(3))
    file = tmp_path / "fair.toml"
    file.write_text(f"""
name = "fairness"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = {cores}
seed = 3
records = false
output = "out"

[rules]
target = 40

[time]
decision_ms = 20
grace_ms = 50

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
    assert decisions >= 10_000
    assert timeouts == 0
