"""Bot processes: launching, output capture, resource limits, and killing them all.

Every bot runs in its own process group (``start_new_session``) and, on Linux,
gets SIGKILL if the referee dies (``PR_SET_PDEATHSIG``).  Its output (the
compartment's stderr) goes to one log file (0600, in a 0700 folder), capped in
size by a copier process that keeps draining the pipe (``logcopy.py``: a chatty
bot never blocks, never fills the disk); the copier is in the bot's own cgroup,
so a flood costs the bot's CPU, not the referee's.

Nothing may survive the referee, not even a grandchild that left the bot's
process group: the referee is a child subreaper (orphans of its bots become
its children, not init's), every bot and everything it forks carries the
referee's ``ARENA_SESSION`` marker in its environment, and ``kill_all`` (at
exit, on SIGTERM/SIGHUP) kills every descendant with that marker; at the end
the referee also kills its children in sessions not its own: bots' orphans
(one that cleared its environment has no marker).
``sweep(marker)`` does the same for leftovers of an earlier, killed run.
A referee killed outright (SIGKILL) runs none of that: its bots die by
``PR_SET_PDEATHSIG``, and the undertaker (``arena/referee/undertaker.py``, one
per referee process) kills whatever carries the referee's ``ARENA_REFEREE``
marker after it, which covers the processes that had not yet asked for that
signal when the referee died (bubblewrap's sandbox child, while it starts).

Resource limits (``Limits``) are the kernel's where it can: each compartment gets its own
cgroup (``arena/referee/cgroups.py``) before its first process execs, which is its CPU clock
(exited children included), its hard memory and task limits and an equal CPU share.  The
watcher reads the kernel's counters (and, for the number of processes, subtracts the gate's and
sandbox's own tasks).  Where no cgroup can be made, the referee falls back to polling the process
tree (memory as resident set size, CPU seconds, number of processes) and warns once.  CPU time is
also capped per process with RLIMIT_CPU, and a bot with a data folder gets RLIMIT_FSIZE at its
quota (``limits.data_mb``) plus the watcher's measure of the folder (``data_use``, through folder
descriptors, at most DATA_ENTRIES entries; with the deleted files the compartment holds open), on
each bot's own schedule.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import resource
import secrets
import shlex
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from arena.integrity import open_private
from arena.integrity import private_folder as private_folder_of
from arena.referee import cgroups
from arena.referee.channel import Channel
from arena.settings import BUNDLED_BOT_MODULES, BotSpec, Limits

LOG_CAP_BYTES = 1 << 20  # per bot log file; past it the file becomes NAME.log.1 and a new one starts


def command_line(command: str) -> list[str]:
    """The argv for a bot: a bundled name runs its module with this Python."""
    words = shlex.split(command)
    if len(words) == 1 and words[0] in BUNDLED_BOT_MODULES:
        return [sys.executable, "-m", BUNDLED_BOT_MODULES[words[0]]]
    return words


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


# -- the registry of live process groups -------------------------------------------

_live: dict[int, BotProcess] = {}
_lock = threading.Lock()
MARKER = "ARENA_SESSION"
BOT_MARKER = "ARENA_BOT_ID"  # one per launched bot process, inherited by all it forks
# Marks every process started for this referee; a referee started under a marker (by a
# test suite, or a tournament runner) keeps it, so the whole tree can be found.
SESSION = os.environ.get(MARKER) or secrets.token_hex(8)
RUN_MARKER = "ARENA_RUN"  # set by the tournament runner: the results folder
REFEREE_MARKER = "ARENA_REFEREE"  # one per referee process: what its undertaker kills
UNDERTAKER = str(Path(__file__).with_name("undertaker.py"))


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return None


def sweep(key: str, value: str, only_descendants: bool = True) -> int:
    """Kill processes whose environment has ``key=value``; returns how many."""
    me = os.getpid()
    if only_descendants:
        try:
            candidates = psutil.Process(me).children(recursive=True)
        except psutil.Error:
            candidates = []
    else:
        candidates = [p for p in psutil.process_iter() if p.pid != me]
    killed = 0
    for p in candidates:
        try:
            if p.environ().get(key) != value:
                continue
            orphan = p.ppid() == me  # reparented to us (we are a subreaper): we must reap it
            p.kill()
            killed += 1
            if orphan and p.pid not in _live:
                os.waitpid(p.pid, 0)
        except (psutil.Error, OSError):
            continue
    return killed


def kill_all() -> None:
    """Kill every bot process this interpreter started, and everything they forked."""
    with _lock:
        procs = list(_live.values())
    for p in procs:
        p.kill()
    sweep(MARKER, SESSION)


def _at_exit() -> None:
    kill_all()
    _kill_adopted()
    if _referee_id and _installed_in == os.getpid():
        cgroups.remove_left(_referee_id)


def _kill_adopted() -> None:
    """Kill our children in sessions not ours, other than the undertaker: we start no such process
    but bots, so these are their orphans, adopted by us (the subreaper); one that dropped its
    environment carries no marker for ``sweep``.  Only at the end: a live human seat's tmux is one."""
    keep = {u.pid for u, _fd in _undertaker}
    mine = os.getsid(0)
    for child in psutil.Process().children():
        try:
            if child.pid not in keep and os.getsid(child.pid) != mine:
                child.kill()
                child.wait(1)
        except (psutil.Error, OSError):
            continue


