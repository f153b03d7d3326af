"""The executor settings of a tournament file and the shipping of bot folders (no cluster needed)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from arena.tournament.config import Executor, load, read_resolved, validate_file, write_resolved
from arena.tournament.executor_dask import bundle, unpack
from arena.tournament.fingerprints import of_bot

BASE = """\
name = "club"
variant = "basic"
seats = 2
{top}
[[bots]]
name = "mine"
command = "python3 bot.py"
cwd = "mine"
{ship}

[[bots]]
name = "b"
command = "greedy"
"""


def write(tmp_path: Path, top: str = "", ship: str = "") -> Path:
    (tmp_path / "mine").mkdir(exist_ok=True)
    (tmp_path / "mine" / "bot.py").write_text("print('hi')\n")
    p = tmp_path / "t.toml"
    p.write_text(BASE.format(top=top, ship=ship))
    return p


def test_no_executor_table_plays_locally(tmp_path):
    t = load(write(tmp_path))
    assert t.executor == Executor()


def test_executor_cluster_and_uploaded_bots_are_read(tmp_path):
    t = load(write(tmp_path, '[executor]\ncluster = "tcp://10.0.0.5:8786"\n', 'ship = "upload"'))
    assert t.executor == Executor(cluster="tcp://10.0.0.5:8786", upload=("mine",))


def test_the_executor_is_not_part_of_the_resolved_copy(tmp_path):
    """The same games wherever they are played: --resume on another executor is the same tournament."""
    t = load(write(tmp_path, '[executor]\ncluster = "tcp://h:8786"\n', 'ship = "upload"'))
    write_resolved(t, tmp_path / "out")
    again = read_resolved(tmp_path / "out")
    assert again.executor == Executor()
    assert again.to_toml_data() == t.to_toml_data()


def test_bad_executor_values_are_errors_with_their_key(tmp_path):
    _t, errors = validate_file(write(tmp_path, '[executor]\ncluster = "10.0.0.5"\nthreads = 2\n', 'ship = "copy"'))
    keys = sorted(e.key for e in errors)
    assert keys == ["bots[0].ship", "executor.cluster", "executor.threads"], [str(e) for e in errors]


def test_uploading_needs_a_cwd_folder(tmp_path):
    p = tmp_path / "t.toml"
    (tmp_path / "bot.py").write_text("print('hi')\n")
    p.write_text(BASE.format(top="", ship='ship = "upload"').replace('cwd = "mine"\n', ""))
    _t, errors = validate_file(p)
    assert [e.key for e in errors] == ["bots[0].ship"], [str(e) for e in errors]


def test_a_bundle_is_named_by_the_bots_fingerprint_and_unpacks_to_the_same_files(tmp_path):
    t = load(write(tmp_path))
    (tmp_path / "mine" / "lib").mkdir()
    (tmp_path / "mine" / "lib" / "x.txt").write_text("data")
    (tmp_path / "mine" / "__pycache__").mkdir()
    (tmp_path / "mine" / "__pycache__" / "junk.pyc").write_text("skipped as the fingerprint skips it")
    digest, blob = bundle(tmp_path / "mine", set())
    assert digest == of_bot(t.bot("mine"), tmp_path).program
    got = unpack(digest, blob, tmp_path / "worker")
    assert got == tmp_path / "worker" / digest
    assert (got / "bot.py").read_text() == "print('hi')\n" and (got / "lib" / "x.txt").read_text() == "data"
    assert not (got / "__pycache__").exists()
    assert unpack(digest, b"not even read", tmp_path / "worker") == got  # once per worker: already there


def test_a_bundle_that_does_not_hash_to_its_name_is_refused(tmp_path):
    write(tmp_path)
    digest, _blob = bundle(tmp_path / "mine", set())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"print('tampered')\n"
        info = tarfile.TarInfo("bot.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert unpack(digest, buf.getvalue(), tmp_path / "worker") is None
    assert list((tmp_path / "worker").iterdir()) == []


class _Future:
    def __init__(self, status: str) -> None:
        self.status = status


def test_a_result_for_a_game_already_journaled_is_ignored():
    """A worker declared lost that comes back with a game another worker already returned: not journaled again."""
    from arena.tournament.executor_dask import DaskPool

    pool = object.__new__(DaskPool)  # no cluster: only the bookkeeping
    pool.futures = {"k1": (_Future("finished"), 7), "k2": (_Future("finished"), 7)}
    pool.journaled = set()
    assert pool.finished(7) is True
    assert pool.futures == {}
    pool.futures["k3"] = (_Future("finished"), 7)
    assert pool.settle("k3") is None and pool.futures == {}
    assert pool.finished(7) is False


@pytest.mark.slow
def test_a_bot_a_worker_cannot_start_is_the_bots_failure_not_the_workers(tmp_path):
    """An uploaded folder that does not hash to its name is not used: the bot's launch fails on that worker,
    and the game goes on with the bot's seat failed (a crash before hello), the worker unharmed."""
    from arena.integrity import make_key
    from arena.tournament import schedule
    from arena.tournament.executor import play_spec
    from arena.tournament.executor_dask import ArenaPlugin

    t = load(write(tmp_path, "sandbox = false\n[executor]\n", 'ship = "upload"'))
    plugin = ArenaPlugin("arena:test", t, {"mine": ("0" * 64, b"not a tar")}, str(tmp_path / "out"))
    worker = type("W", (), {"local_directory": str(tmp_path / "worker")})()
    plugin.setup(worker)
    seats = plugin.take()
    try:
        spec = schedule.game_at(t, 0, make_key(tmp_path))
        played = play_spec(t, spec, seats.host, seats.peers)
    finally:
        plugin.give(seats)
        plugin.teardown(worker)
    mine = spec.seats.index("mine")
    assert played.result.failures[mine].get("crash") == 1, played.result.failures
    assert played.starts == 2 and played.result.failures[1 - mine] == {}  # the other bot played as usual


def test_a_dask_pool_tells_typed_events():
    """What the scheduler's callbacks put in the inbox comes out as the executor's typed events."""
    import queue
    from collections import deque

    from arena.tournament.executor import Failed, Started
    from arena.tournament.executor_dask import DaskPool

    class Lost:
        status = "error"

        def exception(self) -> Exception:
            return ValueError("a referee bug")

    pool = object.__new__(DaskPool)
    pool.inbox = queue.Queue()
    pool.journaled, pool.retry, pool.resubmits = set(), deque(), 0
    pool.futures = {"k9": (Lost(), 9)}
    assert pool.next_event(timeout=0.01) is None
    pool.inbox.put(("start", 4))
    pool.inbox.put(("done", "k-gone"))  # a future already settled: nothing to tell
    pool.inbox.put(("done", "k9"))
    assert pool.next_event(timeout=0.01) == Started("dask", 4)
    assert pool.next_event(timeout=0.01) == Failed("dask", 9, "ValueError: a referee bug")
    assert pool.futures == {}


def test_the_executors_do_not_import_each_other():
    """The runner and the Dask executor share ``executor``; neither imports the other at load time."""
    import ast

    from arena.tournament import executor_dask

    tree = ast.parse(Path(executor_dask.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "arena.tournament.runner" not in imported and "arena.tournament.executor" in imported
