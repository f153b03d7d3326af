"""The tournament runner through the CLI: kill -9 and resume, ratings, duplicate deals, bad files.

Every run here is a real ``arena`` process (``python -m arena.cli``) with worker
processes and bot processes, so what is tested is what a user gets: exit
codes, messages, the results folder, and that nothing is left running.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import psutil
import pytest

from arena.rules.presets import PRESETS
from arena.tournament.journal import read
from arena.tournament.ratings import rate
from tests.helpers import (
    CLI,
    ROOT,
    SMALL,
    SMALL_GAMES,
    cli,
    count_lines,
    games,
    journal_lines,
    printed_json,
    same_deals_as,
    settle,
    small_reference,
    standings_json,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

PRESET_FILES = {name: ROOT / "tournaments" / f"{name}.toml" for name in PRESETS}



@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The small tournament's file and the folder of one uninterrupted run of it (shared with the cluster tests)."""
    return small_reference(tmp_path_factory)


# -- resume after kill -9 ---------------------------------------------------------------------

@pytest.mark.timeout(180)
def test_kill_9_of_the_whole_run_then_resume_equals_an_uninterrupted_run(reference, tmp_path):
    file, ref = reference
    out = tmp_path / "killed"
    journal = out / "journal.jsonl"
    same_deals_as(ref, out)
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(CLI + ["run", str(file), "--out", str(out)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while count_lines(journal) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        assert count_lines(journal) >= 3, "no game was journaled in time"
        os.killpg(proc.pid, signal.SIGKILL)  # the main process and its workers (bots have their own groups)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    killed_at = len(read(out).entries)  # a torn last line (killed mid-write) does not count
    assert 3 <= killed_at < SMALL_GAMES, killed_at

    # Nothing of the killed run survives: not its workers (same group), not its bots (they die with their worker).
    assert not settle(), "processes of the killed run are still alive"
    assert not [p for p in psutil.process_iter() if _pgid(p) == proc.pid], "the killed run's process group lives on"

    got = cli("run", file, "--out", out, "--resume", "--format", "json", timeout=150)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    assert f"{SMALL_GAMES - killed_at} game(s) played, {killed_at} already done" in got.stderr, got.stderr

    lines = journal_lines(out)
    indices = [e["index"] for e in lines]
    assert sorted(indices) == list(range(SMALL_GAMES)), Counter(indices)  # every game exactly once
    assert games(out) == games(ref)
    assert standings_json(out) == standings_json(ref)
    assert printed_json(got.stdout) == standings_json(ref)  # what `run` printed at the end
    assert not settle()


@pytest.mark.timeout(120)
def test_a_killed_worker_is_replaced_and_its_game_played_once(reference, tmp_path):
    file, ref = reference
    out = tmp_path / "out"
    journal = out / "journal.jsonl"
    same_deals_as(ref, out)
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(CLI + ["run", str(file), "--out", str(out), "--format", "json"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while count_lines(journal) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        workers = [c for c in psutil.Process(proc.pid).children() if "spawn_main" in _cmdline(c)]
        assert len(workers) == 2 and count_lines(journal) < SMALL_GAMES
        workers[0].kill()
        stdout, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    assert proc.returncode == 0, (tmp_path / "stderr.txt").read_text()
    assert sorted(e["index"] for e in journal_lines(out)) == list(range(SMALL_GAMES))
    assert games(out) == games(ref)
    assert printed_json(stdout) == standings_json(ref)
    assert not settle()


def _cmdline(p: psutil.Process) -> str:
    """A child's command line, or "" for one that has just ended (a zombie not yet reaped)."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


@pytest.mark.timeout(60)
def test_one_run_at_a_time_per_results_folder(reference, tmp_path):
    import fcntl

    file, _ = reference
    out = tmp_path / "out"
    out.mkdir()
    with open(out / "run.lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running `arena run` does
        got = cli("run", file, "--out", out)
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "in use by another `arena run`" in got.stderr
    assert not (out / "journal.jsonl").exists()


def _pgid(p: psutil.Process) -> int | None:
    try:
        return os.getpgid(p.pid) if p.status() != psutil.STATUS_ZOMBIE else None
    except (psutil.Error, OSError):
        return None


# -- ratings ----------------------------------------------------------------------------------

def test_greedy_ranks_above_random_with_separate_intervals(reference):
    _, ref = reference
    rows = standings_json(ref)["rows"]
    order = [r["bot"] for r in rows]
    assert order[-1] == "random", order
    entries = read(ref).entries
    assert len(entries) == SMALL_GAMES
    r = rate(entries, ["greedy", "greedy-2", "random"])
    for g in ("greedy", "greedy-2"):
        assert r[g].low > r["random"].high, (r[g], r["random"])
    by_bot = {row["bot"]: row for row in rows}
    assert by_bot["greedy"]["rating"] == pytest.approx(r["greedy"].rating)  # the standings show the same fit


# -- duplicate deals in practice ----------------------------------------------------------------

THREE_SEATS = """\
name = "dup"
variant = "basic"
seats = 3
deal_sets = 2
seating = "all"
concurrency = 2
seed = 3

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


@pytest.mark.timeout(120)
def test_every_seating_of_a_deal_set_is_dealt_the_same_cards(tmp_path):
    file = tmp_path / "dup.toml"
    file.write_text(THREE_SEATS)
    out = tmp_path / "out"
    got = cli("run", file, "--out", out, "--format", "csv")
    assert got.returncode == 0, got.stderr
    entries = journal_lines(out)
    assert len(entries) == 12
    sets: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for e in entries:
        sets[(e["table"], e["set"])].append(e)
    assert len(sets) == 2 and all(len(v) == 6 for v in sets.values())
    # Journal lines carry no deal seed (SECURITY.md); the private records' headers do.
    seeds = {k: {_header(out / e["record"])["seed"] for e in v} for k, v in sets.items()}
    assert all(len(s) == 1 for s in seeds.values()) and len(set.union(*seeds.values())) == 2
    for group in sets.values():
        deals = [_deals(out / e["record"]) for e in group]
        common = min(len(d) for d in deals)
        assert common >= 1
        for n in range(common):
            multisets = {tuple(sorted(tuple(sorted(h)) for h in d[n])) for d in deals}
            assert len(multisets) == 1, f"deal {n + 1}: seatings were dealt different cards"
            assert len({tuple(map(tuple, d[n])) for d in deals}) == 1, "a seat's hand depends on who sits there"
        # Permuted by seating: every bot is dealt every seat's first hand equally often (all 6 seatings).
        holders = Counter((e["seats"][j], j) for e in group for j in range(3))
        assert set(holders.values()) == {2} and len(holders) == 9
        first_hands = Counter((e["seats"][j], tuple(_deals(out / e["record"])[0][j])) for e in group for j in range(3))
        assert set(first_hands.values()) == {2}


def _header(record: Path) -> dict:
    """A game record's header line."""
    return json.loads(record.read_text().splitlines()[0])


def _deals(record: Path) -> list[list[list[str]]]:
    """The dealt hands (by seat) of every deal of a game record."""
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    return [e["hands"] for e in lines[1:] if e.get("e") == "deal_start"]


# -- bad files ----------------------------------------------------------------------------------

def _bad(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


BAD = {
    "unknown key": (_bad(SMALL, "deal_sets = 4\n", "deal_set = 4\n"), ["did you mean 'deal_sets'", "small.toml:4:"]),
    "wrong type": (_bad(SMALL, "seats = 2\n", 'seats = "two"\n'), ["seats", "expected a whole number", "'two'"]),
    "missing command": (_bad(SMALL, 'name = "random"\ncommand = "random"\n', 'name = "random"\n'),
                        ["bots[2].command", "missing"]),
    "no such command": (_bad(SMALL, 'command = "random"', 'command = "no-such-bot-xyz --fast"'),
                        ["bots[2].command", "'no-such-bot-xyz'", "not on PATH"]),
    "table too big": (_bad(SMALL, "seats = 2\n", "seats = 7\n"), ["seats", "2 to 6 players", "got 7"]),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_file_gets_one_clear_message_and_exit_code_2(case, tmp_path):
    text, wanted = BAD[case]
    file = tmp_path / "small.toml"
    file.write_text(text)
    out = tmp_path / "out"
    for command in (["validate", file], ["run", file, "--out", out]):
        got = cli(*command)
        assert got.returncode == 2, (command[0], got.stdout, got.stderr)
        assert "Traceback" not in got.stderr
        problems = [line for line in got.stderr.splitlines() if line.startswith(str(file) + ":")]
        assert len(problems) == 2 and problems[-1].endswith("1 problem(s); nothing was run"), got.stderr
        for w in wanted:
            assert w in problems[0], (w, problems[0])
    assert not out.exists(), "a bad file must not create a results folder"


# -- finished runs, init, presets ---------------------------------------------------------------------

@pytest.mark.timeout(60)
def test_a_finished_folder_needs_resume_and_resume_plays_nothing(reference, tmp_path):
    file, ref = reference
    out = tmp_path / "copy"
    shutil.copytree(ref, out)
    before = (out / "journal.jsonl").read_bytes()

    got = cli("run", file, "--out", out)
    assert got.returncode == 2, got.stderr
    assert "Traceback" not in got.stderr
    assert f"already holds {SMALL_GAMES} finished game(s)" in got.stderr and "--resume" in got.stderr

    got = cli("run", file, "--out", out, "--resume", "--format", "json")
    assert got.returncode == 0, got.stderr
    assert f"0 game(s) played, {SMALL_GAMES} already done" in got.stderr
    assert "0 bot process start(s)" in got.stderr
    printed = printed_json(got.stdout)
    assert printed["games"] == SMALL_GAMES and [r["bot"] for r in printed["rows"]][-1] == "random"
    assert (out / "journal.jsonl").read_bytes() == before


@pytest.mark.timeout(60)
def test_a_new_run_of_a_folder_first_kills_what_an_earlier_killed_run_left(reference, tmp_path):
    file, ref = reference
    out = tmp_path / "copy"
    shutil.copytree(ref, out)
    # A bot's grandchild that escaped its group and outlived the run carries the folder in ARENA_RUN.
    env = dict(os.environ, ARENA_RUN=str(out.resolve()))
    leftover = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    try:
        got = cli("run", file, "--out", out, "--resume", "--format", "csv")
        assert got.returncode == 0, got.stderr
        assert leftover.wait(5) == -signal.SIGKILL
    finally:
        if leftover.poll() is None:
            leftover.kill()
            leftover.wait()


@pytest.mark.timeout(60)
def test_init_writes_a_file_that_validates_and_runs(tmp_path):
    file = tmp_path / "mine.toml"
    got = cli("init", file)
    assert got.returncode == 0, got.stderr
    got = cli("validate", file)
    assert got.returncode == 0, got.stderr
    assert "ok:" in got.stdout
    again = cli("init", file)
    assert again.returncode == 2 and "--force" in again.stderr
    got = cli("run", file, "--out", tmp_path / "out", "--format", "csv")
    assert got.returncode == 0, got.stderr
    assert len(journal_lines(tmp_path / "out")) == 4


def test_every_preset_file_validates():
    assert set(PRESET_FILES) == {"basic", "international", "parlett", "czech", "german", "wrotham"}
    for name, file in PRESET_FILES.items():
        got = cli("validate", file)
        assert got.returncode == 0, got.stderr
        assert f"ok: {name}, {name}," in got.stdout


@pytest.mark.timing  # asserts on each preset's wall time
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(PRESET_FILES))
def test_every_preset_runs_to_the_end(name, tmp_path):
    out = tmp_path / name
    started = time.monotonic()
    got = cli("run", PRESET_FILES[name], "--out", out, "--format", "json")
    elapsed = time.monotonic() - started
    assert got.returncode == 0, got.stderr
    st = printed_json(got.stdout)
    indices = sorted(e["index"] for e in journal_lines(out))
    assert indices == list(range(len(indices))) and st["games"] == len(indices) > 0
    # A busy machine may turn a move into a timeout (and its late reply into a stale one); nothing else.
    assert set(st["failure_kinds"]) <= {"timeout", "stale"}, st["failure_kinds"]
    assert elapsed < 60, f"{name} took {elapsed:.0f}s; presets must stay well under a minute"
    assert not settle()
