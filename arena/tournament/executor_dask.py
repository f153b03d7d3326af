"""Playing a tournament's games on a Dask cluster (docs/ARCHITECTURE.md section 5).

``DaskPool`` stands beside the local ``local_pool.LocalPool``, both an
``arena.tournament.executor.Executor`` reporting the same typed events
(``Started``, ``Done``, ``Failed``): the coordinator (``arena run``) keeps the folder lock, the
key, the journal and the standings; a Dask worker only plays games.

What a worker gets, and what it never gets:

- once per worker, the ``ArenaPlugin`` (a ``distributed`` worker plugin): the
  resolved tournament and the folders of bots shipped with ``ship = "upload"``
  (a tar of the bot's ``cwd``, unpacked under the worker's local directory in a
  folder named by its fingerprint hash, and checked against that hash);
- per game, the ``GameSpec``: seats, deal seed, game id and suit map, all
  derived by the coordinator from the key.  Workers never hold ``secret.key``;
  the coordinator signs each record and journal line itself (SECURITY.md).

A worker keeps its bots alive across games: the plugin holds one ``BotHost``
per task thread (a free list), so bot starts per game are as in a local run.
A worker killed mid-game loses its games in flight; the scheduler hands them
to another worker (Dask's own rescheduling), and the coordinator says so on stderr
(a worker that left, or joined, is noticed when the runner looks at the cluster, twice a second); a game the scheduler gave up on
(``KilledWorker``) is submitted again under a new key, up to
``MAX_RESUBMITS`` times per run.  Whatever arrives, a game is journaled once
(``finished``).  A bot a worker cannot start is the bot's failure (``host.start``
records it as the game's ``crash``), never the worker's.
"""

from __future__ import annotations

import io
import os
import queue
import shutil
import sys
import tarfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from distributed import WorkerPlugin

from arena.tournament import deals, rounds, schedule
from arena.tournament.config import Executor, Tournament
from arena.tournament.executor import Done, Event, Failed, Played, RunError, Started, entry_of, play_spec
from arena.tournament.fingerprints import MAX_BYTES, MAX_FILES, SKIPPED, _folder_hash

if TYPE_CHECKING:
    from arena.referee.host import BotHost, Peer

PER_THREAD = 2          # games queued per worker thread: the one it plays and the next
MAX_RESUBMITS = 3       # games the scheduler gave up on (KilledWorker), submitted again, per run
START_TOPIC = "arena-game-start"
CONNECT_S = 10.0


def _say(line: str) -> None:
    """A notice on the coordinator's stderr, on a line of its own (after the progress bar's)."""
    sys.stderr.write(("\n" if sys.stderr.isatty() else "") + line + "\n")
    sys.stderr.flush()


class ClusterError(RunError):
    """The cluster cannot be used (unreachable scheduler, a bot folder that cannot be shipped): one sentence."""


# -- shipping bot folders -----------------------------------------------------------------------

def bundle(root: Path, skip: set[Path]) -> tuple[str, bytes]:
    """(fingerprint hash, tar.gz bytes) of the folder ``root``, walked as ``fingerprints`` walks it."""
    digest, _files, complete = _folder_hash(root, skip)
    if not complete:
        raise ClusterError(f"the folder {root} is too big to upload to the workers (over {MAX_FILES} files "
                           f"or {MAX_BYTES >> 20} MiB); put it on every worker and use ship = \"path\"")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for folder, dirs, names in os.walk(root):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED and (here / d).resolve() not in skip)
            for name in sorted(names):
                tar.add(here / name, arcname=(here / name).relative_to(root).as_posix(), recursive=False)
    return digest, buf.getvalue()


def unpack(digest: str, blob: bytes, into: Path) -> Path | None:
    """The folder ``into/digest`` holding ``blob`` (unpacked once per worker), or None if it does not hash to
    ``digest`` (then the bot's launch fails there: its failure, not the worker's)."""
    target = into / digest
    if target.is_dir():
        return target
    tmp = into / f".{digest}.{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")  # no absolute paths, no links out of the folder
    except (tarfile.TarError, OSError):
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    if _folder_hash(tmp, set())[0] != digest:
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    try:
        tmp.rename(target)
    except OSError:  # another thread of this worker won the race
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def uploads_of(t: Tournament, out: Path, upload: tuple[str, ...]) -> dict[str, tuple[str, bytes]]:
    """The bot folders to ship (``ship = "upload"``): bot name -> (hash, tar.gz bytes)."""
    base = Path(t.base_dir)
    skip = {p.resolve() for p in [out, *(b.datadir(base) for b in t.bots)] if p is not None}
    return {name: bundle(t.bot(name).workdir(base), skip) for name in upload}


