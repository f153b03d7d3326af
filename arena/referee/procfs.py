"""Readers of /proc for the polled limits: a process tree's CPU seconds, threads, resident memory,
a sandbox's tmpfs use, deleted files held open, and the machine's parent-to-children map (listed
again no sooner than ``COST_RATIO`` times its own cost)."""

from __future__ import annotations

import os
import stat
import threading
import time

import psutil


def deleted_open_bytes(pids: list[int], device: int, max_fds: int = 1 << 16) -> int:
    """Bytes of files on ``device`` that no name reaches any more (deleted, or made with O_TMPFILE)
    but that one of ``pids`` holds open: a data folder's deleted files still fill the disk."""
    total, seen, looked = 0, set(), 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            looked += 1
            if looked > max_fds:
                return total
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if st.st_nlink == 0 and st.st_dev == device and stat.S_ISREG(st.st_mode) and st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
    return total


def tree_cpu_seconds(pids: list[int], reaped: bool = False) -> float:
    """CPU seconds used by the processes ``pids`` (a process tree); ``reaped`` adds what the children
    they have reaped used (from /proc, in clock ticks), else each live process's nanosecond CPU clock."""
    total = 0.0
    for pid in pids:
        if reaped:
            try:
                total += sum(int(x) for x in _stat(pid)[11:15]) / _TICKS  # utime, stime, cutime, cstime
            except (OSError, IndexError, ValueError):
                continue
        else:
            try:
                total += time.clock_gettime(((~pid) << 3) | 2)  # the process's CPU clock (CPUCLOCK_SCHED)
            except OSError:
                continue
    return total


def _stat(pid: int | str) -> list[bytes]:
    """The fields of /proc/PID/stat after the command name (state first, then ppid, ...)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _threads(pid: int) -> int:
    try:
        return psutil.Process(pid).num_threads()
    except (psutil.Error, OSError):
        return 0


def _own_tasks(pid: int, depth: int) -> int:
    """Tasks (threads) of the first ``depth`` levels of the tree under ``pid`` (bwrap and the gate),
    read from /proc/PID/task/*/children without listing the machine's processes."""
    total, level = 0, [pid]
    for _ in range(depth):
        below = []
        for p in level:
            total += _threads(p)
            try:
                for tid in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                        below += [int(c) for c in f.read().split()]
            except (OSError, ValueError):
                continue
        level = below
    return total


def _rss(pid: int) -> int:
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except (psutil.Error, OSError):
        return 0


def _tmpfs_used(pid: int, folder: str) -> int:
    """Bytes used in a memory-backed folder of the sandbox that ``pid`` lives in (seen through /proc)."""
    try:
        st = os.statvfs(f"/proc/{pid}/root/{folder}")
    except OSError:
        return 0
    return (st.f_blocks - st.f_bfree) * st.f_frsize
TREE_REFRESH_S = 0.2  # how often a bot's process tree is listed again for its CPU time
# Listing the machine's processes costs in proportion to how many there are, and a bot can start
# thousands: no scan (nor watcher pass) comes sooner than this many times its own CPU cost after
# the last, so they take at most a tenth of a core whatever bots do (they are then less frequent).
COST_RATIO = 9


def _scan_children() -> dict[int, list[int]]:
    """Every process's children, from /proc (a few times cheaper than psutil's listing)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid = int(_stat(name)[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid:
            children.setdefault(ppid, []).append(int(name))
    return children


class ProcessMap:
    """The machine's parent-to-children map, shared by every bot of this referee and listed again
    only when older than asked for, and never sooner than ``COST_RATIO`` times its last cost."""

    def __init__(self) -> None:
        self._children: dict[int, list[int]] = {}
        self._at = -float("inf")
        self._cost = 0.0
        self._lock = threading.Lock()

    def children(self, fresh_s: float = 0.0) -> dict[int, list[int]]:
        with self._lock:
            if time.monotonic() - self._at > max(fresh_s, COST_RATIO * self._cost):
                spent = time.thread_time()
                self._children = _scan_children()
                self._cost = time.thread_time() - spent
                self._at = time.monotonic()
            return self._children


PROCESSES = ProcessMap()
