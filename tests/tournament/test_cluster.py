"""Tournaments on a real Dask cluster: a scheduler and two workers on loopback (``dask scheduler`` /
``dask worker`` processes, tests/dask_cluster.py), driven through ``arena run --cluster``.

Same standings as a local run of the same file, a worker SIGKILLed mid-run, the coordinator
SIGKILLed and resumed, and a bot folder uploaded to the workers.  One cluster for the module (its
tests run in one worker, tests/conftest.py): each test starts with two live workers, and ends with no
process of its own left (the cluster's own processes aside).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dask_cluster import LoopbackCluster
from tests.helpers import CLI, ROOT, SMALL_GAMES, arena_processes, cmdline_of, small_reference

# the first test also starts the cluster and may build the reference run: over 120 s on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]



@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """SMALL's file and a local run of it (the runner tests' reference, run once for the whole suite)."""
    return small_reference(tmp_path_factory)


@pytest.fixture(scope="module")
def module_cluster(reference: tuple[Path, Path],
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    """A scheduler and two workers for the module, every process group killed when it ends (started
    after the reference run, whose own check for leftovers would count them)."""
    with LoopbackCluster(tmp_path_factory.mktemp("cluster"), workers=2) as c:
        yield c


@pytest.fixture
def cluster(module_cluster: LoopbackCluster) -> Iterator[LoopbackCluster]:
    """The module's cluster with two live workers (a test that killed one gets it replaced); fails the
    test if a process it started (a bot, a coordinator) outlives it, the cluster's own processes aside."""
    c = module_cluster
    live = [w for w in c.workers if w.poll() is None]
    if len(live) < 2:
        for _ in range(2 - len(live)):
            c.add_worker()
        c.wait_workers(2)
    yield c
    own = {p.pid for p in c.procs}
    deadline = time.monotonic() + 10
    while (left := [p for p in arena_processes() if p.pid not in own]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for p in left:
        p.kill()
    assert not left, f"processes left running: {[cmdline_of(p) for p in left]}"


def cli(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CLI + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def standings(folder: Path) -> dict:
    got = cli("standings", folder, "--format", "json")
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def journal(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "journal.jsonl").read_text().splitlines() if x.strip()]


def outcomes(folder: Path) -> dict[int, tuple]:
    return {e["index"]: (e["seats"], e["placings"], e["totals"]) for e in journal(folder)}


def wait_lines(folder: Path, n: int, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (folder / "journal.jsonl").exists() and len(journal(folder)) >= n:
            return
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} games journaled in {timeout}s")


def same_key(local: Path, out: Path) -> None:
    """Deal ``out`` as ``local`` was dealt: the deal seeds come from the folder's key."""
    out.mkdir(parents=True)
    (out / "secret.key").write_bytes((local / "secret.key").read_bytes())
    (out / "secret.key").chmod(0o600)


@pytest.fixture
def small(reference: tuple[Path, Path]) -> Path:
    return reference[0]


@pytest.fixture
def local_run(reference: tuple[Path, Path]) -> Path:
    return reference[1]


def test_a_cluster_run_gives_the_standings_of_a_local_run(cluster, small, local_run, tmp_path):
    out = tmp_path / "dask"
    same_key(local_run, out)
    got = cli("run", small, "--out", out, "--cluster", cluster.address, "--progress", "lines")
    assert got.returncode == 0, got.stderr[-2000:]
    assert f"on the Dask cluster at {cluster.address}" in got.stderr
    assert standings(out) == standings(local_run)
    assert outcomes(out) == outcomes(local_run)
    assert sorted(outcomes(out)) == list(range(SMALL_GAMES))
    # bots stay alive across games on a worker: 3 bots on each of 2 workers, as locally with concurrency 2
    starts = int(got.stderr.split(" bot process start(s)")[0].rsplit("; ", 1)[1])
    assert starts <= 6, got.stderr[-500:]
    # workers never get the key: the journal and the folder's files are written by the coordinator only
    assert not list(cluster.folder.rglob("secret.key"))


def test_a_worker_killed_mid_run_loses_only_its_games_in_flight(cluster, small, local_run, tmp_path):
    out = tmp_path / "dask"
    same_key(local_run, out)
    run = subprocess.Popen(CLI + ["run", str(small), "--out", str(out), "--cluster", cluster.address,
                                  "--progress", "lines"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        wait_lines(out, 3, run)
        cluster.kill_worker(0)
        _stdout, stderr = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, stderr[-2000:]
    assert "left the cluster mid-run; its games in flight are played again on another worker" in stderr, stderr
    counts = Counter(e["index"] for e in journal(out))
    assert sorted(counts) == list(range(SMALL_GAMES)) and set(counts.values()) == {1}, counts
    assert outcomes(out) == outcomes(local_run)


def test_the_coordinator_killed_and_resumed_continues_from_the_journal(cluster, small, local_run, tmp_path):
    out = tmp_path / "dask"
    same_key(local_run, out)
    run = subprocess.Popen(CLI + ["run", str(small), "--out", str(out), "--cluster", cluster.address,
                                  "--progress", "none"], cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_lines(out, 4, run)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    before = len(journal(out))
    assert before < SMALL_GAMES
    got = cli("run", small, "--out", out, "--cluster", cluster.address, "--resume", "--progress", "none")
    assert got.returncode == 0, got.stderr[-2000:]
    assert f"{before} already done" in got.stderr
    counts = Counter(e["index"] for e in journal(out))
    assert sorted(counts) == list(range(SMALL_GAMES)) and set(counts.values()) == {1}, counts
    assert outcomes(out) == outcomes(local_run)


def test_an_uploaded_bot_folder_is_sent_once_per_worker_under_its_fingerprint(cluster, tmp_path):
    (tmp_path / "me").mkdir()
    (tmp_path / "me" / "diarist.py").write_bytes((ROOT / "tests" / "bots" / "diarist.py").read_bytes())
    (tmp_path / "t.toml").write_text("""
name = "diary"
variant = "basic"
seats = 2
deal_sets = 3
output = "out"

[rules]
deals = 1

[[bots]]
name = "diarist"
command = "python3 diarist.py"
cwd = "me"
data = "me-data"
ship = "upload"

[[bots]]
name = "greedy"
command = "greedy"
""")
    got = cli("run", tmp_path / "t.toml", "--cluster", cluster.address, "--progress", "none")
    assert got.returncode == 0, got.stderr[-2000:]
    prints = {json.loads(x)["bot"]: json.loads(x) for x in (tmp_path / "out" / "bots.jsonl").read_text().splitlines()}
    digest = prints["diarist"]["program"]
    shipped = list(cluster.folder.rglob(f"arena/bots/{digest}"))
    assert len(shipped) == 2, shipped  # one unpacked copy per worker, named by the bot's fingerprint hash
    assert all((d / "diarist.py").read_bytes() == (tmp_path / "me" / "diarist.py").read_bytes() for d in shipped)
    # the bot ran from those copies: its data folder lives on the workers, one diary line per game it played
    diaries = list(cluster.folder.rglob("arena/data/diarist/diary.txt"))
    assert sum(len(d.read_text().split()) for d in diaries) == 6
    assert not (tmp_path / "me-data" / "diary.txt").exists()
