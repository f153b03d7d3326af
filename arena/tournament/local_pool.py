"""The local executor: worker processes on this machine (an ``executor.Executor``).

Each worker has its own task queue and holds at most ``PER_WORKER`` games (the one it plays and the
next), so the main process always knows which games a worker holds: a worker that dies (killed, out
of memory) is replaced and its games are handed out again, up to ``MAX_WORKER_RESTARTS`` times per
run.  With remote seats, worker 0 hosts them and plays every game that has one (``pinned``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.tournament.executor import WAIT, Event, RunError
from arena.tournament.worker import worker_main

PER_WORKER = 2            # games queued on a worker at once: the one it plays and the next
MAX_WORKER_RESTARTS = 3   # per run; a worker that keeps dying means a bug, not bad luck


@dataclass
class _Worker:
    """One worker process as the main process sees it: its task queue and the games it holds."""

    slot: int
    proc: Any
    tasks: Any
    held: list[int] = field(default_factory=list)


class LocalPool:
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
