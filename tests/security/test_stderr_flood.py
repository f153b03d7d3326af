"""A flood of stderr costs the referee nothing (issue 21, class 3): a bot's output is copied to its
capped log by a process in the bot's own compartment, so the referee's CPU beside a bot writing
stderr as fast as it can (tests/bots/solo.py stderr_flood) stays that of a game beside an honest
bot, the flood is charged to the flooding seat, and its log stays under twice the cap."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from arena.referee import launch
from arena.referee.game import play_one
from arena.referee.host import BotHost
from arena.rules.options import resolve
from arena.settings import BotSpec, FailurePolicy, TimeControl
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.usefixtures("no_leaks")]

SOLO = ROOT / "tests" / "bots" / "solo.py"
TC = TimeControl(start_ms=20000, decision_ms=5000, grace_ms=100)
FLOOD_S = 2.0


def referee_cpu(tmp_path: Path, mode: str) -> tuple[float, float, list, Path]:
    """(the referee's CPU seconds for a game of solo.py MODE against greedy, the game's wall
    seconds, its failures, the solo bot's log)."""
    with BotHost(TC, tmp_path / mode / "logs") as host:
        peers = [host.add(BotSpec(name="solo", command=f"python3 {SOLO} {mode}", transport="stdio")),
                 host.add(BotSpec(name="greedy", command="greedy"))]
        for peer in peers:
            assert host.start(peer), peer.problem
        cpu, wall = time.process_time(), time.monotonic()
        time.sleep(FLOOD_S)  # flooding before the game: the referee must not pay for that either
        result = play_one(host, peers, resolve("basic", {}), 7, f"flood-{mode}", TC, FailurePolicy(),
                          tmp_path / mode / "record.jsonl")
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        log = host.log_path(peers[0])
    return cpu, wall, result.failure_log, log


def test_a_stderr_flood_costs_the_referee_no_more_than_an_honest_bot(tmp_path):
    honest, honest_wall, failures, _ = referee_cpu(tmp_path, "peek")
    assert not failures, failures
    flood, flood_wall, failures, log = referee_cpu(tmp_path, "stderr_flood")
    print(f"referee CPU: {honest:.2f} s beside an honest bot ({honest_wall:.1f} s), {flood:.2f} s beside a "
          f"stderr flood ({flood_wall:.1f} s)")
    # Copying a flood costs about a core for as long as it lasts (the wall time here); the referee's
    # own share may grow a little on a loaded machine, not by that.
    assert flood < 2 * honest + 0.1 * flood_wall, (honest, flood)
    assert not [f for f in failures if f.seat == 1], failures  # the honest seat is charged nothing
    sizes = [p.stat().st_size for p in (log, launch.rotated(log)) if p.exists()]
    assert sum(sizes) <= 2 * launch.LOG_CAP_BYTES and max(sizes) > 0, sizes
    assert log.read_bytes().count(b"x" * 1000) > 0  # the flood is in the log, capped