# -- worker side --------------------------------------------------------------------------------

@dataclass
class _Seats:
    host: BotHost
    peers: dict[str, Peer]


class ArenaPlugin(WorkerPlugin):
    """Installed on every worker by the coordinator: the tournament, the shipped bots, and live bots."""

    def __init__(self, name: str, t: Tournament, uploads: dict[str, tuple[str, bytes]], out: str) -> None:
        self.name = name
        self.t = t
        self.uploads = uploads
        self.out = out  # the coordinator's results folder: hidden from bots should a worker share its machine
        self._state: dict[str, Any] = {}

    def setup(self, worker: Any) -> None:
        from arena.referee.launch import RUN_MARKER

        root = Path(worker.local_directory) / "arena"
        cwds: dict[str, Path | None] = {}
        for bot, (digest, blob) in self.uploads.items():
            cwds[bot] = unpack(digest, blob, root / "bots")
        os.environ[RUN_MARKER] = self.out  # every bot carries the results folder (results_folder.sweep_earlier_run)
        self._state = {"root": root, "cwds": cwds, "free": [], "all": [], "lock": threading.Lock()}

    def teardown(self, worker: Any) -> None:
        for seats in self._state.get("all", []):
            seats.host.close("the tournament is over")

    def take(self) -> _Seats:
        """A host with the tournament's bots that no other task thread is using (made on first need)."""
        from arena.referee.host import BotHost

        st = self._state
        with st["lock"]:
            if st["free"]:
                seats: _Seats = st["free"].pop()
                return seats
            n = len(st["all"])
        t, root = self.t, st["root"]
        base = Path(t.base_dir)
        # The plugin's root holds every uploaded bot's folder and data beside the logs: a bot's view is
        # its own folders only (sandbox.view), so the logs are what must be covered, not the root.
        host = BotHost(t.time, root / "logs" / f"host{n}-{os.getpid()}", sandbox=t.sandbox,
                       hide=(Path(self.out), root / "logs"))
        peers = {}
        for b in t.bots:
            if b.name in st["cwds"]:
                cwd = st["cwds"][b.name] or root / "missing" / b.name  # a bad upload: its launch fails
                data = root / "data" / b.name if b.data else None
                if data is not None:
                    data.mkdir(parents=True, exist_ok=True)
            else:
                cwd, data = b.workdir(base), b.datadir(base)
            peers[b.name] = host.add(b, cwd=cwd, data=data)
        seats = _Seats(host, peers)
        with st["lock"]:
            st["all"].append(seats)
        return seats

    def give(self, seats: _Seats) -> None:
        with self._state["lock"]:
            self._state["free"].append(seats)


def play_task(plugin: str, spec: schedule.GameSpec) -> Played:
    """A Dask task: play one scheduled game on this worker."""
    from distributed import get_worker

    worker = get_worker()
    arena = cast(ArenaPlugin, worker.plugins[plugin])
    worker.log_event(START_TOPIC, {"plugin": plugin, "index": spec.index})
    seats = arena.take()
    try:
        return play_spec(arena.t, spec, seats.host, seats.peers)
    finally:
        arena.give(seats)


# -- coordinator side ---------------------------------------------------------------------------

