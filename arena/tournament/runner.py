"""Running a tournament: worker processes play games, the main process journals them.

The unit of work is one game, fully described by the resolved tournament (the
``tournament.toml`` in the results folder) and the game's index: a worker
needs nothing else, so the same games could run on another executor.  Each
worker owns one ``BotHost`` and keeps its bots alive across its games (a
fresh ``new_game`` each time), restarting a bot only after a failure whose
row says so (``arena.failures.RESTART_AFTER``: crash, timeout, disconnect, resource).  The main process hands out indices that the journal
does not hold yet, appends every finished game to the journal (fsync'd), and
shows progress; ``--resume`` after any interruption, ``kill -9`` included,
continues without losing or repeating a game.

Each worker has its own task queue and holds at most ``PER_WORKER`` games
(the one it plays and the next), so the main process always knows which games
a worker holds: a worker that dies (killed, out of memory) is replaced and its
games are handed out again, up to ``MAX_WORKER_RESTARTS`` times per run.  A
worker dies with the main process (``PR_SET_PDEATHSIG``), and its bots with it.

One run at a time per results folder: the main process holds an exclusive
lock on ``run.lock`` (released by the kernel however the process ends).  Bots
carry the folder in ``ARENA_RUN``, so a new run of the folder first kills
whatever an earlier, killed run left behind (e.g. a bot's escaped grandchild).

The main process never reports a game it did not record: before each journal
append and twice a second it checks that the results folder, its lock file,
its ``tournament.toml`` and the journal are still the files it started with,
and any failed write (full disk, I/O error, read-only filesystem) stops the
run with ``RunStopped``: one sentence naming the file and the cause, the
workers and their bots stopped, and ``--resume`` continuing from what the
journal holds.

Before the first game (``_check_bots``, when games are left to play) every
bot is fingerprinted and, on ``--resume``, compared with what the folder
recorded (``arena.tournament.fingerprints``), then started once and waited
for (``arena.tournament.startup``); a changed bot (unless accepted) or one
that does not start stops the run with ``BotProblems``, a sentence per bot.
A tournament that ``--resume`` grew stands only once these checks pass: on any
failure the resolved file it had is put back.

The results folder's secret key (``secret.key``, made by the first run of the
folder, reused by every ``--resume``) gives every deal seed and game id and
signs every journal line and game record (``arena.integrity``).  ``--resume``
counts only lines that verify: any line that does not, any index outside the
schedule and any second result for a game stop it (``BadJournal``) unless it
was asked to set such lines aside (``drop_bad_lines``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from arena.integrity import KEY_FILE, KeyFileError, folder_key, make_key
from arena.tournament import deals, growth, rounds, schedule, signed_log
from arena.tournament import executor as executors
from arena.tournament.config import (
    RESOLVED_FILE,
    ConfigFileError,
    Executor,
    Tournament,
    read_resolved,
    write_resolved,
)
from arena.tournament.executor import Done, Event, Failed, RunError, Started, entry_of, play_spec, rss_mb
from arena.tournament.journal import (
    LOCK_FILE,
    Journal,
    JournalContents,
    JournalEntry,
    JournalError,
    check,
    lock_folder,
    read,
    reason,
    set_aside,
)

if TYPE_CHECKING:
    from arena.referee.host import BotHost, Peer

PER_WORKER = 2            # games queued on a worker at once: the one it plays and the next
MAX_WORKER_RESTARTS = 3   # per run; a worker that keeps dying means a bug, not bad luck
GROWS = ("bots", "deal_sets", "history")  # what --resume may change: the tournament grows (growth.py)
POLL_S = 0.5              # how often the main process looks for dead workers


class RunStopped(RunError):
    """A run that had to stop part way (its folder or journal went away, a write failed)."""

    def sentence(self) -> str:
        return f"{self}; once the cause is fixed, continue with: {self.retry}" if self.retry else str(self)


class BotProblems(RunError):
    """Bots that cannot take part (a changed bot, one that did not start): ``problems``, one sentence each."""

    def __init__(self, message: str, problems: list[str]) -> None:
        super().__init__(message)
        self.problems = problems

    def details(self) -> list[str]:
        return self.problems


@dataclass
class RunSummary:
    total: int
    played: int = 0
    skipped: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    bot_starts: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False
    set_aside: list[str] = field(default_factory=list)  # bad journal lines moved out (drop_bad_lines)
    accepted: list[str] = field(default_factory=list)  # changed bots played anyway (accept_changed)


# -- worker side --------------------------------------------------------------------------------

def play_indexed_game(t: Tournament, index: int, host: BotHost, peers: dict[str, Peer], out: Path,
                      key: bytes) -> tuple[JournalEntry, int]:
    """Play game ``index`` of ``t`` on ``host``; returns its journal entry and the bot starts it needed."""
    spec = deals.game_at(t, index, key, _round_tables(t, out, key, index))
    played = play_spec(t, spec, host, peers)
    return entry_of(t, spec, played, out, key), played.starts


_ROUNDS: dict[tuple[str, int], tuple[tuple[str, ...], ...]] = {}  # a worker's league rounds, chosen once each


def _round_tables(t: Tournament, out: Path, key: bytes, index: int) -> tuple[tuple[str, ...], ...] | None:
    """A league game's round tables, as the main process recorded them before it gave the round out
    (``arena.tournament.rounds``); None for the other formats."""
    if not schedule.is_league(t):
        return None
    r = schedule.round_of(t, index)
    if (str(out), r) not in _ROUNDS:
        chosen = rounds.recorded(out, key, rounds.tag_of(t))
        if r not in chosen:
            raise RuntimeError(f"round {r} of the league is not in {out / rounds.ROUNDS_FILE}")
        _ROUNDS[(str(out), r)] = chosen[r]
    return _ROUNDS[(str(out), r)]


def worker_main(out_dir: str, worker: int, tasks: Any, results: Any, parent: int,
                remote: tuple[str, int] | None = None) -> None:
    """A worker process: plays the indices it is given until it gets None.  With ``remote``
    (listen address, wait in s) it hosts the tournament's remote seats (``remote_seats``, SPEC 12)."""
    from arena.referee.launch import RUN_MARKER, die_with_parent, install_cleanup

    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides when to stop
    from arena.referee.host import BotHost

    os.environ[RUN_MARKER] = out_dir  # every bot (and what it forks) carries the folder: see _sweep
    install_cleanup()
    out = Path(out_dir)
    t = read_resolved(out)
    key = folder_key(out)
    assert key is not None, "the runner makes the key before it starts workers"
    host = BotHost(t.time, out / "logs" / f"worker{worker}", sandbox=t.sandbox, hide=(out,),
                   remote_wait_ms=remote[1] * 1000 if remote else 120_000)
    peers = {b.name: host.add(b, cwd=b.workdir(t.base_dir), data=b.datadir(t.base_dir)) for b in t.bots}
    if remote is not None:
        from arena.tournament import remote_seats

        curve_secret = remote_seats.curve_keys(key)[1]
        for s in remote_seats.seats(t, key, remote[0]).values():
            peers[s.bot] = host.add(t.bot(s.bot), token=s.token, bind=s.bind, curve_secret=curve_secret)
    try:
        while True:
            index = tasks.get()
            if index is None:
                break
            results.put(Started(worker, index))
            try:
                entry, starts = play_indexed_game(t, index, host, peers, out, key)
                results.put(Done(worker, entry, starts))
            except Exception as e:  # noqa: BLE001 - a referee bug must not lose the run
                results.put(Failed(worker, index, f"{type(e).__name__}: {e}"))
    finally:
        host.close("the tournament is over")