def _on_signal(signum: int, _frame: Any) -> None:
    _at_exit()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


_installed_in = 0  # the pid that installed the clean-up (a forked child installs its own)
_referee_id = ""


def install_cleanup() -> str:
    """Kill bots on normal exit, SIGTERM and SIGHUP (Ctrl-C arrives as KeyboardInterrupt and exits
    normally), and after any death of this process (the undertaker); returns this referee's marker."""
    global _installed_in, _referee_id
    if _installed_in == os.getpid():
        return _referee_id
    _installed_in = os.getpid()
    _referee_id = secrets.token_hex(8)
    _start_undertaker(_referee_id)
    libc = _libc()
    if libc is not None:
        libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphaned bot descendants stay ours
    atexit.register(_at_exit)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)
    return _referee_id


def private_folder() -> Path:
    """A new private folder of this referee (for gates' sockets); its undertaker removes it if we cannot."""
    return Path(tempfile.mkdtemp(prefix=_private_prefix(install_cleanup())))


def _private_prefix(referee_id: str) -> str:
    return f"arena-gates-{referee_id}-"


def _start_undertaker(referee_id: str) -> None:
    """Start this process's undertaker; it holds the read end of a pipe only we can close."""
    read_end, write_end = os.pipe()  # not inheritable: no bot gets the write end
    folders = os.path.join(tempfile.gettempdir(), _private_prefix(referee_id))
    lay = cgroups.layout()
    groups = lay.prefixes(referee_id) if lay is not None else []
    try:
        undertaker = subprocess.Popen(
            [sys.executable, "-I", "-S", UNDERTAKER, REFEREE_MARKER, referee_id, folders, *groups], stdin=read_end,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
            env={})  # no marker of ours: no sweep kills it before its time
    except OSError:
        os.close(write_end)  # no undertaker: the subreaper and PR_SET_PDEATHSIG still stand
    else:
        _undertaker.append((undertaker, write_end))
    finally:
        os.close(read_end)


_undertaker: list[tuple[subprocess.Popen[bytes], int]] = []  # its pipe is held open for the life of this process


def die_with_parent(parent: int | None = None, libc: Any = None) -> None:
    """Have the kernel SIGKILL this process when its parent ends (``PR_SET_PDEATHSIG``, Linux);
    with ``parent`` given, exit at once if that parent is already gone (it died while we started)."""
    libc = libc if libc is not None else _libc()
    if libc is not None:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def _preexec(limits: Limits, cgroup: cgroups.Compartment | None = None, data: bool = False) -> Any:
    libc = _libc()  # loaded before the fork: the child only calls it
    referee = os.getpid()
    file_cap = data_quota(limits) if data else None

    def setup() -> None:
        die_with_parent(referee, libc)
        if cgroup is not None:
            cgroup.enter()  # before exec: nothing the compartment runs is ever outside the count
        if limits.cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        if file_cap is not None:  # no single file over the data quota, whatever folder it is in
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_cap, file_cap))

    return setup


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


