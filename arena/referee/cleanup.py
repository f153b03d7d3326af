"""Nothing outlives the referee: the registry of live compartments, the session markers, the
clean-up at exit and on SIGTERM/SIGHUP, the child subreaper and the undertaker.

Every bot and everything it forks carries the referee's ``ARENA_SESSION`` marker; ``kill_all``
kills every descendant with it, and at the end the referee also kills its children in sessions not
its own (bots' orphans, adopted by the subreaper).  ``sweep(marker)`` does the same for leftovers
of an earlier, killed run.  A referee killed outright runs none of that: its bots die by
``PR_SET_PDEATHSIG`` (``die_with_parent``), and the undertaker (``undertaker.py``, one per
referee process) kills whatever carries the referee's ``ARENA_REFEREE`` marker after it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol

import psutil

from arena.referee import cgroups, datavolume


class Killable(Protocol):
    """What the registry holds: a started compartment (``compartment.BotProcess``)."""

    pid: int

    def kill(self) -> None: ...


_live: dict[int, Killable] = {}
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


def register(proc: Killable) -> None:
    """Count a started compartment among those ``kill_all`` kills."""
    with _lock:
        _live[proc.pid] = proc


def unregister(proc: Killable) -> None:
    with _lock:
        _live.pop(proc.pid, None)


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


def _at_exit(from_signal: bool = False) -> None:
    kill_all()
    _kill_adopted()
    # The bots are gone: their data folders' volumes are copied back.  A signal may have come in
    # the middle of a copy, whose lock this process holds: then the undertaker does it.
    datavolume.release_mine(wait=not from_signal)
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
    _at_exit(from_signal=True)
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
            # No marker of ours (no sweep kills it before its time); the volumes' registry, and who we are.
            env={"ARENA_VOLUME_DIR": str(datavolume.VOLUMES), "ARENA_UNDERTAKER_OF": ":".join(map(str, datavolume.me()))})
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