# -- main side ----------------------------------------------------------------------------------

def prepare(t: Tournament, out: Path, resume: bool) -> tuple[bytes, bytes | None]:
    """Check the results folder, write the resolved tournament into it; returns the folder's key and,
    when ``--resume`` grew the tournament, the resolved file as it was (to put back if a check fails).

    A new folder gets a new key, unless the organiser put one there (to deal a tournament again
    exactly as in the folder the key comes from); a folder that holds this tournament keeps its
    key (a journal whose key is gone cannot be verified, so it is refused).
    """
    existing = out / RESOLVED_FILE
    if existing.exists():
        contents = read(out, _key(out))
        held = len(contents.entries) + len(contents.bad)
        if not resume and held:
            raise RunError(f"{out} already holds {held} finished game(s): use --resume to continue, "
                           f"or --out to start a new folder")
        if resume:
            old = _read_resolved(out)
            t = replace(t, history=old.history)  # the folder keeps the schedule's history, not the file
            where = {"base_dir": "", "output": "", "sandbox": True}  # the same games, however the folder was named or bots confined
            if old.to_toml_data() | where != t.to_toml_data() | where:
                keeps = sorted((set(old.to_toml_data()) | set(t.to_toml_data())) - {*where, *GROWS})
                why = growth.growth_problem(old, t, keeps)
                if why is not None:
                    raise RunError(f"{out} holds a different tournament ({why}); --resume needs the same file, or "
                                   "one with more deal_sets or more bots (or run with --out to start a new folder)")
                key = _key(out) or _first_key(out, held)
                before = existing.read_bytes()
                write_resolved(growth.grown(old, t), out)  # the games played keep their indices
                return key, before
            return _key(out) or _first_key(out, held), None
        key = _key(out) or _first_key(out, held)
    elif resume and (out / "journal.jsonl").exists():
        raise RunError(f"{out} has a journal but no {RESOLVED_FILE}; it cannot be resumed")
    else:
        key = _key(out) or _new_key(out)
    write_resolved(t, out)
    return key, None


