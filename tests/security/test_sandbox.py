"""The sandbox, tried by a spy, thief and forger bot in a real tournament: it sees no other
process and no token but its own, finds neither the results folder (journal, key, records) nor
another bot's folder, writes nowhere, reaches no network, cannot import the engine, and the
results it could not touch verify."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from arena.referee import sandbox
from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.usefixtures("no_leaks"),
              pytest.mark.skipif(sandbox.problem() is not None, reason=str(sandbox.problem()))]


def spy_reports(out: Path) -> list[dict]:
    reports = []
    for log in out.glob("logs/*/spy.log"):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("SPYREPORT "):
                reports.append(json.loads(line[len("SPYREPORT "):]))
    return reports


def test_spy_finds_nothing_and_changes_nothing(tmp_path):
    (tmp_path / "bots" / "spy").mkdir(parents=True)
    (tmp_path / "bots" / "other").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "bots" / "spy.py", tmp_path / "bots" / "spy" / "spy.py")
    (tmp_path / "bots" / "other" / "secret.txt").write_text("the other bot's opening book")
    out = tmp_path / "out"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    (tmp_path / "t.toml").write_text(f"""
name = "spy"
variant = "basic"
seats = 2
deal_sets = 1
output = "out"

[rules]
deals = 1

[[bots]]
name = "spy"
command = "python3 spy.py"
cwd = "bots/spy"
env = {{ RESULTS = "{out}", OTHER = "{tmp_path / 'bots' / 'other'}", PORT = "{port}" }}

[[bots]]
name = "greedy"
command = "greedy"
cwd = "bots/other"
""")
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tmp_path / "t.toml")], capture_output=True,
                          text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    reports = spy_reports(out)
    assert reports, "the spy never ran"
    for r in reports:
        assert r["processes"] == [], r["processes"]
        assert r["other_tokens"] == []
        for key in ("results_listing", "journal", "key", "other_listing", "write_own_folder", "write_results",
                    "write_home", "tcp_out", "engine_import", "remount_system_rw", "new_user_namespace"):
            assert str(r[key]).startswith("refused"), (key, r[key])
        assert r["pid1_descriptors"] == [] or str(r["pid1_descriptors"]).startswith("refused"), r["pid1_descriptors"]
        assert r["run_marker"] is None
        assert not [k for k in r["environment"] if k.startswith("ARENA_") and k not in ("ARENA_TOKEN", "ARENA_ENDPOINT",
                                                                                        "ARENA_SESSION", "ARENA_BOT_ID",
                                                                                        "ARENA_REFEREE")]
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected
    # Every seat was played by its own bot: the hello behind each seat's own gate is in the record.
    records = list(out.glob("records/*.jsonl"))
    assert records
    for rec in records:
        header = json.loads(rec.read_text().splitlines()[0])
        assert dict(zip(header["seats"], header["bots"])) == {"spy": "spy", "greedy": "greedy"}
    listener.close()
    assert not list(tmp_path.rglob("spy-was-here.txt"))
    standings = subprocess.run([sys.executable, "-m", "arena", "standings", str(out), "--format", "json"],
                               capture_output=True, text=True, timeout=60)
    assert standings.returncode == 0, standings.stderr  # every journal line verifies: nothing was forged


def test_running_without_the_sandbox_warns(tmp_path):
    done = subprocess.run([sys.executable, "-m", "arena", "play", "basic", "greedy", "greedy", "--no-sandbox",
                           "--record", str(tmp_path / "r.jsonl"), "-q"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "warning: the bots run without a sandbox" in done.stderr


def test_a_data_folder_is_the_one_place_kept_between_games(tmp_path):
    (tmp_path / "me").mkdir()
    shutil.copy(ROOT / "tests" / "bots" / "diarist.py", tmp_path / "me" / "diarist.py")
    (tmp_path / "t.toml").write_text("""
name = "diary"
variant = "basic"
seats = 2
deal_sets = 2
output = "out"

[rules]
deals = 1

[[bots]]
name = "diarist"
command = "python3 diarist.py"
cwd = "me"
data = "me-data"

[[bots]]
name = "greedy"
command = "greedy"
""")
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tmp_path / "t.toml")], capture_output=True,
                          text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    diary = (tmp_path / "me-data" / "diary.txt").read_text().split()
    assert len(diary) == 4  # every game of the tournament, written from inside the sandbox
    assert not (tmp_path / "me" / "diary.txt").exists()
