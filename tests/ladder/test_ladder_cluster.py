"""The ladder on a real Dask cluster (a scheduler and two workers on loopback, tests/dask_cluster.py):
``arena ladder run --cluster`` plays its batches there, and a kill -9 of the coordinator loses and
repeats no game (docs/ARCHITECTURE.md, "The ladder")."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arena.ladder import layout
from arena.ladder.snapshot import snapshot
from arena.tournament import schedule
from arena.tournament.config import read_resolved
from arena.tournament.journal import read
from tests.dask_cluster import LoopbackCluster
from tests.helpers import ROOT, settle
from tests.ladder.helpers import CLI, all_games, cli, enter, make_ladder

pytestmark = [pytest.mark.slow]


@pytest.mark.timeout(400)
@pytest.mark.usefixtures("no_leaks")
def test_the_ladder_plays_on_a_dask_cluster_and_a_kill_9_of_it_loses_nothing(tmp_path: Path) -> None:
    root = make_ladder(tmp_path, edits={"concurrency = 2": "concurrency = 1"})
    for name in ("alice", "bob", "carol", "dave"):
        enter(root, tmp_path, name)
    with LoopbackCluster(tmp_path / "cluster", workers=2) as c:
        with open(tmp_path / "run.txt", "wb") as err:
            proc = subprocess.Popen(CLI + ["run", str(root), "--batches", "2", "--cluster", c.address], cwd=ROOT,
                                    stdout=err, stderr=err, start_new_session=True)
        try:
            deadline = time.monotonic() + 200
            second = root / "batches" / "000002" / "journal.jsonl"
            while (not second.exists() or not second.read_bytes().count(b"\n")) and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, (tmp_path / "run.txt").read_text()
            os.killpg(proc.pid, signal.SIGKILL)  # the coordinator (and the start-up check's bots, if any)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        killed = all_games(root)
        folder = root / "batches" / "000002"
        assert 0 < len(read(folder).entries) < schedule.total_games(read_resolved(folder)), killed
        got = cli("run", root, "--batches", "1", "--cluster", c.address)
        assert got.returncode == 0, got.stdout + got.stderr
        # the games were played on the workers: each unpacked the uploaded versions and ran their bots there
        for w in ("worker0", "worker1"):
            assert list((c.folder / w).rglob("arena/bots/*/bot.py")), f"{w} played no uploaded bot"
        logs = [p.name for p in c.folder.rglob("arena/logs/host*/*.log")]
        assert {"alice.v1.log", "bob.v1.log"} <= set(logs), logs
        assert not list((root / "batches" / "000001" / "logs").glob("worker*")), "a local worker played"
    after = all_games(root)
    assert set(killed) <= set(after) and len(after) == len(set(after))
    batches = layout.batch_dirs(root)
    assert [b.name for b in batches] == ["000001", "000002"]
    for b in batches:  # every batch whole: each game of its schedule once
        assert sorted(e.index for e in read(b).entries) == list(range(schedule.total_games(read_resolved(b))))
    snap = snapshot(root)
    assert snap["ladder"]["games"] == len(after) and sum(r["games"] for r in snap["leaderboard"]) == 2 * len(after)
    assert [line.split('"batch":"')[1][:6] for line in (root / layout.HISTORY_FILE).read_text().splitlines()] == \
        ["000001", "000002"]
    assert not settle(), "bots outlived the cluster"


@pytest.mark.usefixtures("no_leaks")
def test_a_bad_cluster_address_is_one_sentence(tmp_path: Path) -> None:
    root = make_ladder(tmp_path)
    got = cli("run", root, "--cluster", "localhost:8786")
    assert got.returncode == 2 and got.stderr.startswith("error: --cluster: expected a scheduler address")
    assert "Traceback" not in got.stderr
