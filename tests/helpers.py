"""Helpers the test modules share (import them from here, never from another test module): paths of the
test bots, real games between bot processes, the processes this pytest process started, the CLI as a
user runs it, folders built once for all pytest-xdist workers, the small tournament several runner
tests play, and results folders written directly."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
import zmq

from arena.integrity import make_key
from arena.referee.game import GameResult, play_one
from arena.referee.host import BotHost
from arena.referee.launch import MARKER, SESSION
from arena.rules.options import resolve
from arena.settings import BotSpec, FailurePolicy, Limits, TimeControl
from arena.tournament.config import validate_text, write_resolved
from arena.tournament.journal import Journal, JournalEntry
from arena.tournament.schedule import iter_games

ROOT = Path(__file__).resolve().parent.parent
MISBEHAVE = str(ROOT / "tests" / "bots" / "misbehave.py")
# The data quota's bound stated in SECURITY.md: past its quota a bot writes at most this much before it is
# stopped (what it writes between two of the watcher's measures: up to 768 MiB in a loaded CI run).
DATA_BOUND_MB = 1024


def deep_folder(top: Path, depth: int = 25, make: bool = True) -> int:
    """A descriptor of the folder ``depth`` names of 250 characters below ``top`` (25: past PATH_MAX),
    made on the way unless ``make`` is False."""
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        if make:
            os.mkdir("d" * 250, dir_fd=fd)
        inner = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    return fd


def data_volumes() -> bool:
    """Whether a data folder here is a volume of its quota (root, loop devices, mkfs.ext4)."""
    from arena.referee import datavolume

    return datavolume.enabled()


HOSTILE = str(ROOT / "tests" / "bots" / "hostile.py")


def misbehave(mode: str) -> str:
    return f"{sys.executable} {MISBEHAVE} {mode}"


def hostile(mode: str) -> str:
    return f"{sys.executable} {HOSTILE} {mode}"


def arena_processes() -> list[psutil.Process]:
    """Live processes started from this test run (they carry its ARENA_SESSION marker)."""
    found = []
    me = os.getpid()
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.pid == me or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if p.environ().get(MARKER) == SESSION:
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found


def cmdline_of(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return str(p.pid)


# -- the CLI as a user runs it (runner, league and cluster tests) ----------------------------------

CLI = [sys.executable, "-m", "arena.cli"]


def cli(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CLI + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def settle(timeout: float = 10.0) -> list[psutil.Process]:
    """Wait until no process of this test run is left (a finished run's helpers exit a moment later)."""
    deadline = time.monotonic() + timeout
    while (left := arena_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def journal_lines(folder: Path) -> list[dict]:
    """Every line of the journal, decoded (a torn line would fail here)."""
    return [json.loads(x) for x in (folder / "journal.jsonl").read_text().splitlines() if x.strip()]


def games(folder: Path) -> dict[int, tuple]:
    return {e["index"]: (e["seats"], e["placings"], e["totals"]) for e in journal_lines(folder)}


def standings_json(folder: Path) -> dict:
    got = cli("standings", folder, "--format", "json")
    assert got.returncode == 0, got.stderr
    return printed_json(got.stdout)


def printed_json(stdout: str) -> dict:
    """The standings JSON that `arena run --format json` prints at the end (after the progress bar)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("{"))
    return json.loads("\n".join(lines[start:]))


def same_deals_as(ref: Path, out: Path) -> None:
    """Give a new results folder the reference run's secret key, so its games are dealt the same."""
    out.mkdir(parents=True)
    shutil.copy2(ref / "secret.key", out / "secret.key")


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@contextmanager
def unmarked() -> Iterator[None]:
    """Processes started inside carry no ARENA_SESSION marker: for a module's long-lived helper (a
    browser) that another test's leak check, in the same xdist worker, must not count as its leftover."""
    saved = os.environ.pop(MARKER, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[MARKER] = saved


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A folder that ``build`` fills once per pytest run, shared by all pytest-xdist workers (the first to
    ask builds it under a lock, the others wait, then read it): for fixtures that tests only read."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' base folders are siblings in this run's folder
    folder = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed in another worker
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


def run_game(
    variant: str,
    commands: list[str],
    tmp_path: Path,
    seed: int = 1,
    policy: FailurePolicy = FailurePolicy(),
    time_control: TimeControl = TimeControl(start_ms=10000, decision_ms=1000, grace_ms=50),
    env: dict[int, dict[str, str]] | None = None,
    other_token_of: dict[int, int] | None = None,
    overrides: dict | None = None,
    transports: dict[int, str] | None = None,
    limits: dict[int, Limits] | None = None,
    sandbox: bool = True,
    seat_times: dict[int, TimeControl] | None = None,
) -> tuple[GameResult, list[str]]:
    """Play one game between real bot processes; returns the result and the seats' tokens."""
    rules = resolve(variant, overrides or {})
    with BotHost(time_control, tmp_path / "logs", sandbox=sandbox) as host:
        peers = [host.add(BotSpec(name=f"s{i}", command=c, transport=(transports or {}).get(i, "zmq"),
                                  limits=(limits or {}).get(i, Limits())))
                 for i, c in enumerate(commands)]
        for i, peer in enumerate(peers):
            extra = dict((env or {}).get(i, {}))
            if other_token_of and i in other_token_of:
                extra["OTHER_TOKEN"] = peers[other_token_of[i]].token
            if extra:
                peer.spec = replace(peer.spec, env=extra)
        for peer in peers:
            host.start(peer)
        result = play_one(host, peers, rules, seed, f"test-{seed}", time_control, policy, tmp_path / "record.jsonl",
                          seat_times=[(seat_times or {}).get(i) for i in range(len(peers))])
        tokens = [p.token for p in peers]
    return result, tokens


# A small tournament for runner and cluster tests, 3 bots heads-up: 3 tables x 4 deal-sets x 2 seatings = 24 games.  No random-vs-random
# table (those games are long); a 10 s decision clock so a busy machine cannot turn a
# move into a timeout and make two runs differ.
SMALL = """\
name = "small"
variant = "basic"
seats = 2
deal_sets = 4
concurrency = 2
seed = 7
records = false

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
SMALL_GAMES = 24


def small_reference(factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """SMALL's file and the folder of one uninterrupted run of it, built once for all workers (the runner
    and cluster tests compare their runs with it, dealt alike by its key: they copy it, never change it)."""
    def build(base: Path) -> None:
        (base / "small.toml").write_text(SMALL)
        got = cli("run", base / "small.toml", "--out", base / "results", "--format", "json")
        assert got.returncode == 0, got.stderr
        assert not settle(), "processes left after the reference run"
    base = built_once(factory, "small-reference", build)
    return base / "small.toml", base / "results"


# -- processes ending ------------------------------------------------------------------------------

def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


def kill_9(referee: subprocess.Popen[str]) -> None:
    if referee.poll() is None:
        os.killpg(referee.pid, signal.SIGKILL)
        referee.wait(10)


# -- results folders written directly (no games played) -------------------------------------------

def folder_of(tmp_path: Path, names: list[str], seats: int, deal_sets: int,
              result, extra: str = "") -> Path:
    """A results folder whose journal holds the games of the schedule, ``result(game) -> (placings, totals, ...)``
    (``None``: the game is not played yet)."""
    text = (f'name = "truth"\nvariant = "basic"\nseats = {seats}\ndeal_sets = {deal_sets}\n{extra}\n'
            + "".join(f'[[bots]]\nname = "{b}"\ncommand = "random"\n' for b in names))
    t, errors = validate_text(text, base_dir=tmp_path)
    assert t is not None, errors
    folder = tmp_path / "results"
    write_resolved(t, folder)
    key = make_key(folder)
    with Journal(folder, key) as j:
        for g in iter_games(t, key):
            played = result(g)
            if played is None:
                continue
            placings, totals, *rest = played
            failures, forfeited = rest if rest else ([{} for _ in g.seats], [])
            j.append(JournalEntry(index=g.index, game_id=g.game_id, deal_seed=g.deal_seed, table=g.table, set=g.set,
                                  seating=g.seating, seats=list(g.seats), placings=placings, totals=totals,
                                  failures=failures, forfeited=forfeited))
    return folder


def by_name(order: list[str]):
    """Placings in a fixed order of strength, totals 10 points apart."""
    def result(g):
        ranks = sorted(g.seats, key=order.index)
        placings = [ranks.index(b) + 1 for b in g.seats]
        return placings, [10 * (len(g.seats) - p) for p in placings]
    return result


def hostile_report(log: Path, wait: float = 15) -> dict:
    """What ``tests/bots/hostile.py host_powers`` reported in its log (``HOSTILE {...}``), once the bot's log
    copier (a process of its own, so a little after the bot wrote it) has put it there."""
    deadline = time.monotonic() + wait
    while True:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("HOSTILE "):
                return json.loads(line[len("HOSTILE "):])
        if time.monotonic() > deadline:
            raise AssertionError(f"no report in {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)


def remove_chain(top: Path, name: str = "n") -> None:
    """Remove a chain of folders ``top/name/name/...`` of any depth (shutil.rmtree recurses, and so does
    pytest's clean-up of old temporary folders: a chain over ~1,000 deep makes them fail), lifting the
    chain one level a step."""
    if not top.is_dir():
        return
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while True:
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                return
            try:
                for entry in os.listdir(inner):
                    os.rename(entry, f"{entry}.up", src_dir_fd=inner, dst_dir_fd=fd)
            finally:
                os.close(inner)
            os.rmdir(name, dir_fd=fd)
            if os.path.lexists(f"/proc/self/fd/{fd}/{name}.up"):
                os.rename(f"{name}.up", name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def zmq_peer(ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, ident: str, kind: int = zmq.DEALER,
             timeout_ms: int = 10000) -> zmq.Socket[bytes]:
    """A libzmq socket connected to ``endpoint`` under routing id ``ident``, as a bot's would be."""
    s = ctx.socket(kind)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, timeout_ms)
    s.setsockopt(zmq.ROUTING_ID, ident.encode())
    s.connect(endpoint)
    return s


def play_with_limits(tmp_path: Path, commands: list[str], seed: int, tc: TimeControl, limits: dict[int, Limits] | None = None,
                     data: dict[int, Path] | None = None, sandbox: bool = True) -> GameResult:
    """One basic game between ``commands``, seat ``i`` under ``limits[i]`` with ``data[i]`` as its data folder."""
    with BotHost(tc, tmp_path / "logs", sandbox=sandbox) as host:
        peers = [host.add(BotSpec(name=f"s{i}", command=c, limits=(limits or {}).get(i, Limits())),
                          data=(data or {}).get(i))
                 for i, c in enumerate(commands)]
        for peer in peers:
            host.start(peer)
        return play_one(host, peers, resolve("basic", {}), seed, f"test-{seed}", tc, FailurePolicy(),
                        tmp_path / "record.jsonl")


def failures_of(result: GameResult, seat: int) -> list:
    """The failures a game charged to ``seat``."""
    return [e for e in result.failure_log if e.seat == seat]


REMOTE_FILE = """\
name = "remote"
variant = "basic"
seats = 2
deal_sets = 2
concurrency = 2
records = false

[rules]
deals = 1

[time]
decision_ms = 10000

[failures]
timeout = "forfeit"

[executor]
listen = "127.0.0.1:{port}"
remote_wait_s = {wait}

[[bots]]
name = "alice"
remote = true

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "greedy-2"
command = "greedy"
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def remote_tournament(tmp_path: Path, wait: int) -> Path:
    """A tournament file with one remote seat (alice) listening on a free port, waiting ``wait`` s for it."""
    f = tmp_path / "t.toml"
    f.write_text(REMOTE_FILE.format(port=free_port(), wait=wait))
    return f


# Chromium for the page tests, driven by Playwright (its own browser download is never used)
CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