def _put_back(out: Path, before: bytes) -> None:
    """The resolved tournament as it was before a growth that a check then refused."""
    signed_log.replace(out / RESOLVED_FILE, before)


def _key(out: Path) -> bytes | None:
    try:
        return folder_key(out)
    except KeyFileError as e:
        raise RunError(str(e)) from None


def _first_key(out: Path, held: int) -> bytes:
    """The key of a folder that has none yet: only while its journal holds nothing to verify."""
    if held:
        raise RunError(f"{out} has no {KEY_FILE}, so the {held} line(s) of its journal cannot be verified; "
                       f"restore the key file, or start a new folder with --out")
    return _new_key(out)


def _new_key(out: Path) -> bytes:
    try:
        return make_key(out)
    except KeyFileError as e:
        raise RunError(str(e)) from None


def counted(t: Tournament, out: Path, key: bytes, drop_bad_lines: bool) -> tuple[JournalContents, list[str]]:
    """The journal's lines that count, and the sentences of the bad lines set aside.

    Bad lines (a MAC that does not verify, an index outside the schedule, a second result
    for a game) raise BadJournal, or with ``drop_bad_lines`` go to ``journal.rejected.jsonl``.
    """
    total = schedule.total_games(t)
    if not drop_bad_lines:
        return check(out, key, total), []
    contents = read(out, key, total)
    try:
        dropped = set_aside(out, contents)
    except JournalError as e:
        raise RunError(str(e)) from None
    return read(out, key, total), dropped


def _read_resolved(out: Path) -> Tournament:
    try:
        return read_resolved(out)
    except ConfigFileError as e:
        first = e.errors[0] if e.errors else "?"
        raise RunError(f"{out / RESOLVED_FILE} is not a tournament this runner wrote ({first})") from None


