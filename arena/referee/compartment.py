"""One bot compartment (``BotProcess``): the bot's process (in its own session, its cgroup entered
before exec, RLIMIT_CPU and, with a data folder, RLIMIT_FSIZE at its quota), its pipes to the
referee, its capped log, its limits (the kernel's counters, or the polled process tree where no
cgroup can be made), and killing all it started."""

from __future__ import annotations

import os
import resource
import secrets
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from arena.integrity import open_private
from arena.integrity import private_folder as private_folder_of
from arena.referee import cgroups
from arena.referee.botlog import LOG_CAP_BYTES, _start_copier, log_tail
from arena.referee.channel import Channel
from arena.referee.cleanup import (
    BOT_MARKER,
    REFEREE_MARKER,
    _libc,
    die_with_parent,
    install_cleanup,
    register,
    sweep,
    unregister,
)
from arena.referee.endpoint import Endpoint
from arena.referee.limits_watch import DATA_ENTRIES, WATCHER, data_quota, data_use
from arena.referee.procfs import (
    COST_RATIO,
    PROCESSES,
    TREE_REFRESH_S,
    _own_tasks,
    _rss,
    _threads,
    _tmpfs_used,
    deleted_open_bytes,
    tree_cpu_seconds,
)
from arena.settings import BotSpec, Limits


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


