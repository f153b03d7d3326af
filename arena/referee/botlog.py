"""A bot's log file: where it is, its size cap and rotation (``NAME.log.1``), its last lines, and
the copier process that drains the bot's output into it (``logcopy.py``, in the bot's cgroup: a
flood of output costs the bot's CPU, not the referee's, and never blocks the bot)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from arena.referee import cgroups
from arena.referee.cleanup import MARKER, REFEREE_MARKER, SESSION, _libc, die_with_parent

LOG_CAP_BYTES = 1 << 20  # per bot log file; past it the file becomes NAME.log.1 and a new one starts


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