@contextmanager
def _folder_lock(out: Path) -> Iterator[IO[bytes]]:
    """Hold the results folder's lock; RunError if another run holds it."""
    try:
        f = lock_folder(out)
    except BlockingIOError:
        raise RunError(f"{out} is in use by another `arena run` (it holds {out / LOCK_FILE}); "
                       f"wait for it to finish or use --out for another folder") from None
    except OSError as e:
        raise RunError(f"cannot write in the results folder {out}: {reason(e)}") from None
    with f:
        yield f


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class _FolderGuard:
    """The results folder as this run locked it; ``check`` raises RunError once it is not that any more."""

    def __init__(self, out: Path, lock: IO[bytes]) -> None:
        self.out = out
        self.lock = lock
        self.folder = _identity(os.stat(out))
        self.files: dict[str, tuple[int, int]] = {}

    def watch(self, name: str) -> None:
        """Also check that ``name`` in the folder stays the same file from now on."""
        self.files[name] = _identity(os.stat(self.out / name))

    def check(self) -> None:
        if self._identity_of(self.out, f"the results folder {self.out}") != self.folder:
            raise RunError(f"the results folder {self.out} was deleted or replaced while the run was using it")
        held = {LOCK_FILE: _identity(os.fstat(self.lock.fileno()))} | self.files
        for name, ident in held.items():
            what = f"the run's file {self.out / name}"
            if self._identity_of(self.out / name, what) != ident:
                raise RunError(f"{what} was replaced by another file while the run was using it")

    @staticmethod
    def _identity_of(path: Path, what: str) -> tuple[int, int]:
        try:
            return _identity(os.stat(path))
        except FileNotFoundError:
            raise RunError(f"{what} was deleted or moved while the run was using it") from None
        except OSError as e:
            raise RunError(f"cannot check {what}: {reason(e)}") from None


def _sweep(out: Path) -> int:
    """Kill processes left by an earlier, killed run of ``out`` (we hold its lock: none is ours)."""
    from arena.referee.launch import RUN_MARKER, sweep

    return sweep(RUN_MARKER, str(out), only_descendants=False)


WAIT = -1  # from ``_pending``: no game can be given out until the games held now are journaled


def _pending(t: Tournament, done: set[int], out: Path | None = None, key: bytes = b"") -> Iterator[int]:
    """The games to give out, in index order; ``done`` is the set of journaled games, updated as they come.

    A league's round is chosen from every game before it (docs/ARCHITECTURE.md section 5), so its
    games are given out only once the previous round is all in ``done``: until then, ``WAIT``.  Then,
    with ``out``, the round's tables are chosen from the journal and recorded (unless they were)."""
    if not schedule.is_league(t):
        yield from (i for i in range(schedule.total_games(t)) if i not in done)
        return
    size = schedule.games_per_round(t)
    for r in range(schedule.rounds(t)):
        todo = [i for i in range(r * size, (r + 1) * size) if i not in done]
        if not todo:
            continue
        while not all(i in done for i in range(r * size)):
            yield WAIT
        if out is not None and r not in rounds.recorded(out, key, rounds.tag_of(t)):
            entries = read(out, key, schedule.total_games(t)).entries
            rounds.record(out, key, r, schedule.round_tables(t, r, entries), rounds.tag_of(t))
        yield from todo


@dataclass
class _Worker:
    """One worker process as the main process sees it: its task queue and the games it holds."""

    slot: int
    proc: Any
    tasks: Any
    held: list[int] = field(default_factory=list)