def _pidfd(pid: int) -> int:
    """A descriptor that polls readable once ``pid`` has ended (Linux 5.3 and later), else -1."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


def _compartment(referee: str, name: str, limits: Limits) -> cgroups.Compartment | None:
    """The cgroup of a new compartment, or None where none can be made (then its limits are polled)."""
    cgroups.warn_once()
    lay = cgroups.layout()
    if lay is None or not lay.bases:
        return None
    made = cgroups.Compartment(referee, name, limits.memory_mb, limits.processes)
    return made if made.dirs else None


class BotProcess:
    """One launched bot compartment: the bot, its sandbox, the channel its messages come by (its own
    pipes on stdio, its gate's, or the endpoint the referee holds for it), its capped log, and
    everything it starts."""

    def __init__(self, spec: BotSpec, argv: list[str], env: dict[str, str], log_path: Path,
                 cwd: Path | None, infra_depth: int, data: Path | None = None, pass_fds: tuple[int, ...] = (),
                 data_volume: bool = False, endpoint: Endpoint | None = None) -> None:
        referee = env[REFEREE_MARKER] = install_cleanup()
        self.spec = spec
        self.bot_id = env[BOT_MARKER] = secrets.token_hex(8)
        self.data = data  # the bot's data folder, whose size is watched (limits.data_mb)
        self.data_volume = data_volume  # the folder is a volume of its quota: the kernel enforces it
        self._data_next = 0.0  # when the watcher measures the data folder next
        self._data_early = 0.0  # the soonest a filling filesystem may bring that measure forward
        self._data_free = -1  # its filesystem's free bytes at the last measure (-1: unknown)
        self._violation: str | None = None
        self._settled = False
        self.cgroup = _compartment(referee, self.bot_id, spec.limits)
        self.log_path = log_path
        self.started = time.monotonic()
        self.infra_depth = infra_depth  # tree levels that are ours (bwrap, the gate), not the bot's
        self._infra: list[int] = []  # their pids below the first, once seen (note_infra)
        self.exit_note: str | None = None  # the bot's exit status as its gate reported it
        self.bot_code: int | None = None  # the bot's own exit code (negative: killed by that signal)
        private_folder_of(log_path.parent)  # the organiser's alone: a bot's output may hold what it saw
        open_private(log_path, append=True).close()  # a restarted bot goes on in the same file
        self._log_lock = threading.Lock()  # the referee's own lines (game separators)
        # The bot's messages: its own pipes (a stdio bot, or its gate's), or the endpoint the referee
        # holds for it, and then both its outputs go to the log.
        log_r, log_w = os.pipe()
        if endpoint is None:
            to_bot_r, to_bot_w = os.pipe()
            from_bot_r, from_bot_w = os.pipe()
        else:
            to_bot_r, to_bot_w = os.open(os.devnull, os.O_RDONLY), -1
            from_bot_r, from_bot_w = -1, log_w
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
            for fd in {to_bot_r, to_bot_w, from_bot_r, from_bot_w, log_r, log_w} - {-1}:
                os.close(fd)
            if endpoint is not None:
                endpoint.close()
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
        for fd in {to_bot_r, from_bot_w, log_w, log_r}:
            os.close(fd)
        self.pid = self.proc.pid
        self.pidfd = _pidfd(self.pid)  # readable once the compartment's first process ended (-1: no pidfds here)
        self.channel: Channel | Endpoint
        if endpoint is None:
            self.channel = Channel(from_bot_r, to_bot_w, notices=spec.speaks != "stdio")  # stdio: no gate
        else:
            self.channel = endpoint
            endpoint.watch_end(self.pidfd, self.proc)
        self._tree: list[int] = [self.pid]
        self._tree_at = 0.0
        register(self)
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

    @property
    def flagged(self) -> bool:
        """Whether the watcher found the bot over a limit (no system call: the referee asks between decisions)."""
        return self._violation is not None

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

    def note_infra(self) -> None:
        """Remember the pids of the compartment's own processes below its first (the sandbox's
        bwraps and init, the gate) while they run.  One that outlives its parent is adopted by us
        (the subreaper), and ``kill`` reaps it even once it has left the tree: a stdio bot's
        sandbox init does, when the bot exits by itself."""
        found: list[int] = []
        try:
            level = [psutil.Process(self.pid)]
            for _ in range(self.infra_depth - 1):
                level = [c for p in level for c in p.children()]
                found += [p.pid for p in level]
        except psutil.Error:
            pass
        self._infra = found

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
        COST_RATIO times its last measure's cost after it, or EARLY_RATIO times when its filesystem
        filled by DATA_EARLY_BYTES since (``final``: now, whatever the schedule)."""
        if self.data is None or self.data_volume:
            return None
        now, free = time.monotonic(), _free_bytes(self.data)
        filling = free >= 0 and self._data_free >= 0 and self._data_free - free >= DATA_EARLY_BYTES
        if not final and (now < self._data_early or (now < self._data_next and not filling)):
            return None  # not due, and the filesystem did not fill by much since (one statvfs: cheap)
        self._data_free = free
        spent = time.thread_time()
        quota = data_quota(self.spec.limits)
        use = data_use(self.data, quota)
        try:
            held = deleted_open_bytes(self._compartment_pids(), os.stat(self.data).st_dev)
        except OSError:
            held = 0
        cost, done = time.thread_time() - spent, time.monotonic()
        self._data_next, self._data_early = done + COST_RATIO * cost, done + EARLY_RATIO * cost
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
        _reap(sorted({d.pid for d in descendants} | set(self._infra)))
        sweep(BOT_MARKER, self.bot_id)  # descendants that left the bot's tree (no sandbox)
        self._end_copier(1.0)
        if self.cgroup is not None:
            self.violation  # noqa: B018 - read what the kernel counted before the groups go
            self.cgroup.remove()  # kills what is left in it, however it left the tree
        self.channel.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        unregister(self)

    def wait_exit(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False


REAP_S = 1.0  # how long kill() waits for a killed compartment's processes to be ours to reap


def _reap(pids: list[int]) -> None:
    """Reap the killed ``pids`` that become our children (a subreaper adopts the orphans of a killed
    tree, a moment after their parent died), until each is reaped or gone, for up to ``REAP_S``:
    one reaped before it was adopted would stay a zombie of ours for as long as the referee runs."""
    deadline = time.monotonic() + REAP_S
    while pids:
        left = []
        for pid in pids:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == 0:
                    left.append(pid)  # ours, not dead yet
            except ChildProcessError:  # not ours (yet): still there, its parent dying, or gone
                try:
                    os.kill(pid, 0)
                    left.append(pid)
                except OSError:
                    pass
        pids = left
        if not pids or time.monotonic() > deadline:
            return
        time.sleep(0.002)


DATA_EARLY_BYTES = 32 << 20  # the filesystem filling by this much since a measure brings the next one forward
EARLY_RATIO = 3  # but no sooner than this many times its cost: whoever fills the disk, the referee spends
                 # at most a quarter of its watcher's time on one bot's folder


def _free_bytes(folder: Path) -> int:
    """Free bytes of the filesystem holding ``folder`` (-1 if unknown): whoever wrote there, a drop
    since the last measure is an upper bound on what the bot can have written in between."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return -1
    return st.f_bfree * st.f_frsize
