"""The ladder with real bots, sandboxed: the door's check, batches, kill -9 and resume, suspensions,
a bot that never starts, the inbox, freeze, the final and the export (docs/ARCHITECTURE.md, "The ladder")."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from arena.ladder import layout
from arena.ladder.games import ladder_games
from arena.ladder.snapshot import snapshot
from arena.tournament import schedule
from arena.tournament.config import read_resolved
from arena.tournament.journal import read
from tests.helpers import ROOT, settle
from tests.ladder.helpers import CLI, all_games, bot, cli, enter, make_ladder

BIG_AT_START = """import runpy
import sys

hog = b"x" * (300 << 20)  # written, so the kernel counts it
sys.argv = ["bot.py", "honest"]
runpy.run_path("bot.py", run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.usefixtures("no_leaks")
def test_the_door_enters_a_good_bot_refuses_a_broken_one_and_retires_the_old_version(tmp_path: Path) -> None:
    root = make_ladder(tmp_path, check=True, edits={"memory_mb = 512": "memory_mb = 160"})
    ok = cli("submit", root, bot(tmp_path, "honest"), "--name", "alice")
    assert ok.returncode == 0 and "alice version 1: accepted" in ok.stdout, ok.stdout + ok.stderr
    head = (root / "entrants" / "alice" / "v1" / "check.txt").read_text().splitlines()[:2]
    assert "memory_mb = 160" in head[0] and head[1].endswith("1000 ms of CPU time per decision"), head  # the ladder's
    # a bot that needs more memory than the ladder gives is refused at the door (check-bot alone passes it)
    big = bot(tmp_path, "honest", "big")
    (big / "big.py").write_text(BIG_AT_START)
    (big / "bot.toml").write_text('command = "python3 big.py"\n')
    hog = cli("submit", root, big, "--name", "hog")
    assert hog.returncode == 1 and "refused: FAIL ladder limits" in hog.stdout, hog.stdout + hog.stderr
    assert "limits.memory_mb = 160" in hog.stdout
    assert "went over its memory limit of 160 MiB (limits.memory_mb" in (root / "entrants" / "hog" / "v1" / "check.txt").read_text()
    assert layout.registry(root)["hog"][0]["status"] == "refused"
    bad = cli("submit", root, bot(tmp_path, "no_hello"), "--name", "alice")
    assert bad.returncode == 1 and "alice version 2: refused: FAIL handshake" in bad.stdout, bad.stdout + bad.stderr
    report = (root / "entrants" / "alice" / "v2" / "check.txt").read_text()
    assert "FAIL handshake" in report and "/tmp" not in report and str(tmp_path) not in report
    again = cli("submit", root, bot(tmp_path, "diary"), "--name", "alice")
    assert again.returncode == 0, again.stdout + again.stderr
    versions = layout.registry(root)["alice"]
    assert [(v["version"], v["status"]) for v in versions] == [(1, "retired"), (2, "refused"), (3, "active")]
    assert versions[1]["reason"].startswith("FAIL handshake")
    page = snapshot(root)["entrants"]["alice"]["versions"]
    assert page[1]["check_report"] == "entrants/alice/v2/check.txt" and page[1]["reason"] == versions[1]["reason"]
    # the copy is the entrant's no more: read-only, and the source changing later changes nothing
    copy = root / "entrants" / "alice" / "v1" / "bot" / "bot.py"
    assert not os.stat(copy).st_mode & 0o222
    assert len({v["fingerprint"] for v in versions}) == 3
    assert not settle(), "the check left processes behind"


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.usefixtures("no_leaks")
def test_kill_9_mid_batch_then_run_again_loses_and_repeats_nothing(tmp_path: Path) -> None:
    root = make_ladder(tmp_path)
    for name in ("alice", "bob", "carol", "dave"):
        enter(root, tmp_path, name)
    with open(tmp_path / "run.txt", "wb") as err:
        proc = subprocess.Popen(CLI + ["run", str(root), "--batches", "3"], cwd=ROOT, stdout=err, stderr=err,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 200
        second = root / "batches" / "000002" / "journal.jsonl"
        while (not second.exists() or not second.read_bytes().count(b"\n")) and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, (tmp_path / "run.txt").read_text()
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    killed = all_games(root)
    folder = root / "batches" / "000002"
    assert 0 < len(read(folder).entries) < schedule.total_games(read_resolved(folder)), killed
    assert not settle(), "the killed run's bots are still alive"
    got = cli("run", root, "--batches", "2")
    assert got.returncode == 0, got.stdout + got.stderr
    after = all_games(root)
    assert set(killed) <= set(after) and len(after) == len(set(after))
    batches = layout.batch_dirs(root)
    assert [b.name for b in batches] == ["000001", "000002", "000003"]
    for b in batches:  # every batch whole: each game of its schedule once
        assert sorted(e.index for e in read(b).entries) == list(range(schedule.total_games(read_resolved(b))))
    snap = snapshot(root)
    assert snap["ladder"]["games"] == len(after)
    assert sum(r["games"] for r in snap["leaderboard"]) == 2 * len(after)
    assert len((root / layout.HISTORY_FILE).read_text().splitlines()) >= 2


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.usefixtures("no_leaks")
def test_a_bot_failing_in_games_is_suspended_and_one_that_never_starts_does_not_stall_the_ladder(tmp_path: Path) -> None:
    root = make_ladder(tmp_path, edits={"suspend_after = 3": "suspend_after = 2"})
    for name in ("alice", "bob"):
        enter(root, tmp_path, name, "diary")
    enter(root, tmp_path, "mallory", "crash_in_games")
    enter(root, tmp_path, "nobody", "no_hello")  # the door's check is off: only games can find it out
    enter(root, tmp_path, "snoop", "snoop")  # looks for the other entrants' bots beside its own folder
    got = cli("run", root, "--batches", "4")
    assert got.returncode == 0, got.stdout + got.stderr
    versions = {n: vs[-1] for n, vs in layout.registry(root).items()}
    assert versions["nobody"]["status"] == "suspended" and "did not start" in versions["nobody"]["reason"]
    assert versions["mallory"]["status"] == "suspended", versions["mallory"]
    assert "games with a failure (the last: crash)" in versions["mallory"]["reason"]
    assert versions["alice"]["status"] == versions["bob"]["status"] == "active"
    games = [g.entry for g in ladder_games(root)]
    assert len(layout.batch_dirs(root)) == 4 and games
    honest = [f for e in games for b, f in zip(e.seats, e.failures) if not b.startswith("mallory")]
    assert any(b.startswith("snoop") for e in games for b in e.seats)
    assert not any(n for f in honest for n in f.values()), "an honest seat was charged"
    assert not any("nobody.v1" in e.seats for e in games)
    mallory_games = [e for e in games if "mallory.v1" in e.seats]
    assert 2 <= len(mallory_games) <= 2 + 2  # suspended after its second failing game's batch (2 games a batch)
    snap = snapshot(root)
    fails = snap["entrants"]["mallory"]["failures"]
    assert fails and all(f["kind"] == "crash" for f in fails)
    assert all(f["log"] is None or f["log"].startswith("entrants/mallory/v1/logs/") for f in fails)
    # alice's own log holds her own diary lines and no one else's
    logs = list((root / "entrants" / "alice" / "v1" / "logs").glob("*.log"))
    assert logs and all("ladder-bot diary" in p.read_text() for p in logs)
    assert not any("mallory" in p.read_text().split("=====")[-1] or "SNOOP" in p.read_text() for p in logs)
    # in its sandbox the snoop finds nothing of the ladder: no other entrant's bot, none of the ladder's files
    # (without the sandbox it reads them all: ../../../alice/v1/bot/bot.py, ../../../../entrants.json, ...)
    snooped = "\n".join(line for p in (root / "entrants" / "snoop" / "v1" / "logs").glob("*.log")
                         for line in p.read_text().splitlines() if line.startswith("SNOOP"))
    assert "SNOOP found" in snooped, snooped[-2000:]
    for word in ("alice", "bob", "mallory", "entrants.json", "ladder.toml", "batches", "secret.key"):
        assert word not in snooped, (word, snooped[-2000:])
    reads = [line for line in snooped.splitlines() if line.startswith("SNOOP read")]
    assert all(line.startswith("SNOOP read ../../../snoop/v1/bot/") for line in reads), reads  # its own files only
    assert versions["snoop"]["status"] == "active"


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.usefixtures("no_leaks")
def test_inbox_freeze_final_and_export(tmp_path: Path) -> None:
    root = make_ladder(tmp_path, edits={"max_deal_sets = 60": "max_deal_sets = 1"})
    for name in ("alice", "bob"):
        enter(root, tmp_path, name)
    shutil.copytree(bot(tmp_path, "honest", "carol"), root / "inbox" / "carol")
    past = time.time() - 60
    for p in [root / "inbox" / "carol", *(root / "inbox" / "carol").iterdir()]:
        os.utime(p, (past, past))
    got = cli("run", root, "--batches", "1")
    assert got.returncode == 0 and "inbox:" in got.stdout, got.stdout + got.stderr
    assert layout.registry(root)["carol"][0]["status"] == "active"
    assert not (root / "inbox" / "carol").exists()
    frozen = cli("freeze", root)
    assert frozen.returncode == 0 and layout.state(root) == "frozen"
    refused = cli("submit", root, bot(tmp_path, "honest", "dave"), "--name", "dave")
    assert refused.returncode == 2 and "the ladder is frozen" in refused.stderr and "Traceback" not in refused.stderr
    final = cli("final", root, "--top", "3")
    assert final.returncode == 0, final.stdout + final.stderr
    assert "final: 3 finalists, 1 deal-set(s) per table, 6 games" in final.stdout, final.stdout
    snap = snapshot(root)
    assert snap["ladder"]["state"] == "final"
    standings = snap["final"]["standings"]
    assert snap["final"]["games"] == 6 and len(standings) == 3
    assert sorted(r["entrant"] for r in standings) == ["alice", "bob", "carol"]
    assert all(r["games"] == 4 for r in standings)
    exported = cli("export", root)
    assert exported.returncode == 0, exported.stderr
    assert (root / "exports" / "final.csv").read_text().count("\n") == 4
    assert json.loads((root / "exports" / "results.json").read_text())["final"]["games"] == 6
    status = cli("status", root)
    assert status.returncode == 0 and status.stdout.startswith("cup: basic, 2 seats, final,"), status.stdout
    assert cli("run", root).stderr.startswith("error: the ladder is final")


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.usefixtures("no_leaks")
def test_sigterm_stops_the_ladder_cleanly_and_the_batch_goes_on_later(tmp_path: Path) -> None:
    root = make_ladder(tmp_path, edits={"deal_sets = 1": "deal_sets = 3"})
    for name in ("alice", "bob"):
        enter(root, tmp_path, name)
    proc = subprocess.Popen(CLI + ["run", str(root)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        journal = root / "batches" / "000001" / "journal.jsonl"
        deadline = time.monotonic() + 200
        while (not journal.exists() or not journal.read_bytes().count(b"\n")) and proc.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None
        os.kill(proc.pid, signal.SIGTERM)  # the ladder's own process only: it stops its workers and bots
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    assert proc.returncode == 130, (out, err)
    assert b"stopped: 0 batch(es)" in out and b"Traceback" not in err, (out, err)
    assert not settle(), "bots outlived the stopped ladder"
    folder = root / "batches" / "000001"
    played = len(read(folder).entries)
    assert 0 < played < schedule.total_games(read_resolved(folder))
    got = cli("run", root, "--batches", "1")
    assert got.returncode == 0, got.stdout + got.stderr
    assert sorted(e.index for e in read(folder).entries) == list(range(schedule.total_games(read_resolved(folder))))
