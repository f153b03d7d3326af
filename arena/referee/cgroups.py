"""Kernel accounting of a bot's compartment: one cgroup per compartment (bwrap, the gate, the bot and
everything it forks), made by the referee before the compartment's first process execs.

What the kernel then counts and enforces, whatever the bot does (exited children, orphans, memory
no process owns such as memfd, tmpfs and socket buffers, threads):

- CPU: the cgroup's accumulated usage (``cpuacct.usage`` on v1, ``cpu.stat`` ``usage_usec`` on v2)
  is the CPU clock; it only grows, so a child killed at the moment of a request is never credited
  back, and one that exited before the reply is charged;
- memory: a hard limit (``limits.memory_mb`` plus ``INFRA_MB`` for the gate and the sandbox); over
  it the kernel's OOM killer ends the compartment, and its OOM counter says it was memory;
- tasks: ``pids.max`` (``limits.processes`` plus ``INFRA_TASKS``); a refused fork is counted;
- an equal CPU share per compartment (``cpu.shares`` / ``cpu.weight`` the same for every one).

Compartments are groups ``arena-<REFEREE>-<BOT>`` inside the referee's own cgroup of each
v1 hierarchy (so a limit the host puts on the referee still binds its bots), side by side with
its processes: each weighs as much as one process of the referee's.  cgroup v2 is used where
the cpu, memory and pids controllers reach the referee's group (the compartments then go beside
it, in its parent, or inside it when it is the root), else the v1 hierarchies
(``/sys/fs/cgroup/{cpu,cpuacct,memory,pids}``); the choice is made once per process.
Where a controller cannot be used (not root, no writable hierarchy), ``missing()`` names what the
kernel does not enforce, the referee falls back to polling (``launch``) and warns once.

The process enters its cgroup from ``preexec_fn`` by writing ``0`` to ``cgroup.procs`` through a
descriptor the referee opened: the kernel checks the opener's rights, so this holds even after
the child dropped to an unprivileged uid.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("cpu", "cpuacct", "memory", "pids")  # v1 names; on v2 cpuacct is part of cpu
INFRA_MB = 64  # memory the gate and bwrap hold, beyond limits.memory_mb
INFRA_TASKS = 16  # tasks (processes and threads) of bwrap and the gate, beyond limits.processes
CPU_SHARES, CPU_WEIGHT = 1024, 100  # the same for every compartment
REMOVE_WAIT_S = 2.0  # how long a cgroup's last processes may take to die before it is removed
UNLIMITED = 1 << 62


@dataclass(frozen=True)
class Layout:
    """Where compartments' cgroups go: the referee's own cgroup folder per controller."""

    version: int  # 1 or 2
    bases: dict[str, Path]  # controller -> the folder compartments' groups are made under

    def prefixes(self, referee: str) -> list[str]:
        """What the referee's compartments' group folders start with (one per distinct hierarchy)."""
        return sorted({f"{base}/arena-{referee}-" for base in self.bases.values()})


def _own_paths() -> dict[str, str]:
    """This process's cgroup per v1 controller, and ``""`` for the v2 one (from /proc/self/cgroup)."""
    paths: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return paths
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for name in parts[1].split(",") if parts[1] else [""]:
            paths[name] = parts[2]
    return paths


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(file system type, mount point, options) of every cgroup mount."""
    found: list[tuple[str, str, set[str]]] = []
    try:
        text = Path("/proc/self/mounts").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            found.append((parts[2], parts[1], set(parts[3].split(","))))
    return found


def _v2_layout(mounts: list[tuple[str, str, set[str]]], own: dict[str, str]) -> Layout | None:
    """v2 allows no process in a group that gives controllers to its children (but the root), so the
    compartments go inside the referee's group only where it already does (the root), else beside
    it, in its parent, which gives them to the referee's group and so to its siblings."""
    wanted = {"cpu", "memory", "pids"}
    for kind, point, _opts in mounts:
        if kind != "cgroup2" or "" not in own:
            continue
        mine = Path(point) / own[""].lstrip("/")
        try:
            if wanted <= set((mine / "cgroup.subtree_control").read_text().split()):
                base = mine
            elif own[""].strip("/") and wanted <= set((mine / "cgroup.controllers").read_text().split()):
                base = mine.parent
            else:
                continue
        except OSError:
            continue
        if os.access(base, os.W_OK):
            return Layout(2, dict.fromkeys(CONTROLLERS, base))
    return None


