"""The limits watcher (a thread measuring every bot with limits, killing one over a limit at once)
and the data folder's measure (``data_use``: through folder descriptors, links not followed, at
most DATA_ENTRIES entries) against its quota (``data_quota``)."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path
from typing import Protocol

from arena.referee import cgroups
from arena.referee.procfs import COST_RATIO, PROCESSES
from arena.settings import Limits

DATA_MB = 256  # a bot's data folder quota when its limits set no data_mb
INODE_BYTES = 1024  # what each file or folder in a data folder counts beyond its blocks (empty files too)


def data_quota(limits: Limits) -> int:
    """The most bytes a bot's data folder may hold."""
    return (limits.data_mb or DATA_MB) << 20


DATA_ENTRIES = 10_000  # files and folders a data folder may hold (what bounds the time of one measure)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class DataUse:
    """What a data folder holds: ``bytes`` (blocks, plus INODE_BYTES an entry, each inode once),
    ``entries``, and ``problem`` (a sentence) when some of it could not be measured."""

    def __init__(self) -> None:
        self.bytes = self.entries = 0
        self.problem: str | None = None
        self.inodes: set[tuple[int, int]] = set()

    def add(self, st: os.stat_result) -> None:
        self.entries += 1
        if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):  # a hard link counts its file once
            if (st.st_dev, st.st_ino) in self.inodes:
                self.bytes += INODE_BYTES
                return
            self.inodes.add((st.st_dev, st.st_ino))
        self.bytes += st.st_blocks * 512 + INODE_BYTES


def data_use(folder: Path, stop_at: int, max_entries: int = DATA_ENTRIES) -> DataUse:
    """Measure ``folder`` through folder descriptors (no path is ever longer than a name, so no depth
    hides a file), links not followed; stops once past ``stop_at`` bytes or ``max_entries``.  A part
    that cannot be read is a ``problem`` (the caller counts it as over the quota); a part removed
    while it is measured is not."""
    use = DataUse()
    try:
        stack = [os.open(folder, _DIR_FLAGS)]
    except FileNotFoundError:
        return use
    except OSError as e:
        use.problem = f"{folder}: {e.strerror or e}"
        return use
    try:
        while stack and use.problem is None and use.bytes <= stop_at and use.entries <= max_entries:
            fd = stack.pop()
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        st = entry.stat(follow_symlinks=False)
                        use.add(st)
                        if stat.S_ISDIR(st.st_mode):
                            stack.append(os.open(entry.name, _DIR_FLAGS, dir_fd=fd))
                        if use.bytes > stop_at or use.entries > max_entries:
                            break
            except (FileNotFoundError, NotADirectoryError):
                pass  # removed (or swapped for a file) while measured: what replaced it is counted next time
            except OSError as e:
                use.problem = f"a part of {folder} cannot be read ({e.strerror or e})"
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)
    return use


def folder_bytes(folder: Path, stop_at: int) -> int:
    """Bytes a folder holds on disk (``data_use``, without its cap on entries); past ``stop_at`` when
    some of it cannot be read."""
    use = data_use(folder, stop_at, max_entries=1 << 62)
    return stop_at + 1 if use.problem else use.bytes


class Watched(Protocol):
    """What the watcher measures: a started compartment (``compartment.BotProcess``)."""

    pid: int
    violation: str | None
    cgroup: cgroups.Compartment | None

    def polled(self) -> bool: ...

    def alive(self) -> bool: ...

    def over_limits(self, children: dict[int, list[int]] | None) -> str | None: ...


class Watcher:
    """A thread that measures every bot with limits, all the time (not only while it decides),
    and kills a bot over a limit at once; the referee reads ``violation`` at its next step."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self._procs: dict[int, Watched] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, proc: Watched) -> None:
        with self._lock:
            self._procs[proc.pid] = proc
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name="limits")
                self._thread.start()

    def forget(self, proc: Watched) -> None:
        with self._lock:
            self._procs.pop(proc.pid, None)

    def check_now(self) -> None:
        with self._lock:
            procs = list(self._procs.values())
        if not procs:
            return
        children = PROCESSES.children(self.interval_s) if any(p.polled() for p in procs) else None
        for proc in procs:
            if proc.violation is not None or not proc.alive():
                continue
            reason = proc.over_limits(children)
            if reason:
                proc.violation = reason
                if proc.cgroup is not None:
                    proc.cgroup.kill()
                _kill_tree(proc.pid, children or {})

    def _run(self) -> None:
        cost = 0.0
        while True:
            time.sleep(max(self.interval_s, COST_RATIO * cost))  # a bot with thousands of processes is
            with self._lock:                                     # measured less often, not at our expense
                if not self._procs:
                    self._thread = None
                    return
            spent = time.thread_time()
            try:
                self.check_now()
            except Exception:  # noqa: BLE001 - the watcher must outlive any oddity of /proc
                pass
            cost = time.thread_time() - spent


def _kill_tree(pid: int, children: dict[int, list[int]]) -> None:
    """SIGKILL a process and everything below it now (reaping is left to ``Watched.kill``)."""
    level = [pid]
    while level:
        for p in level:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        level = [c for p in level for c in children.get(p, ())]




WATCHER = Watcher()