class DaskPool:
    """The games of a run in flight on a Dask cluster: submitting, collecting, resubmitting, stopping."""

    def __init__(self, t: Tournament, out: Path, key: bytes, pending: Iterator[int], executor: Executor) -> None:
        from distributed import Client

        self.t, self.out, self.key, self.pending = t, out, key, pending
        # a league comes here only with every round's tables recorded (the runner's check): read them once
        self.tables = rounds.recorded(out, key, rounds.tag_of(t)) if schedule.is_league(t) else {}
        address = executor.cluster
        uploads = uploads_of(t, out, executor.upload)
        try:
            self.client = Client(address, timeout=CONNECT_S, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {e}") from None
        # what the scheduler's callbacks tell: ("start", index) or ("done", future key)
        self.inbox: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.plugin = f"arena:{out}"  # one per results folder: a resumed run replaces a killed one's bots
        self.run = uuid.uuid4().hex[:8]
        self.futures: dict[str, tuple[Any, int]] = {}  # key -> (future, index)
        self.retry: deque[int] = deque()
        self.journaled: set[int] = set()
        self.resubmits = 0
        self.window = PER_THREAD
        self.workers: set[str] | None = None  # the cluster's workers when last looked at
        self.announce = _say
        try:
            self.client.subscribe_topic(START_TOPIC, self._started)
            self.client.register_plugin(ArenaPlugin(self.plugin, t, uploads, str(out)), name=self.plugin)
            self._resize()
        except BaseException:
            self.stop(quick=True)
            raise

    def _resize(self) -> None:
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        threads = sum(w.get("nthreads", 1) for w in workers.values())
        self.window = PER_THREAD * max(1, threads)
        now = set(workers)
        if self.workers is not None:
            for gone in sorted(self.workers - now):
                left = (f"{len(now)} worker(s) left" if now else
                        "no worker is left: the run waits for one to join (Ctrl-C stops it; --resume goes on)")
                self.announce(f"warning: the Dask worker {gone} left the cluster mid-run; its games in flight "
                              f"are played again on another worker; {left}")
            for joined in sorted(now - self.workers):
                self.announce(f"a Dask worker joined: {joined} ({len(now)} worker(s))")
        self.workers = now

    def _started(self, event: Any) -> None:
        _stamp, msg = event
        if isinstance(msg, dict) and msg.get("plugin") == self.plugin:
            self.inbox.put(("start", msg["index"]))

    @property
    def busy(self) -> bool:
        return bool(self.futures)

    def next_event(self, timeout: float) -> Event | None:
        """The next event; records are written and signed here, in the coordinator (``settle``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                what, item = self.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if what == "start":
                return Started("dask", item)
            event = self.settle(item)
            if event is not None:
                return event

    def feed(self) -> None:
        while len(self.futures) < self.window:
            index = self.retry.popleft() if self.retry else next(self.pending, None)
            if index is None or index < 0:
                return  # none left, or (negative: the runner's WAIT) a league's next round waits for this one
            if index in self.journaled:
                continue
            self._submit(index)

    def _spec(self, index: int) -> schedule.GameSpec:
        return deals.game_at(self.t, index, self.key, self.tables.get(schedule.round_of(self.t, index)))

    def _submit(self, index: int) -> None:
        spec = self._spec(index)
        key = f"arena-{self.run}-g{index}-{uuid.uuid4().hex[:6]}"
        fut = self.client.submit(play_task, self.plugin, spec, key=key, pure=False, priority=-index)
        self.futures[key] = (fut, index)
        fut.add_done_callback(lambda f: self.inbox.put(("done", f.key)))

    def settle(self, key: str) -> Event | None:
        """The event of a finished future (None: nothing to tell, e.g. a game submitted again)."""
        from distributed import KilledWorker

        held = self.futures.get(key)
        if held is None:
            return None
        fut, index = held
        if index in self.journaled:  # a second result for a game already journaled: ignored
            del self.futures[key]
            return None
        if fut.status == "finished":
            played: Played = fut.result()
            spec = self._spec(index)
            return Done("dask", entry_of(self.t, spec, played, self.out, self.key), played.starts)
        del self.futures[key]
        if fut.status == "cancelled":
            self.retry.append(index)
            return None
        exc = fut.exception()
        if isinstance(exc, KilledWorker) and self.resubmits < MAX_RESUBMITS:
            self.resubmits += 1
            self.retry.append(index)
            return None
        if isinstance(exc, KilledWorker):
            raise ClusterError(f"game {index} was lost with {MAX_RESUBMITS + 1} workers that died playing it; "
                               f"see the workers' logs") from None
        return Failed("dask", index, f"{type(exc).__name__}: {exc}")

    def finished(self, index: int) -> bool:
        """Note game ``index`` as done; False if it already was (a result that came twice)."""
        for key, (_fut, i) in list(self.futures.items()):
            if i == index:
                del self.futures[key]
        if index in self.journaled:
            return False
        self.journaled.add(index)
        return True

    def replace_dead(self) -> None:
        """The scheduler reschedules a lost worker's games itself; here only the window follows the cluster."""
        self._resize()

    def stop(self, quick: bool) -> None:
        """Cancel what is in flight, close the workers' bots (the plugin's teardown), disconnect."""
        try:
            futs = [f for f, _i in self.futures.values()]
            if futs:
                self.client.cancel(futs, force=True)
            self.client.unregister_worker_plugin(self.plugin)
        except Exception:  # noqa: BLE001 - a scheduler that went away: nothing left to stop there
            pass
        finally:
            self.futures.clear()
            self.client.close(timeout=2 if quick else 10)
