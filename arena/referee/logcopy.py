"""A bot's log copier: a process of the bot's compartment that copies its output to its capped log.

Usage (by ``launch.BotProcess`` only): ``python -I -S logcopy.py LOG CAP`` with the bot's output pipe
as stdin.  It runs in the compartment's cgroup, so the CPU a flood of output costs is the bot's own
(its CPU clock, its limit, its CPU share), never the referee's.  The log (created 0600) holds the
latest output: at ``CAP`` bytes it moves to ``LOG.1`` (replacing the one before) and a new one
starts.  It ends at the end of the pipe (every writer gone), or with its parent (``PR_SET_PDEATHSIG``,
set by the referee before exec).  Standard library only: it must start fast.
"""

from __future__ import annotations

import os
import sys

CHUNK = 1 << 16


def _open(path: str) -> int:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def copy(source: int, path: str, cap: int) -> None:
    """Copy ``source`` to ``path`` until its end, keeping at most ``cap`` bytes a file."""
    out = _open(path)
    try:
        while True:
            chunk = os.read(source, CHUNK)
            if not chunk:
                return
            chunk = chunk[-cap:]
            size = os.fstat(out).st_size  # the referee appends its own lines too
            if size and size + len(chunk) > cap:
                os.close(out)
                os.replace(path, path + ".1")
                out = _open(path)
            os.write(out, chunk)
    finally:
        os.close(out)


def main() -> int:
    try:
        copy(0, sys.argv[1], int(sys.argv[2]))
    except (OSError, ValueError):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
