"""Bot processes: launching, output capture, resource limits, and killing them all.

Every bot runs in its own process group (``start_new_session``) and, on Linux,
gets SIGKILL if the referee dies (``PR_SET_PDEATHSIG``).  Its stdout and
stderr go to one log file, capped in size by a reader thread that keeps
draining the pipe (so a chatty bot never blocks, and never fills the disk).

Nothing may survive the referee, not even a grandchild that left the bot's
process group: the referee is a child subreaper (orphans of its bots become
its children, not init's), every bot and everything it forks carries the
referee's ``ARENA_SESSION`` marker in its environment, and ``kill_all`` (at
exit, on SIGTERM/SIGHUP) kills every descendant with that marker.
``sweep(marker)`` does the same for leftovers of an earlier, killed run.

Resource limits (``Limits``) are watched by the referee over the whole
process tree (memory as resident set size, CPU seconds, number of
processes), because rlimits are per process and do not bind root; CPU time
is also capped per process with RLIMIT_CPU.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import resource
import secrets
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import psutil

from arena.settings import BUNDLED_BOT_MODULES, BotSpec, Limits

LOG_CAP_BYTES = 1 << 20  # per bot log file


def command_line(command: str) -> list[str]:
    """The argv for a bot: a bundled name runs its module with this Python."""
    words = shlex.split(command)
    if len(words) == 1 and words[0] in BUNDLED_BOT_MODULES:
        return [sys.executable, "-m", BUNDLED_BOT_MODULES[words[0]]]
    return words


def _project_root() -> str:
    return str(Path(__file__).resolve().parent.parent)


# -- the registry of live process groups -------------------------------------------

_live: dict[int, BotProcess] = {}
_lock = threading.Lock()
MARKER = "ARENA_SESSION"
BOT_MARKER = "ARENA_BOT_ID"  # one per launched bot process, inherited by all it forks
# Marks every process started for this referee; a referee started under a marker (by a
# test suite, or a tournament runner) keeps it, so the whole tree can be found.
SESSION = os.environ.get(MARKER) or secrets.token_hex(8)
RUN_MARKER = "ARENA_RUN"  # set by the tournament runner: the results folder


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


def _on_signal(signum: int, _frame: Any) -> None:
    kill_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


_installed = False


def install_cleanup() -> None:
    """Kill bots on normal exit, SIGTERM and SIGHUP (Ctrl-C arrives as KeyboardInterrupt and exits normally)."""
    global _installed
    if _installed:
        return
    _installed = True
    libc = _libc()
    if libc is not None:
        libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: orphaned bot descendants stay ours
    atexit.register(kill_all)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)


def _preexec(limits: Limits) -> Any:
    libc = _libc()

    def setup() -> None:
        if libc is not None:
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the referee
        if limits.cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))

    return setup


class BotProcess:
    """One launched bot: its process group, capped log, exit status."""

    def __init__(self, spec: BotSpec, argv: list[str], env: dict[str, str], log_path: Path,
                 cwd: Path | None = None, pipe_stdio: bool = False) -> None:
        install_cleanup()
        self.spec = spec
        self.bot_id = env[BOT_MARKER] = secrets.token_hex(8)
        self.log_path = log_path
        self.started = time.monotonic()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self._log_written = 0
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if pipe_stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if pipe_stdio else subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_preexec(spec.limits),
            close_fds=True,
        )
        self.pid = self.proc.pid
        with _lock:
            _live[self.pid] = self
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        if not pipe_stdio:
            self._drain(self.proc.stdout)  # type: ignore[arg-type]
        else:
            self._drain(self.proc.stderr)  # type: ignore[arg-type]

    # -- output ------------------------------------------------------------------
    def _drain(self, stream: IO[bytes]) -> None:
        t = threading.Thread(target=self._copy, args=(stream,), daemon=True, name=f"log-{self.spec.name}")
        t.start()
        self._threads.append(t)

    def _copy(self, stream: IO[bytes]) -> None:
        """Copy the bot's output to the log until EOF or ``kill`` (a grandchild may hold the pipe open)."""
        fd = stream.fileno()
        try:
            while not self._stopping.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.write_log(chunk)
        except (OSError, ValueError):
            pass
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def write_log(self, data: bytes) -> None:
        room = LOG_CAP_BYTES - self._log_written
        if room <= 0:
            return
        try:
            if len(data) > room:
                data = data[:room] + b"\n[log capped at %d bytes]\n" % LOG_CAP_BYTES
            self._log.write(data)
            self._log.flush()
            self._log_written += len(data)
        except (OSError, ValueError):
            pass

    # -- status ----------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_description(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code}"

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.pid)
            return [root, *root.children(recursive=True)]
        except (psutil.Error, OSError):
            return []

    def over_limits(self) -> str | None:
        """A sentence naming the limit the bot's process tree is over, or None."""
        lim = self.spec.limits
        if not (lim.memory_mb or lim.cpu_seconds or lim.processes):
            return None
        procs = self.tree()
        if lim.processes and len(procs) > lim.processes:
            return f"runs {len(procs)} processes, over its limit of {lim.processes} (limits.processes)"
        rss = cpu = 0.0
        for p in procs:
            try:
                rss += p.memory_info().rss
                t = p.cpu_times()
                cpu += t.user + t.system
            except (psutil.Error, OSError):
                continue
        if lim.memory_mb and rss > lim.memory_mb * 1024 * 1024:
            return f"uses {rss / 2**20:.0f} MiB of memory, over its limit of {lim.memory_mb} MiB (limits.memory_mb)"
        if lim.cpu_seconds and cpu > lim.cpu_seconds:
            return f"used {cpu:.1f} s of CPU, over its limit of {lim.cpu_seconds} s (limits.cpu_seconds)"
        return None

    def died_of_limits(self) -> bool:
        """Whether the exit looks like a resource limit (SIGXCPU, or out of memory in the log)."""
        code = self.proc.poll()
        if code == -signal.SIGXCPU:
            return True
        if code is None or not (self.spec.limits.memory_mb or self.spec.limits.cpu_seconds):
            return False
        try:
            tail = self.log_path.read_bytes()[-2000:]
        except OSError:
            return False
        return any(s in tail for s in (b"MemoryError", b"Cannot allocate memory", b"bad_alloc", b"out of memory"))

    def tcp_ports(self) -> set[int]:
        """Remote ports of the TCP connections held by the bot or its descendants."""
        ports: set[int] = set()
        try:
            root = psutil.Process(self.pid)
            for p in [root, *root.children(recursive=True)]:
                for c in p.net_connections(kind="tcp"):
                    if c.raddr:
                        ports.add(c.raddr.port)
        except (psutil.Error, OSError):
            pass
        return ports

    # -- ending ------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the process group and every descendant (also those that left the group)."""
        descendants = self.tree()[1:]
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
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
                os.waitpid(d.pid, 0)
            except (ChildProcessError, OSError):
                pass
        sweep(BOT_MARKER, self.bot_id)  # descendants that left the bot's tree
        self._stopping.set()
        for t in self._threads:
            t.join(timeout=1)
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self._log.close()
        except OSError:
            pass
        with _lock:
            _live.pop(self.pid, None)

    def wait_exit(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False


def launch(spec: BotSpec, endpoint: str, token: str, log_path: Path, cwd: Path | None = None,
           pipe_stdio: bool = False) -> BotProcess:
    """Start a bot with ARENA_ENDPOINT / ARENA_TOKEN set and ``--endpoint E --token T`` appended
    (stdio bots get neither: they talk over their stdin and stdout)."""
    argv = command_line(spec.command)
    env = dict(os.environ)
    env.update(spec.env)
    env[MARKER] = SESSION
    root = _project_root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    if not pipe_stdio:
        env["ARENA_ENDPOINT"] = endpoint
        env["ARENA_TOKEN"] = token
        argv = argv + ["--endpoint", endpoint, "--token", token]
    return BotProcess(spec, argv, env, log_path, cwd=cwd, pipe_stdio=pipe_stdio)