class _Pool:
    """The worker processes of a run (an ``executor.Executor``): spawning, feeding, replacing dead ones, stopping."""

    def __init__(self, out: Path, size: int, pending: Iterator[int],
                 remote: tuple[str, int] | None = None, pinned: Callable[[int], bool] | None = None,
                 journaled: set[int] | None = None) -> None:
        self.ctx = mp.get_context("spawn")
        self.out = out
        self.remote = remote    # worker 0 hosts the remote seats (worker_main's ``remote``)
        self.pinned = pinned    # games with a remote seat: played by worker 0 only
        self.pinned_q: deque[int] = deque()
        self.results = self.ctx.Queue()
        self.pending = pending
        self.retry: deque[int] = deque()  # games of dead workers, handed out before new ones
        # finished games (a dead worker's may still arrive); shared with ``pending``, which waits on it
        self.journaled: set[int] = set() if journaled is None else journaled
        self.restarts = 0
        self.workers = [self._spawn(slot) for slot in range(size)]

    def _spawn(self, slot: int) -> _Worker:
        tasks = self.ctx.Queue()
        remote = self.remote if slot == 0 else None
        proc = self.ctx.Process(target=worker_main, args=(str(self.out), slot, tasks, self.results, os.getpid(), remote),
                                daemon=True, name=f"arena-worker{slot}")
        proc.start()
        return _Worker(slot, proc, tasks)

    @property
    def busy(self) -> bool:
        return any(w.held for w in self.workers)

    def next_event(self, timeout: float) -> Event | None:
        try:
            event: Event = self.results.get(timeout=timeout)
        except queue.Empty:
            return None
        return event

    def feed(self) -> None:
        """Top every worker up to ``PER_WORKER`` games (worker 0 last: it gets the games set aside for it)."""
        for w in self.workers[1:] + self.workers[:1] if self.pinned else self.workers:
            while len(w.held) < PER_WORKER:
                index = self._next(w.slot == 0)
                if index == WAIT:
                    return  # a league's next round waits for this one to be journaled
                if index is None:
                    break
                if index in self.journaled:
                    continue
                w.held.append(index)
                w.tasks.put(index)

    def _next(self, hosts_remote: bool) -> int | None:
        if hosts_remote and self.pinned_q:
            return self.pinned_q.popleft()
        while True:
            index = self.retry.popleft() if self.retry else next(self.pending, None)
            if index is None or index == WAIT or hosts_remote or self.pinned is None or not self.pinned(index):
                return index
            self.pinned_q.append(index)

    def finished(self, index: int) -> bool:
        """Note game ``index`` as done; False if it already was (a dead worker's game played again)."""
        for w in self.workers:
            if index in w.held:
                w.held.remove(index)
        if index in self.journaled:
            return False
        self.journaled.add(index)
        return True

    def replace_dead(self) -> None:
        """Respawn workers that died, handing their games out again; RunError past the restart cap."""
        for i, w in enumerate(self.workers):
            if w.proc.is_alive():
                continue
            code = w.proc.exitcode
            if self.restarts >= MAX_WORKER_RESTARTS:
                raise RunError(f"worker process {w.slot} died ({_exit_text(code)}) holding game(s) {w.held}, "
                               f"after {self.restarts} restart(s) this run; see {self.out / 'logs'}")
            self.restarts += 1
            self.retry.extend(w.held)
            _close_queue(w.tasks)
            self.workers[i] = self._spawn(w.slot)

    def stop(self, quick: bool) -> None:
        """Ask every worker to finish, then make sure each is gone (SIGTERM, then SIGKILL)."""
        for w in self.workers:
            try:
                w.tasks.put_nowait(None)
            except Exception:  # noqa: BLE001 - a closed or broken queue: the kill below still works
                pass
        deadline = time.monotonic() + (0.5 if quick else 3.0)
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.proc.is_alive():
                os.kill(w.proc.pid, signal.SIGTERM)  # its handler kills its bots
                w.proc.join(2)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(1)
            _close_queue(w.tasks)
        _close_queue(self.results)