def log_path(log_dir: Path, name: str) -> Path:
    """The log file of the bot called ``name`` in ``log_dir`` (its name made safe for a file name).

    A name that is not already safe as it is gets a short hash of itself appended, so two names
    never share a log ("a b" and "a_b" would both be ``a_b``)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]
    if safe != name or not safe:
        safe = f"{safe or 'bot'}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return Path(log_dir) / f"{safe}.log"


def log_tail(path: Path, lines: int = 5, max_bytes: int = 1024) -> str:
    """The last ``lines`` lines of a bot's log, at most ``max_bytes`` of it ("" when there is none);
    a log that was just rotated is read on from its older half (``NAME.log.1``)."""
    data = _tail_bytes(path, max_bytes)
    if len(data) < max_bytes:
        data = _tail_bytes(rotated(path), max_bytes - len(data)) + data
    kept = [line.rstrip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def rotated(path: Path) -> Path:
    """Where the older half of a bot's log goes when the log reaches LOG_CAP_BYTES."""
    return path.with_name(path.name + ".1")


def _tail_bytes(path: Path, max_bytes: int) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - max_bytes))
            return f.read(max_bytes)
    except OSError:
        return b""


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


LOGCOPY = str(Path(__file__).with_name("logcopy.py"))


def _start_copier(source: int, log: Path, cgroup: cgroups.Compartment | None, referee: str) -> subprocess.Popen[bytes]:
    """The bot's log copier, reading ``source`` (the read end of the bot's output pipe), in the
    compartment's cgroup: what a flood of output costs is the bot's CPU, not the referee's."""
    libc, me = _libc(), os.getpid()

    def setup() -> None:
        die_with_parent(me, libc)
        if cgroup is not None:
            cgroup.enter()

    return subprocess.Popen([sys.executable, "-I", "-S", LOGCOPY, str(log), str(LOG_CAP_BYTES)], stdin=source,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            close_fds=True, preexec_fn=setup,
                            env={MARKER: SESSION, REFEREE_MARKER: referee})  # no bot marker: it outlives the bot


def _compartment(referee: str, name: str, limits: Limits) -> cgroups.Compartment | None:
    """The cgroup of a new compartment, or None where none can be made (then its limits are polled)."""
    cgroups.warn_once()
    lay = cgroups.layout()
    if lay is None or not lay.bases:
        return None
    made = cgroups.Compartment(referee, name, limits.memory_mb, limits.processes)
    return made if made.dirs else None


