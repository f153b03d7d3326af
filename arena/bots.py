"""Bot processes: launching, output capture, resource limits, and killing them all.

Every bot runs in its own process group (``start_new_session``) and, on Linux,
gets SIGKILL if the referee dies (``PR_SET_PDEATHSIG``).  Its stdout and
stderr go to one log file, capped in size by a reader thread that keeps
draining the pipe (so a chatty bot never blocks, and never fills the disk).
``kill`` ends the whole group and any descendant that left it; a registry
kills every live bot at interpreter exit and on SIGTERM/SIGINT, so nothing
survives the referee.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import resource
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


def kill_all() -> None:
    """Kill every bot process this interpreter started and has not reaped."""
    with _lock:
        procs = list(_live.values())
    for p in procs:
        p.kill()


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
    atexit.register(kill_all)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)


def _preexec(limits: Limits) -> Any:
    libc = None
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL("libc.so.6", use_errno=True)
        except OSError:
            libc = None

    def setup() -> None:
        if libc is not None:
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the referee
        if limits.memory_mb:
            b = limits.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        if limits.cpu_seconds:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        if limits.processes:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

    return setup


class BotProcess:
    """One launched bot: its process group, capped log, exit status."""

    def __init__(self, spec: BotSpec, argv: list[str], env: dict[str, str], log_path: Path,
                 cwd: Path | None = None, pipe_stdio: bool = False) -> None:
        install_cleanup()
        self.spec = spec
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
        try:
            while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
                self.write_log(chunk)
        except (OSError, ValueError):
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
        descendants: list[psutil.Process] = []
        try:
            descendants = psutil.Process(self.pid).children(recursive=True)
        except (psutil.Error, OSError):
            pass
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
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout=1)
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
    root = _project_root()
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    if not pipe_stdio:
        env["ARENA_ENDPOINT"] = endpoint
        env["ARENA_TOKEN"] = token
        argv = argv + ["--endpoint", endpoint, "--token", token]
    return BotProcess(spec, argv, env, log_path, cwd=cwd, pipe_stdio=pipe_stdio)