def _close_queue(q: Any) -> None:
    q.cancel_join_thread()  # never block exit on items nobody will read
    q.close()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def run(t: Tournament, out: Path, resume: bool = False,
        on_progress: Callable[[RunSummary, JournalEntry], None] | None = None, drop_bad_lines: bool = False,
        on_start: Callable[[int], None] | None = None, accept_changed: bool = False,
        cluster: str | None = None, announce: Callable[[str], None] | None = None) -> RunSummary:
    """Play every game of ``t`` not yet in the journal of ``out``; RunError (one sentence) if it cannot,
    BadJournal (a sentence per line) if the journal holds lines that cannot be counted, BotProblems
    (a sentence per bot) if a bot changed since the folder's first run (unless ``accept_changed``)
    or did not start.

    ``on_start(index)`` is called when a worker starts a game, ``on_progress(summary, entry)`` when a
    finished game is journaled.  Games are played by local worker processes, or on the Dask cluster at
    ``cluster`` (else the file's ``[executor] cluster``; ``arena.tournament.executor_dask``)."""
    out = out.resolve()
    try:
        t = deals.with_suite(t)  # a deal suite named by the file and missing is made now
    except deals.DealSuiteError as e:
        raise RunError(str(e)) from None
    executor = replace(t.executor, cluster=cluster or t.executor.cluster)
    if t.sandbox:
        from arena.referee.sandbox import problem

        if (why := problem()) is not None:
            raise RunError(why)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunError(f"cannot create the results folder {out}: {reason(e)}") from None
    try:
        with _folder_lock(out) as lock:
            guard = _FolderGuard(out, lock)
            key, before = prepare(t, out, resume)
            try:  # a growth stands only once the journal, the fingerprints and the start-up check pass
                guard.watch(RESOLVED_FILE)
                guard.watch(KEY_FILE)
                _sweep(out)
                # exactly what the workers will read, and where it came from (for the fingerprints)
                resolved = replace(_read_resolved(out), source=t.source, arena_files=t.arena_files)
                contents, dropped = counted(resolved, out, key, drop_bad_lines)
                accepted = _check_bots(resolved, out, key, contents, resume, accept_changed)
            except BaseException:
                if before is not None:
                    _put_back(out, before)
                raise
            if any(b.remote for b in resolved.bots) and executor.cluster is None:
                from arena.tournament import remote_seats

                found = remote_seats.seats(resolved, key, executor.listen)
                lines = remote_seats.announce(out, found, remote_seats.curve_keys(key)[0], executor.remote_wait_s)
                for line in lines:
                    (announce or (lambda _m: None))(line)
            return _run(resolved, out, guard, key, contents, dropped, on_progress, on_start, accepted, executor)
    except OSError as e:
        raise RunError(f"cannot use {e.filename or out}: {reason(e)}") from None


def _check_bots(t: Tournament, out: Path, key: bytes, contents: JournalContents, resume: bool,
                accept_changed: bool) -> list[str]:
    """Before the first game, when there is one to play: compare the bots' fingerprints with those the
    folder recorded (on ``resume``), start every bot once, then record the fingerprints that are new.
    Returns the sentences of changed bots accepted; BotProblems when a bot changed or did not start."""
    from arena.tournament import fingerprints, startup

    if len({e.index for e in contents.entries}) >= schedule.total_games(t):
        return []
    now = fingerprints.of_tournament(t, out)
    try:
        then = fingerprints.recorded(out, key) if resume else {}
    except fingerprints.FingerprintError as e:
        raise RunError(str(e)) from None
    changed = fingerprints.changes(then, now)
    if changed and not accept_changed:
        raise BotProblems(f"{len(changed)} bot(s) changed since {out} was first run, so no game was played; to "
                          "go on with the changed bots, add --accept-changed", [why for _fp, why in changed])
    failed = startup.check(t, out / "logs" / "startup", hide=(out,))
    if failed:
        raise BotProblems(f"{len(failed)} bot(s) did not start (their logs are in {out / 'logs' / 'startup'}), "
                          "so no game was played", failed)
    new = [fp for fp in now if fp.bot not in then] + [fp for fp, _why in changed]
    if new:
        fingerprints.record(out, key, now if not then else new, fresh=not then)
    return [why for _fp, why in changed]


