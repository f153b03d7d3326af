"""Running a tournament: the main process hands out games, journals them and guards the folder.

Games are played by an executor (``executor.Executor``): local worker processes (``local_pool``,
each a ``worker``) or a Dask cluster (``executor_dask``).  The main process hands out the indices that
the journal does not hold yet, appends every finished game to the journal (fsync'd), and shows
progress; ``--resume`` after any interruption, ``kill -9`` included, continues without losing or
repeating a game.

The main process never reports a game it did not record: before each journal append and twice a
second it checks that the results folder, its lock file, its ``tournament.toml`` and the journal are
still the files it started with (``results_folder.FolderGuard``), and any failed write (full disk, I/O
error, read-only filesystem) stops the run with ``RunStopped``: one sentence naming the file and the
cause, the workers and their bots stopped, and ``--resume`` continuing from what the journal holds.

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

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from arena.integrity import KEY_FILE
from arena.tournament import deals, rounds, schedule
from arena.tournament import executor as executors
from arena.tournament.config import RESOLVED_FILE, Executor, Tournament
from arena.tournament.executor import WAIT, Done, Failed, RunError, Started, rss_mb
from arena.tournament.journal import Journal, JournalContents, JournalEntry, JournalError, read, reason
from arena.tournament.local_pool import LocalPool
from arena.tournament.results_folder import (
    FolderGuard,
    counted,
    folder_lock,
    prepare,
    put_back,
    resolved_of,
    sweep_earlier_run,
)
from arena.tournament.worker import recorded_tables

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
        with folder_lock(out) as lock:
            guard = FolderGuard(out, lock)
            key, before = prepare(t, out, resume)
            try:  # a growth stands only once the journal, the fingerprints and the start-up check pass
                guard.watch(RESOLVED_FILE)
                guard.watch(KEY_FILE)
                sweep_earlier_run(out)
                # exactly what the workers will read, and where it came from (for the fingerprints)
                resolved = replace(resolved_of(out), source=t.source, arena_files=t.arena_files)
                contents, dropped = counted(resolved, out, key, drop_bad_lines)
                accepted = _check_bots(resolved, out, key, contents, resume, accept_changed)
            except BaseException:
                if before is not None:
                    put_back(out, before)
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


def _run(t: Tournament, out: Path, guard: FolderGuard, key: bytes, contents: JournalContents,
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
    """What plays the games: ``local_pool.LocalPool`` (local processes) or ``executor_dask.DaskPool``, both an
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
            return not remote.isdisjoint(schedule.game_at(t, index, key, recorded_tables(t, out, key, index)).seats)

        return LocalPool(out, size, pending, (executor.listen, executor.remote_wait_s), pinned, journaled=done)
    if executor.cluster is None:
        return LocalPool(out, size, pending, journaled=done)
    try:
        from arena.tournament.executor_dask import DaskPool
    except ImportError as e:
        raise RunError(f"playing on a cluster needs the cluster extra ({e}): "
                       "python3 -m pip install 'rummy-arena[cluster]'") from None
    return DaskPool(t, out, key, pending, executor)


def _play(pool: executors.Executor, journal: Journal, guard: FolderGuard, summary: RunSummary,
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
