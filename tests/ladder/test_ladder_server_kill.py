"""``arena ladder serve`` keeps no state: SIGKILLed while ``arena ladder run`` plays, it is started again
and serves the leaderboard it served before plus the games played meanwhile; the runner never notices
(real processes: the ladder, the server, their bots; docs/ARCHITECTURE.md, "The ladder")."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.ladder import layout
from arena.ladder.serve_pages import board_view
from arena.ladder.snapshot import snapshot
from arena.tournament import schedule
from arena.tournament.config import read_resolved
from arena.tournament.journal import read
from tests.helpers import ROOT, settle
from tests.ladder.helpers import CLI, all_games, enter, make_ladder, raw

pytestmark = [pytest.mark.slow]
NAMES = ("alice", "bob", "carol", "dave")


def start_server(root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "ladder", "serve", str(root), "--listen", "127.0.0.1:0"],
                            cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert found, line
    return proc, f"http://127.0.0.1:{found.group(1)}"


def get(base: str, path: str) -> Any:
    status, _h, body = raw(base, path)
    assert status == 200, (path, status, body[:500])
    return json.loads(body)


def recent(base: str) -> dict[str, set[str]]:
    return {n: {g["game"] for g in get(base, f"/api/entrant/{n}")["recent_games"]} for n in NAMES}


def journaled(root: Path) -> int:
    return len(all_games(root))


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)


@pytest.mark.timeout(400)
@pytest.mark.usefixtures("no_leaks")
def test_a_kill_9_of_the_server_loses_nothing_and_the_runner_plays_on(tmp_path: Path) -> None:
    root = make_ladder(tmp_path)
    for name in NAMES:
        enter(root, tmp_path, name)
    with open(tmp_path / "run.txt", "wb") as err:
        runner = subprocess.Popen(CLI + ["run", str(root), "--batches", "3"], cwd=ROOT, stdout=err, stderr=err,
                                  start_new_session=True)
    server, base = start_server(root)
    try:
        deadline = time.monotonic() + 240
        while get(base, "/api/snapshot")["ladder"]["games"] < 2 and time.monotonic() < deadline:
            assert runner.poll() is None, (tmp_path / "run.txt").read_text()
            time.sleep(0.2)
        before, before_recent = get(base, "/api/snapshot"), recent(base)
        assert before["ladder"]["games"] >= 2
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)
        killed_at, games_at_kill = time.monotonic(), journaled(root)
        while journaled(root) == games_at_kill and runner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the server stays dead until the runner has journaled a game without it
        assert journaled(root) > games_at_kill, (tmp_path / "run.txt").read_text()
        server, base = start_server(root)
        down_s = time.monotonic() - killed_at
        assert get(base, "/api/snapshot")["ladder"]["games"] >= before["ladder"]["games"]
        assert runner.wait(300) == 0, (tmp_path / "run.txt").read_text()
        time.sleep(1.2)  # past the server's snapshot TTL: what it serves now is the finished ladder
        after, after_recent = get(base, "/api/snapshot"), recent(base)
    finally:
        stop(server)
        stop(runner)
    # the restarted server serves what the ladder folder holds: the board before plus the games after
    assert after == json.loads(json.dumps(board_view(snapshot(root))))
    assert after["ladder"]["games"] == journaled(root) > before["ladder"]["games"]
    assert sorted(r["entrant"] for r in after["leaderboard"]) == sorted(r["entrant"] for r in before["leaderboard"])
    for name in NAMES:
        assert before_recent[name] <= after_recent[name], name  # every game seen before is still there
    # the runner never noticed: its batches whole, each game once
    batches = layout.batch_dirs(root)
    assert [b.name for b in batches] == ["000001", "000002", "000003"]
    for b in batches:
        assert sorted(e.index for e in read(b).entries) == list(range(schedule.total_games(read_resolved(b))))
    assert len(all_games(root)) == len(set(all_games(root)))
    assert down_s < 240
    assert not settle(), "bots outlived the ladder"