def _run(t: Tournament, out: Path, guard: _FolderGuard, key: bytes, contents: JournalContents,
         dropped: list[str], on_progress: Callable[[RunSummary, JournalEntry], None] | None,
         on_start: Callable[[int], None] | None, accepted: list[str] | None = None,
         executor: Executor | None = None) -> RunSummary:
    done = {e.index for e in contents.entries}
    summary = RunSummary(total=schedule.total_games(t), skipped=len(done), set_aside=dropped,
                         accepted=list(accepted or []))
    for e in contents.entries:
        for f in e.failures:
            summary.failures.update(f)
    started = time.monotonic()
    todo = summary.total - len(done)
    if todo <= 0:
        return summary
    pool: executors.Executor | None = None
    stopped = False
    try:
        pool = _executor(t, out, key, executor or Executor(), min(t.concurrency, todo), _pending(t, done, out, key),
                         done)
        with Journal(out, key) as journal:
            guard.check()  # the journal was opened in the folder this run locked
            _play(pool, journal, guard, summary, on_progress, on_start)
        guard.check()
    except KeyboardInterrupt:
        summary.interrupted = True
    except (RunError, JournalError, OSError) as e:
        stopped = True
        cause = f"cannot use {e.filename}: {reason(e)}" if isinstance(e, OSError) else str(e)
        raise RunStopped(f"{cause}; the run stopped after recording {summary.played} game(s)") from None
    finally:
        if pool is not None:
            pool.stop(quick=summary.interrupted or stopped)
    summary.elapsed_s = time.monotonic() - started
    return summary


def _executor(t: Tournament, out: Path, key: bytes, executor: Executor, size: int, pending: Iterator[int],
              done: set[int]) -> executors.Executor:
    """What plays the games: ``_Pool`` (local processes) or ``executor_dask.DaskPool``, both an
    ``executor.Executor`` (docs/ARCHITECTURE.md section 5).
    ``done`` (the journaled games) is shared with ``pending``, which a league's rounds wait on."""
    remote = {b.name for b in t.bots if b.remote}
    if remote and executor.cluster is not None:
        raise RunError("remote bots (remote = true) play on the local executor only, not on a cluster")
    fixed = schedule.is_league(t) and len(rounds.recorded(out, key, rounds.tag_of(t))) >= schedule.rounds(t)
    if schedule.is_league(t) and executor.cluster is not None and not fixed:  # fixed: every round chosen (a ladder's batch)
        raise RunError(f"a {t.format} league plays on the local executor only, not on a cluster (its rounds wait "
                       "on the journal); use a round robin or gauntlet on a cluster")
    if executor.cluster is None and remote:
        def pinned(index: int) -> bool:
            return not remote.isdisjoint(schedule.game_at(t, index, key, _round_tables(t, out, key, index)).seats)

        return _Pool(out, size, pending, (executor.listen, executor.remote_wait_s), pinned, journaled=done)
    if executor.cluster is None:
        return _Pool(out, size, pending, journaled=done)
    try:
        from arena.tournament.executor_dask import DaskPool
    except ImportError as e:
        raise RunError(f"playing on a cluster needs the cluster extra ({e}): "
                       "python3 -m pip install 'rummy-arena[cluster]'") from None
    return DaskPool(t, out, key, pending, executor)


def _play(pool: executors.Executor, journal: Journal, guard: _FolderGuard, summary: RunSummary,
          on_progress: Callable[[RunSummary, JournalEntry], None] | None,
          on_start: Callable[[int], None] | None) -> None:
    """The main loop: journal finished games, keep the workers fed, replace dead ones.

    A game counts as played only once its line is in the journal that the
    results folder still holds; the folder is checked twice a second anyway,
    and before a worker's error is reported (a deleted folder makes workers fail).
    """
    pool.feed()
    next_check = time.monotonic() + POLL_S
    while pool.busy:
        msg = pool.next_event(timeout=POLL_S)
        if isinstance(msg, Done) and pool.finished(msg.entry.index):
            entry = msg.entry
            entry.runner_rss_mb = rss_mb()
            guard.check()
            journal.append(entry)
            summary.played += 1
            summary.bot_starts += msg.starts
            for f in entry.failures:
                summary.failures.update(f)
            if on_progress:
                on_progress(summary, entry)
        elif isinstance(msg, Started):
            if on_start:
                on_start(msg.index)
        elif isinstance(msg, Failed):
            guard.check()
            journal.check()
            raise RunError(f"game {msg.index} failed inside the referee: {msg.error}")
        if msg is None or time.monotonic() >= next_check:
            guard.check()
            journal.check()
            pool.replace_dead()
            next_check = time.monotonic() + POLL_S
        pool.feed()