def _v1_layout(mounts: list[tuple[str, str, set[str]]], own: dict[str, str]) -> Layout:
    bases: dict[str, Path] = {}
    for kind, point, opts in mounts:
        if kind != "cgroup":
            continue
        for c in CONTROLLERS:
            if c in opts and c in own and c not in bases:
                base = Path(point) / own[c].lstrip("/")
                if (base / "cgroup.procs").exists() and os.access(base, os.W_OK):
                    bases[c] = base
    return Layout(1, bases)


@functools.lru_cache(maxsize=1)
def layout() -> Layout | None:
    """The cgroup layout of this machine for this process (v2 if usable, else v1), or None on no Linux."""
    if not sys.platform.startswith("linux") or os.environ.get("ARENA_CGROUPS") == "0":
        return None  # ARENA_CGROUPS=0: the polling fallback on purpose (tests, or a host that objects)
    mounts, own = _mounts(), _own_paths()
    return _v2_layout(mounts, own) or _v1_layout(mounts, own)


def missing() -> list[str]:
    """What the kernel does not enforce here, one phrase per missing controller ([] when all is)."""
    lay = layout()
    have = set(lay.bases) if lay is not None else set()
    what = {"cpuacct": "the CPU clock counts only live processes (children that exited are missed)",
            "memory": "memory is polled (resident sets and the sandbox's /tmp and /dev/shm only: memfd and "
                      "socket buffers are not counted)",
            "pids": "the process limit is polled (a burst of forks between two polls is not refused)",
            "cpu": "no equal CPU share per bot"}
    return [what[c] for c in CONTROLLERS if c not in have]


WARNED = "ARENA_CGROUPS_WARNED"  # set once said, so a run's worker processes do not say it again