class BotProcess:
    """One launched bot compartment: the bot (behind its gate, unless it speaks stdio), its sandbox,
    its pipes to the referee (``channel``), its capped log, and everything it starts."""

    def __init__(self, spec: BotSpec, argv: list[str], env: dict[str, str], log_path: Path,
                 cwd: Path | None, infra_depth: int, data: Path | None = None, pass_fds: tuple[int, ...] = ()) -> None:
        referee = env[REFEREE_MARKER] = install_cleanup()
        self.spec = spec
        self.bot_id = env[BOT_MARKER] = secrets.token_hex(8)
        self.data = data  # the bot's data folder, whose size is watched (limits.data_mb)
        self._data_next = 0.0  # when the watcher measures the data folder next
        self._violation: str | None = None
        self._settled = False
        self.cgroup = _compartment(referee, self.bot_id, spec.limits)
        self.log_path = log_path
        self.started = time.monotonic()
        self.infra_depth = infra_depth  # tree levels that are ours (bwrap, the gate), not the bot's
        self.exit_note: str | None = None  # the bot's exit status as its gate reported it
        self.bot_code: int | None = None  # the bot's own exit code (negative: killed by that signal)
        private_folder_of(log_path.parent)  # the organiser's alone: a bot's output may hold what it saw
        open_private(log_path, append=True).close()  # a restarted bot goes on in the same file
        self._log_lock = threading.Lock()  # the referee's own lines (game separators)
        to_bot_r, to_bot_w = os.pipe()
        from_bot_r, from_bot_w = os.pipe()
        log_r, log_w = os.pipe()
        self._copier: subprocess.Popen[bytes] | None = None
        self._log_settled = False
        try:
            self._copier = _start_copier(log_r, log_path, self.cgroup, referee)
            if self.cgroup is not None:
                self.cgroup.spared = self._copier.pid  # a kill over a limit leaves it the bot's last words
            self.proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=to_bot_r, stdout=from_bot_w, stderr=log_w,
                start_new_session=True, preexec_fn=_preexec(spec.limits, self.cgroup, data is not None),
                close_fds=True, pass_fds=pass_fds,
            )
        except BaseException as e:
            for fd in (to_bot_r, to_bot_w, from_bot_r, from_bot_w, log_r, log_w):
                os.close(fd)
            if self._copier is not None:
                self._copier.kill()
                self._copier.wait()
            if self.cgroup is not None:
                self.cgroup.remove()
            if isinstance(e, subprocess.SubprocessError):  # the child could not enter its cgroup
                raise OSError(f"the bot's compartment could not be set up: {e}") from None
            raise
        if self.cgroup is not None:
            self.cgroup.opened()
        for fd in (to_bot_r, from_bot_w, log_w, log_r):
            os.close(fd)
        self.pid = self.proc.pid
        self.channel = Channel(from_bot_r, to_bot_w, notices=spec.transport != "stdio")  # stdio: no gate
        self._tree: list[int] = [self.pid]
        self._tree_at = 0.0
        with _lock:
            _live[self.pid] = self
        if spec.limits.memory_mb or spec.limits.cpu_seconds or spec.limits.processes or data is not None:
            WATCHER.watch(self)

    @property
    def violation(self) -> str | None:
        """The limit the bot went over (a sentence), set by the watcher when it killed the bot; once
        the compartment has ended, also what the kernel enforced (an OOM kill, a refused fork)."""
        if self.proc.poll() is not None:
            self.settle_log()  # the reason that follows quotes the bot's last output
        if self._violation is None and not self._settled and self.proc.poll() is not None:
            self._settled = True  # read once: the counters are final, and the groups go at kill()
            self._violation = (self.cgroup.violation() if self.cgroup is not None else None) or self._over_data()
        return self._violation

    @violation.setter
    def violation(self, reason: str | None) -> None:
        self._violation = reason

    # -- output ------------------------------------------------------------------
    def write_log(self, data: bytes) -> None:
        """Append a line of the referee's to the bot's log (the bot's own output goes there through
        its copier, ``arena/referee/logcopy.py``, which keeps the log under LOG_CAP_BYTES)."""
        with self._log_lock:
            try:
                with open_private(self.log_path, append=True) as f:
                    f.write(data[-LOG_CAP_BYTES:])
            except OSError:
                pass

    def _end_copier(self, wait_s: float) -> None:
        """Let the copier finish the output the bot left (a grandchild may hold the pipe open: then
        it is killed after ``wait_s``)."""
        copier, self._copier = self._copier, None
        if copier is None:
            return
        try:
            copier.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            copier.kill()
            copier.wait()

    # -- status ----------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def settle_log(self, wait_s: float = 0.5) -> None:
        """Once the compartment has ended, give its copier up to ``wait_s`` to copy the last of its
        output (what a failure's reason quotes), unless a grandchild still holds the pipe open."""
        copier = self._copier
        if copier is not None and not self._log_settled and self.proc.poll() is not None:
            self._log_settled = True  # once: a grandchild holding the pipe would make every call wait
            try:
                copier.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass

    def exit_description(self) -> str:
        self.settle_log()
        if self.exit_note is not None:
            return self.exit_note
        code = self.proc.poll()
        if code is None:
            return "still running"
        if code < 0 or code > 128:
            sig = -code if code < 0 else code - 128
            try:
                return f"killed by {signal.Signals(sig).name}"
            except ValueError:
                return f"killed by signal {sig}"
        return f"exited with code {code}"

    def exit_code(self) -> int | None:
        """The bot's exit code (negative: the signal that killed it), or None while it runs."""
        if self.bot_code is not None:
            return self.bot_code
        code = self.proc.poll()
        return 128 - code if code is not None and code > 128 else code

    def note_exit(self, arg: str) -> None:
        """The gate's ``exit`` notice: the bot's own exit status (the gate's may differ)."""
        word, _, rest = arg.partition(" ")
        try:
            code = int(word)
        except ValueError:
            return
        self.bot_code = code
        if rest:
            self.exit_note = rest
        elif code < 0:
            try:
                self.exit_note = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                self.exit_note = f"killed by signal {-code}"
        else:
            self.exit_note = f"exited with code {code}"

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except (psutil.Error, OSError):
            return []

    def _levels(self, children: dict[int, list[int]]) -> list[list[int]]:
        """The compartment's pids by depth: the sandbox and the gate first, then the bot's own."""
        levels, level = [], [self.pid]
        while level:
            levels.append(level)
            level = [c for p in level for c in children.get(p, ())]
        return levels

    def cpu_seconds(self) -> float:
        """CPU time used so far by the compartment: its cgroup's, every process that ever ran in it;
        without one, by its live processes (nanosecond clocks, cheap; exited children are missed)."""
        if self.cgroup is not None and self.cgroup.has("cpuacct"):
            return self.cgroup.cpu_seconds()
        now = time.monotonic()
        if now - self._tree_at > TREE_REFRESH_S:
            self._tree = [pid for level in self._levels(PROCESSES.children(TREE_REFRESH_S)) for pid in level]
            self._tree_at = now
        return tree_cpu_seconds(self._tree)

    def polled(self) -> bool:
        """Whether some limit of the bot is measured by listing its process tree (no cgroup for it)."""
        lim, cg = self.spec.limits, self.cgroup
        return bool(cg is None or (lim.processes and not cg.has("pids")) or (lim.memory_mb and not cg.has("memory"))
                    or (lim.cpu_seconds and not cg.has("cpuacct")))

    def _over_data(self, final: bool = True) -> str | None:
        """The data quota's sentence if the folder (with the deleted files the compartment holds
        open) is over it; each bot's folder is measured on its own schedule, never sooner than
        COST_RATIO times its last measure's cost after it (``final``: now, whatever the schedule)."""
        if self.data is None or (not final and time.monotonic() < self._data_next):
            return None
        spent = time.thread_time()
        quota = data_quota(self.spec.limits)
        use = data_use(self.data, quota)
        try:
            held = deleted_open_bytes(self._compartment_pids(), os.stat(self.data).st_dev)
        except OSError:
            held = 0
        self._data_next = time.monotonic() + COST_RATIO * (time.thread_time() - spent)
        if use.problem is not None:
            return (f"has a data folder that cannot be measured ({use.problem}), counted as over its quota "
                    "(limits.data_mb)")
        if use.entries > DATA_ENTRIES:
            return (f"holds over {DATA_ENTRIES} files and folders in its data folder, over the most a data "
                    "folder may hold (limits.data_mb)")
        used = use.bytes + held
        if used > quota:
            return (f"holds over {used / 2**20:.0f} MiB in its data folder (deleted files it keeps open "
                    f"included), over its quota of {quota >> 20} MiB (limits.data_mb)")
        return None

    def _compartment_pids(self) -> list[int]:
        """Every process of the compartment: its cgroup's, else its tree's."""
        if self.cgroup is not None:
            return self.cgroup.pids()
        return [p.pid for p in self.tree()]

    def over_limits(self, children: dict[int, list[int]] | None) -> str | None:
        """A sentence naming the limit the bot's processes are over, or None (``children`` is the
        machine's process map, needed only when ``polled()``)."""
        reason = self._over_kernel() or self._over_data(final=False)
        if reason or children is None:
            return reason
        return self._over_polled(children)

    def _over_kernel(self) -> str | None:
        cg, lim = self.cgroup, self.spec.limits
        if cg is None:
            return None
        reason = cg.violation()
        if reason:
            return reason
        if lim.processes and cg.has("pids"):
            copier = self._copier is not None and self._copier.poll() is None
            tasks = cg.tasks() - _own_tasks(self.pid, self.infra_depth) - copier
            if tasks > lim.processes:
                return f"runs {tasks} processes and threads, over its limit of {lim.processes} (limits.processes)"
        if lim.cpu_seconds and cg.has("cpuacct"):
            cpu = cg.cpu_seconds()
            if cpu > lim.cpu_seconds:
                return f"used {cpu:.1f} s of CPU, over its limit of {lim.cpu_seconds} s (limits.cpu_seconds)"
        return None

    def _over_polled(self, children: dict[int, list[int]]) -> str | None:
        lim, cg = self.spec.limits, self.cgroup
        levels = self._levels(children)
        pids = [pid for level in levels[self.infra_depth:] for pid in level]
        if lim.processes and not (cg is not None and cg.has("pids")):
            tasks = sum(_threads(pid) for pid in pids)  # threads are tasks too: they use up pids alike
            if tasks > lim.processes:
                return (f"runs {len(pids)} processes with {tasks} threads in all, over its limit of "
                        f"{lim.processes} (limits.processes)")
        if lim.memory_mb and not (cg is not None and cg.has("memory")):
            used = sum(_rss(pid) for pid in pids)
            if self.infra_depth >= 2 and len(levels) > 1:  # the sandbox's /tmp and /dev/shm are memory too
                used += sum(_tmpfs_used(levels[1][0], d) for d in ("tmp", "dev/shm"))
            if used > lim.memory_mb * 1024 * 1024:
                return (f"uses {used / 2**20:.0f} MiB of memory (its processes, /tmp and /dev/shm), over its "
                        f"limit of {lim.memory_mb} MiB (limits.memory_mb)")
        if lim.cpu_seconds and not (cg is not None and cg.has("cpuacct")):
            # All of the compartment: the gate is PID 1 and reaps the bot's orphans, so their time is its.
            cpu = tree_cpu_seconds([pid for level in levels for pid in level], reaped=True)
            if cpu > lim.cpu_seconds:
                return f"used {cpu:.1f} s of CPU, over its limit of {lim.cpu_seconds} s (limits.cpu_seconds)"
        return None

    def died_of_limits(self) -> bool:
        """Whether the bot ended over a resource limit (the watcher's kill, SIGXCPU, or out of memory)."""
        if self.violation is not None:
            return True
        code = self.proc.poll()
        signals = [s for s in (signal.SIGXCPU, signal.SIGXFSZ) if code in (-s, 128 + s)
                   or (self.exit_note or "").endswith(s.name)]
        if signals:
            return True
        if code is None or not (self.spec.limits.memory_mb or self.spec.limits.cpu_seconds or self.data is not None):
            return False
        self.settle_log()
        tail = log_tail(self.log_path, lines=40, max_bytes=2000)
        return any(s in tail for s in ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory",
                                       "File too large"))

    # -- ending ------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the compartment and every descendant (also those that left its process group)."""
        WATCHER.forget(self)
        descendants = self.tree()[1:]
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except OSError:
            pass
        for d in descendants:
            try:
                d.kill()
            except (psutil.Error, OSError):
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
            pass
        for d in descendants:  # those reparented to us (a subreaper) must be reaped here
            try:
                os.waitpid(d.pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                pass
        sweep(BOT_MARKER, self.bot_id)  # descendants that left the bot's tree (no sandbox)
        self._end_copier(1.0)
        if self.cgroup is not None:
            self.violation  # noqa: B018 - read what the kernel counted before the groups go
            self.cgroup.remove()  # kills what is left in it, however it left the tree
        self.channel.close()
        with _lock:
            _live.pop(self.pid, None)

    def wait_exit(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False


class Watcher:
    """A thread that measures every bot with limits, all the time (not only while it decides),
    and kills a bot over a limit at once; the referee reads ``violation`` at its next step."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self._procs: dict[int, BotProcess] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, proc: BotProcess) -> None:
        with self._lock:
            self._procs[proc.pid] = proc
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name="limits")
                self._thread.start()

    def forget(self, proc: BotProcess) -> None:
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
    """SIGKILL a process and everything below it now (reaping is left to ``BotProcess.kill``)."""
    level = [pid]
    while level:
        for p in level:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        level = [c for p in level for c in children.get(p, ())]


WATCHER = Watcher()
GATE = str(Path(__file__).with_name("gate.py"))  # speaks ZMTP itself
GATE_LIBZMQ = str(Path(__file__).with_name("gate_libzmq.py"))  # CURVE, or ARENA_GATE=libzmq (kept for a release)


def gate_program(curve: bool = False) -> str:
    """The gate's file: the ZMTP gate, or the libzmq one for a CURVE seat or when ``ARENA_GATE=libzmq``."""
    return GATE_LIBZMQ if curve or os.environ.get("ARENA_GATE") == "libzmq" else GATE
SANDBOX_ENDPOINT = "ipc:///tmp/arena-bot.sock"


def launch(spec: BotSpec, token: str, log_path: Path, cwd: Path | None = None, *, sandbox: bool = True,
           hide: tuple[Path, ...] = (), private_dir: Path | None = None, listen: str | None = None,
           data: Path | None = None, curve_secret: str | None = None) -> BotProcess:
    """Start a bot in its compartment: its sandbox (unless ``sandbox`` is False), its gate (unless it
    speaks stdio), the token in ``ARENA_TOKEN`` (never on a command line), ``--endpoint E`` appended.

    A remote seat (``listen`` given) is a gate alone, listening on ``listen`` for the bot to connect
    (a CURVE server with ``curve_secret``, SPEC 12).
    ``private_dir`` holds the gate's socket when there is no sandbox to hold it; ``data`` is the
    bot's writable folder (made if missing), passed to it as ``ARENA_DATA``.
    """
    if listen is not None:
        env = {**os.environ, MARKER: SESSION, "ARENA_TOKEN": token, "ARENA_GATE_BIND": listen}
        if curve_secret:
            env["ARENA_GATE_CURVE"] = curve_secret
        return BotProcess(spec, [sys.executable, gate_program(bool(curve_secret))], env, log_path, None, infra_depth=1)
    program = command_line(spec.command)
    if not program:
        raise ValueError("the bot command is empty")
    env, inside = _bot_environment(spec, sandbox)
    who = None
    if sandbox:
        from arena.referee import identity

        if identity.needed():  # root: the compartment runs as a host user of its own, never root
            who = identity.allocate(f"data:{os.path.abspath(data)}" if data is not None else None)
    data_fd = None
    if data is not None:
        data = Path(os.path.abspath(data))
        env["ARENA_DATA"] = str(data)
        if not sandbox:
            os.close(_data_folder(data, None, spec, cwd, hide))
    argv, depth, gate = program, 0, gate_program()
    if spec.transport != "stdio":
        env["ARENA_TOKEN"] = token
        if spec.transport == "tcp":
            env["ARENA_GATE_BIND"] = "tcp://127.0.0.1:0"
        elif sandbox:
            env["ARENA_GATE_BIND"] = SANDBOX_ENDPOINT
        else:
            assert private_dir is not None, "a gate without a sandbox needs a private folder for its socket"
            env["ARENA_GATE_BIND"] = f"ipc://{private_dir}/{secrets.token_hex(6)}.sock"
        # -I: the gate (ours) reads no PYTHON* variable and nothing from the bot's folders
        argv, depth = [sys.executable, *(["-I"] if sandbox else []), gate, *program], 1
    if sandbox:
        from arena.referee import sandbox as sb

        root = Path(_project_root())
        trusted = spec.is_bundled()  # the sample bots run the engine's own policies
        workdir, folders, files = _bot_folders(spec, program, cwd, tuple(hide))
        if who is not None:
            _check_readable(sb.program_folders(program, workdir, files=True))
        data_fd = _data_folder(data, who, spec, cwd, hide) if data is not None else None
        try:
            argv = sb.wrap(argv, workdir, hide, expose=[Path(gate), *([root] if trusted else [])],
                           as_pid_1=spec.transport != "stdio",  # the gate is PID 1: orphans become its children
                           client_dir=None if trusted else root / "protocol", folders=folders, files=files,
                           tmp_bytes=(spec.limits.memory_mb or 256) << 20, writable=data, writable_fd=data_fd,
                           identity=who,
                           bot_env=inside)
        except BaseException:
            if data_fd is not None:
                os.close(data_fd)
            raise
        # bwrap, then its PID 1 (the gate, or bwrap's own init for a stdio bot); as root a first
        # bwrap (root's, building the view) comes before
        depth = 2 if who is None else 3
    try:  # the sandbox binds the data folder from this descriptor (opened without following links)
        return BotProcess(spec, argv, env, log_path, cwd, infra_depth=depth, data=data,
                          pass_fds=() if data_fd is None else (data_fd,))
    finally:
        if data_fd is not None:
            os.close(data_fd)


def _bot_folders(spec: BotSpec, program: list[str], cwd: Path | None,
                 hide: tuple[Path, ...] = ()) -> tuple[Path, list[Path], list[Path]]:
    """(the working folder, the bot's own folders, single files) a sandboxed bot sees.

    A tournament's bot (``cwd`` given) sees its ``cwd`` folder; one without ``cwd`` an empty working
    folder and only its program file (``program_file``) when anyone may read it and it lies in no
    hidden folder (results, logs).
    A bot of ``arena play`` or ``check-bot`` (no ``cwd``: the command was typed by the organiser)
    runs in the current folder and sees the folders of the files its command line names."""
    from arena.referee import sandbox as sb

    if cwd is None:
        here = Path.cwd()
        return here, sb.program_folders(program, here), []
    if spec.cwd is not None:
        return cwd, [cwd], []
    found = program_file(program, cwd)
    hidden = [Path(os.path.abspath(h)).resolve() for h in hide]
    files = [found] if found is not None and _world_readable(found, cwd.resolve()) \
        and not any(found.is_relative_to(h) for h in hidden) else []
    return cwd, [], files


# Programs whose first word that is not an option names the script they run (not data of theirs).
INTERPRETERS = ("python", "pypy", "node", "nodejs", "deno", "bun", "ruby", "perl", "php", "lua", "luajit",
                "java", "Rscript", "julia", "sh", "bash", "dash", "zsh", "tclsh", "guile", "racket", "elixir")


def program_file(program: list[str], cwd: Path) -> Path | None:
    """The one file a bot's command runs: its executable when named as a path, else the script of its
    interpreter (the first word after it that is not an option); None when that is no regular file
    of a folder other than the system's (or is a link).  No other word of the line is a program."""
    from arena.referee import sandbox as sb

    if not program:
        return None
    word = program[0]
    if os.path.basename(word).rstrip("0123456789.") not in INTERPRETERS:
        own = sb.program_folders([word], cwd, files=True) if "/" in word else []
        return own[0] if own else None  # an executable of the bot's
    after = [(i, w) for i, w in enumerate(program) if i and not w.startswith("-")]
    if not after or program[after[0][0] - 1] in ("-c", "-e", "-m"):
        return None  # code on the command line (python -c, perl -e, python -m): no file runs
    found = sb.program_folders([after[0][1]], cwd, files=True)
    return found[0] if found else None


def _world_readable(path: Path, folder: Path) -> bool:
    """Whether any user of the machine may read ``path`` (mode o+r, and directly in ``folder`` or
    with every folder above it passable by anyone): a command line names no private file into the view."""
    try:
        if path.stat().st_mode & 0o004 == 0:
            return False
        return path.parent == folder or all(p.stat().st_mode & 0o001 for p in path.parents)
    except OSError:
        return False


def _check_readable(paths: list[Path]) -> None:
    """A bot running as a user of its own must be able to read its program: say which file it cannot."""
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if mode & 0o004 == 0:
            raise ValueError(f"the bot runs as an unprivileged user of its own, which cannot read {str(path)!r} "
                             f"(mode {mode & 0o777:o}); make it readable: chmod o+r {str(path)!r}")


def _data_folder(data: Path, who: Any, spec: BotSpec, cwd: Path | None, hide: tuple[Path, ...]) -> int:
    """A descriptor of the bot's data folder ``data`` (made if missing), checked again here
    (``datafolder``: a tournament could reach this another way than through ``validate``), opened
    name by name without following links from its anchor (the tournament's folder when ``data`` ends
    with the bot's ``data`` path, else its parent) and handed over to ``who`` (0700) when given."""
    from arena.referee import datafolder

    names = [data.name]
    if spec.data is not None:
        problem = datafolder.path_problem(spec.data)
        if problem is not None:
            raise ValueError(f"the bot's data folder: {problem}")
        given = datafolder.names(spec.data)
        if data.parts[-len(given):] == tuple(given):
            names = given
    anchor = Path(*data.parts[:-len(names)])
    forbidden = [("a folder hidden from bots (results, logs)", Path(h)) for h in hide]
    why = datafolder.collision(data, forbidden, own=[cwd] if cwd is not None else [])
    if why is not None:
        raise ValueError(f"the bot's data folder {str(data)!r} {why}; expected a folder of its own")
    fd = datafolder.open_folder(anchor, names)
    if who is not None:
        from arena.referee import identity

        try:
            identity.hand_over(fd, who, str(data))
        except BaseException:
            os.close(fd)
            raise
    return fd


def _bot_environment(spec: BotSpec, sandbox: bool) -> tuple[dict[str, str], dict[str, str]]:
    """(the launcher's environment, the variables set inside the sandbox only).

    A sandboxed bot's launcher gets a short environment of ours, never a variable from the bot's
    ``env``: those, and the client library on PYTHONPATH (the sample bots the project root), are
    set inside the sandbox only (``sandbox.wrap(bot_env=...)``).  A bot run without a sandbox is
    trusted with ours and its own."""
    from arena.settings import env_problem

    root = _project_root()
    if sandbox:
        from arena.referee import sandbox as sb

        for k, v in spec.env.items():
            problem = env_problem(k, v)
            if problem:
                raise ValueError(f"env {k}: {problem}")
        env = sb.environment({})
        inside = dict(spec.env)
        lib = root if spec.is_bundled() else sb.CLIENT_DIR
        inside["PYTHONPATH"] = lib + (os.pathsep + inside["PYTHONPATH"] if inside.get("PYTHONPATH") else "")
    else:
        env = {**os.environ, **spec.env}
        inside = {}
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env[MARKER] = SESSION
    env.pop("ARENA_ENDPOINT", None)
    return env, inside
