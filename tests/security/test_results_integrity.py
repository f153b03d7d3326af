"""A run never reports success it did not have: a results folder or journal that is deleted or
replaced while `arena run` writes it, or a write that fails (a file size limit, as a full disk
would), stops the run with one sentence and exit 2, leaves no process behind, and
`--resume` afterwards plays every game exactly once.

Every run here is a real ``arena run`` process with its workers and bots.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import CLI, settle

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

# 3 bots heads-up, one deal a game: 3 tables x 4 deal-sets x 2 seatings = 24 short games.
SMALL = """\
name = "integrity"
variant = "basic"
seats = 2
deal_sets = 4
concurrency = 2
seed = 5
records = false

[rules]
deals = 1

[time]
decision_ms = 10000

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "greedy-2"
command = "greedy"

[[bots]]
name = "random"
command = "random"
"""
GAMES = 24


def lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def run_and_meddle(file: Path, out: Path, meddle: Callable[[Path], None],
                   after_lines: int = 3) -> subprocess.CompletedProcess[str]:
    """Start `arena run`, call ``meddle(out)`` once the journal has ``after_lines`` games, wait for the end."""
    proc = subprocess.Popen(CLI + ["run", str(file), "--out", str(out), "--format", "csv"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while lines(out / "journal.jsonl") < after_lines and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None, "the run ended before anything could be done to its folder"
        meddle(out)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def stopped(got: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, one `error:` sentence (returned) with ``words``, no traceback, no standings printed."""
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert "Traceback" not in got.stderr
    errors = [line for line in got.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, got.stderr
    for w in words:
        assert w in errors[0], (w, errors[0])
    assert "game(s) played" not in got.stderr and not got.stdout.strip(), "a stopped run must not claim success"
    assert not settle(), "processes left after the run stopped"
    return errors[0]


def resume_plays_every_game_once(file: Path, out: Path) -> None:
    got = subprocess.run(CLI + ["run", str(file), "--out", str(out), "--resume", "--format", "json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=90)
    assert got.returncode == 0, got.stderr
    indices = [json.loads(x)["index"] for x in (out / "journal.jsonl").read_text().splitlines() if x.strip()]
    assert sorted(indices) == list(range(GAMES))


@pytest.fixture
def small(tmp_path: Path) -> Path:
    file = tmp_path / "small.toml"
    file.write_text(SMALL)
    return file


@pytest.mark.timeout(90)
def test_results_folder_deleted_mid_run(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    got = run_and_meddle(small, out, lambda o: shutil.rmtree(o, ignore_errors=True))
    error = stopped(got, str(out), "deleted", "--resume")
    assert error.count(". ") == 0 and error.endswith(f"--resume --out {out}")


@pytest.mark.timeout(120)
def test_journal_replaced_mid_run_then_resume_loses_nothing(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    def replace_journal(o: Path) -> None:
        copy = o / "copy.jsonl"
        shutil.copyfile(o / "journal.jsonl", copy)
        os.replace(copy, o / "journal.jsonl")

    got = run_and_meddle(small, out, replace_journal)
    stopped(got, f"the journal {out / 'journal.jsonl'} was replaced", "the run stopped after recording")
    assert lines(out / "journal.jsonl") < GAMES
    resume_plays_every_game_once(small, out)


def _limit_file_size(limit: int) -> None:
    # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG as on a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.timeout(120)
def test_a_write_that_fails_stops_the_run_then_resume_loses_nothing(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    got = subprocess.run(CLI + ["run", str(small), "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                         timeout=90, preexec_fn=lambda: _limit_file_size(3000))
    error = stopped(got, f"cannot write the journal {out / 'journal.jsonl'}: File too large")
    recorded = int(error.split("after recording ")[1].split(" ")[0])
    assert 0 < recorded == lines(out / "journal.jsonl") < GAMES
    assert (out / "journal.jsonl").read_bytes().endswith(b"\n"), "a partly written line was left behind"
    resume_plays_every_game_once(small, out)


@pytest.mark.timeout(60)
def test_an_output_folder_that_cannot_be_created(small: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    for out, words in ((tmp_path / "file" / "out", "is not a folder"), (Path("/proc/arena-out"), "/proc")):
        got = subprocess.run(CLI + ["run", str(small), "--out", str(out)], cwd=ROOT, capture_output=True,
                             text=True, timeout=30)
        stopped(got, "--out", words)