def warn_once() -> None:
    """Say once per run (on stderr) what is not enforced because no cgroup can be made."""
    gaps = missing()
    if not gaps or os.environ.get(WARNED):
        return
    os.environ[WARNED] = "1"
    lay = layout()
    absent = [c for c in CONTROLLERS if lay is None or c not in lay.bases]
    print(f"warning: the bots' resources are not counted by the kernel (no writable cgroup for {', '.join(absent)}: "
          "the arena is not root, the hierarchy is read-only, or ARENA_CGROUPS=0): " + "; ".join(gaps),
          file=sys.stderr)


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _read_int(path: Path, default: int = 0) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def _keyed(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed file (``cpu.stat``, ``memory.events``, ``pids.events``)."""
    try:
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        pass
    return 0


class Compartment:
    """One compartment's cgroup (a folder per hierarchy), its limits written, ready to be entered."""

    def __init__(self, referee: str, name: str, memory_mb: int | None, processes: int | None) -> None:
        lay = layout()
        self.version = lay.version if lay is not None else 1
        self.dirs: dict[str, Path] = {}
        for c, base in (lay.bases.items() if lay is not None else ()):
            folder = base / f"arena-{referee}-{name}"
            try:
                folder.mkdir(exist_ok=True)
            except OSError:
                continue
            self.dirs[c] = folder
        self.memory_mb, self.processes = memory_mb, processes
        self.spared = 0  # a pid ``kill`` leaves alone (``remove`` still waits for the group to empty)
        self._cpu_fd = -1
        self._configure()
        self._fds: list[int] = []
        for folder in sorted(set(self.dirs.values())):
            try:
                self._fds.append(os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC))
            except OSError:
                self.dirs = {c: d for c, d in self.dirs.items() if d != folder}

    def _configure(self) -> None:
        mem, cpu, pids = self.dirs.get("memory"), self.dirs.get("cpu"), self.dirs.get("pids")
        limit = (self.memory_mb + INFRA_MB) << 20 if self.memory_mb else None
        if self.version == 2:
            if cpu is not None:
                _write(cpu / "cpu.weight", str(CPU_WEIGHT))
            if mem is not None and limit is not None:
                _write(mem / "memory.max", str(limit))
                _write(mem / "memory.swap.max", "0")
            if pids is not None and self.processes:
                _write(pids / "pids.max", str(self.processes + INFRA_TASKS))
            return
        if cpu is not None:
            _write(cpu / "cpu.shares", str(CPU_SHARES))
        if mem is not None and limit is not None:
            _write(mem / "memory.limit_in_bytes", str(limit))
            _write(mem / "memory.kmem.tcp.limit_in_bytes", str(limit))  # socket buffers: charged once limited
        if pids is not None and self.processes:
            _write(pids / "pids.max", str(self.processes + INFRA_TASKS))

    def has(self, controller: str) -> bool:
        return controller in self.dirs

    def enter(self) -> None:
        """In the child, before exec: move this process into every group (async-signal-safe calls only)."""
        for fd in self._fds:
            os.write(fd, b"0")

    def opened(self) -> None:
        """In the referee, once the compartment's first process runs: the entry descriptors are not needed."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []

    # -- what the kernel counted ------------------------------------------------------------
    def cpu_seconds(self) -> float:
        """CPU time used by every process that ever ran in the compartment (read every 5 ms while
        the bot decides: from a descriptor kept open, 20 times cheaper than opening the file)."""
        if self._cpu_fd < 0:
            name = "cpu.stat" if self.version == 2 else "cpuacct.usage"
            try:
                self._cpu_fd = os.open(self.dirs["cpuacct"] / name, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return 0.0
        try:
            text = os.pread(self._cpu_fd, 4096, 0)
        except OSError:
            return 0.0
        if self.version == 1:
            return int(text or 0) / 1e9
        for line in text.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def memory_bytes(self) -> int:
        mem = self.dirs["memory"]
        if self.version == 2:
            return _read_int(mem / "memory.current")
        return _read_int(mem / "memory.usage_in_bytes") + _read_int(mem / "memory.kmem.tcp.usage_in_bytes")

    def oom_kills(self) -> int:
        mem = self.dirs.get("memory")
        if mem is None:
            return 0
        if self.version == 2:
            return _keyed(mem / "memory.events", "oom_kill")
        return _keyed(mem / "memory.oom_control", "oom_kill") + _read_int(mem / "memory.kmem.tcp.failcnt")

    def refused_forks(self) -> int:
        pids = self.dirs.get("pids")
        return _keyed(pids / "pids.events", "max") if pids is not None else 0

    def tasks(self) -> int:
        pids = self.dirs.get("pids")
        return _read_int(pids / "pids.current") if pids is not None else 0

    def violation(self) -> str | None:
        """A sentence naming the limit the kernel enforced on the compartment, or None."""
        if self.memory_mb and self.oom_kills():
            return (f"went over its memory limit of {self.memory_mb} MiB (limits.memory_mb; counted by the kernel: "
                    f"its processes, files in memory and socket buffers, with {INFRA_MB} MiB for its gate)")
        if self.processes and self.refused_forks():
            return (f"tried to run more than {self.processes} processes and threads (limits.processes; "
                    f"{INFRA_TASKS} more are its gate's and sandbox's), and the kernel refused")
        return None

    # -- ending -------------------------------------------------------------------------------
    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in set(self.dirs.values()):
            try:
                found.update(int(x) for x in (folder / "cgroup.procs").read_text().split())
            except (OSError, ValueError):
                continue
        return sorted(found)

    def kill(self) -> None:
        """SIGKILL every process in the compartment (those that left its process tree too) but
        ``spared`` (the bot's log copier, which ends by itself once it has copied what is left)."""
        if self.version == 2 and self.dirs and not self.spared \
                and _write(next(iter(self.dirs.values())) / "cgroup.kill", "1"):
            return
        for pid in self.pids():
            if pid == self.spared:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def remove(self, wait_s: float = REMOVE_WAIT_S) -> bool:
        """Kill what is left and remove the groups; False if some could not be removed in ``wait_s``
        (then the referee's end, or its undertaker, removes them)."""
        self.opened()
        self.spared = 0
        if self._cpu_fd >= 0:
            os.close(self._cpu_fd)
            self._cpu_fd = -1
        deadline = time.monotonic() + wait_s
        left = set(self.dirs.values())
        while left:
            self.kill()
            for folder in list(left):
                try:
                    folder.rmdir()
                    left.discard(folder)
                except FileNotFoundError:
                    left.discard(folder)
                except OSError:
                    pass
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.005)
        return not left


def remove_left(referee: str) -> None:
    """Remove what is left of the referee's compartments' groups (at its end; normally none)."""
    import glob

    lay = layout()
    for prefix in lay.prefixes(referee) if lay is not None else ():
        for folder in glob.glob(glob.escape(prefix) + "*/"):
            try:
                os.rmdir(folder)
            except OSError:
                pass
