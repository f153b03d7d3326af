"""Launching a bot: its command line, its sandbox's folders (the working folder, the program file,
the data folder), its environment and its channel (the endpoint the referee holds for a zmq bot,
a gate for a tcp one, a stdio bot's own pipes), then its compartment (``compartment.BotProcess``).

The compartment's parts live apart: the kill registry, signals, subreaper and undertaker in
``cleanup.py``, the log file and its copier in ``botlog.py``, the /proc readers in ``procfs.py``,
the limits watcher and the data folder's measure in ``limits_watch.py``, what a command line
names in ``program.py``.  The names most callers use are re-exported here.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import secrets
import shlex
import site
import sys
from pathlib import Path
from typing import Any

from arena.referee.botlog import LOG_CAP_BYTES, log_path, log_tail, rotated
from arena.referee.cleanup import (
    BOT_MARKER,
    MARKER,
    REFEREE_MARKER,
    RUN_MARKER,
    SESSION,
    die_with_parent,
    install_cleanup,
    kill_all,
    private_folder,
    sweep,
)
from arena.referee.compartment import BotProcess
from arena.referee.endpoint import Endpoint
from arena.referee.limits_watch import DATA_ENTRIES, DATA_MB, WATCHER, data_quota, data_use, folder_bytes
from arena.referee.procfs import deleted_open_bytes, tree_cpu_seconds
from arena.referee.program import check_readable, program_file, world_readable
from arena.settings import BUNDLED_BOT_MODULES, BotSpec

__all__ = [  # re-exported: the compartment's names callers know from here
    "BOT_MARKER",
    "DATA_ENTRIES",
    "DATA_MB",
    "LOG_CAP_BYTES",
    "MARKER",
    "REFEREE_MARKER",
    "RUN_MARKER",
    "SESSION",
    "WATCHER",
    "BotProcess",
    "bundled_path",
    "command_line",
    "data_quota",
    "data_use",
    "deleted_open_bytes",
    "die_with_parent",
    "folder_bytes",
    "gate_argv",
    "gate_program",
    "install_cleanup",
    "kill_all",
    "launch",
    "log_path",
    "log_tail",
    "private_folder",
    "rotated",
    "sweep",
    "tree_cpu_seconds",
]


def command_line(command: str) -> list[str]:
    """The argv for a bot: a bundled name runs its module with this Python, without ``site`` (-S:
    the .pth files of the machine cost most of a Python start) and without the working folder on
    its path (-P), importing from ``bundled_path()`` given on its command line; any other command
    is the bot's own, word for word."""
    words = shlex.split(command)
    if len(words) == 1 and words[0] in BUNDLED_BOT_MODULES:
        first, after = bundled_path()
        boot = (f"import sys; sys.path[:0] = {list(first)!r}; sys.path += {list(after)!r}; import runpy; "
                f"runpy.run_module({BUNDLED_BOT_MODULES[words[0]]!r}, run_name='__main__', alter_sys=True)")
        return [sys.executable, "-S", "-P", "-c", boot]
    return words


@functools.lru_cache(maxsize=1)
def bundled_path() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Where a bundled bot imports from: (before the standard library: the project; after it, as
    ``site`` puts them: the site-packages folders, and the folder of each package the sample bots
    import from outside the project, wherever a .pth file put it).  All lie in the sandbox's view
    already (the project is exposed to bundled bots, the rest is under the Python we run)."""
    after = [p for p in site.getsitepackages() if os.path.isdir(p)]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        after.append(site.getusersitepackages())
    for name in BUNDLED_BOT_IMPORTS:
        spec = importlib.util.find_spec(name)
        where = spec.submodule_search_locations if spec is not None else None
        origin = spec.origin if spec is not None else None
        folder = os.path.dirname(list(where)[0]) if where else os.path.dirname(origin) if origin else None
        if folder is not None and folder not in after:
            after.append(folder)
    return (_project_root(),), tuple(after)


BUNDLED_BOT_IMPORTS = ("zmq", "msgspec", "typing_extensions")  # what the sample bots import from outside the project


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


GATE = str(Path(__file__).with_name("gate.py"))  # speaks ZMTP itself
GATE_LIBZMQ = str(Path(__file__).with_name("gate_libzmq.py"))  # CURVE, or ARENA_GATE=libzmq (kept for a release)


def gate_program(curve: bool = False) -> str:
    """The gate's file: the ZMTP gate, or the libzmq one for a CURVE seat or when ``ARENA_GATE=libzmq``."""
    return GATE_LIBZMQ if curve or os.environ.get("ARENA_GATE") == "libzmq" else GATE


def gate_files(program: str) -> list[Path]:
    """What a sandbox shows of the arena for a gate: its file, and the ZMTP gate's codec and router beside it."""
    return [Path(program), *([Path(program).with_name(f) for f in ("zmtp.py", "zmtp_router.py")] if program == GATE else [])]


def gate_argv(curve: bool = False, sandbox: bool = False) -> list[str]:
    """The gate's command line: -I in a sandbox (it reads no PYTHON* variable and nothing from the
    bot's folders), -S for the ZMTP gate (standard library only: no ``site``, whose .pth files cost
    most of a Python start; the libzmq gate needs site-packages)."""
    program = gate_program(curve)
    return [sys.executable, *(["-I"] if sandbox else []), *(["-S"] if program == GATE else []), program]


SANDBOX_ENDPOINT = "ipc:///tmp/arena-bot.sock"  # sandbox.BOT_SOCKET


def direct_endpoint(spec: BotSpec) -> bool:
    """Whether the referee holds the bot's endpoint itself (``arena.referee.endpoint``): a bot on the
    default ``zmq`` transport, unless ``ARENA_GATE`` asks for a gate process (``zmtp``: the ZMTP gate,
    ``libzmq``: the libzmq one)."""
    return spec.speaks == "zmq" and not os.environ.get("ARENA_GATE")


def launch(spec: BotSpec, token: str, log_path: Path, cwd: Path | None = None, *, sandbox: bool = True,
           hide: tuple[Path, ...] = (), private_dir: Path | None = None, listen: str | None = None,
           data: Path | None = None, curve_secret: str | None = None) -> BotProcess:
    """Start a bot in its compartment: its sandbox (unless ``sandbox`` is False), its gate (unless it
    speaks stdio), the token in ``ARENA_TOKEN`` (never on a command line), ``--endpoint E`` appended.

    A remote seat (``listen`` given) is a gate alone, listening on ``listen`` for the bot to connect
    (a CURVE server with ``curve_secret``, SPEC 12).
    ``private_dir`` holds the socket of the endpoint the referee holds for a zmq bot (bound into its
    sandbox), and a gate's when there is no sandbox to hold it; ``data`` is the
    bot's writable folder (made if missing), passed to it as ``ARENA_DATA``.
    """
    if listen is not None:
        env = {**os.environ, MARKER: SESSION, "ARENA_TOKEN": token, "ARENA_GATE_BIND": listen}
        if curve_secret:
            env["ARENA_GATE_CURVE"] = curve_secret
        return BotProcess(spec, gate_argv(bool(curve_secret)), env, log_path, None, infra_depth=1)
    program = command_line(spec.command)
    if not program:
        raise ValueError("the bot command is empty")
    env, inside = _bot_environment(spec, sandbox)
    who = None
    if sandbox:
        from arena.referee import identity

        if identity.needed():  # root: the compartment runs as a host user of its own, never root
            who = identity.allocate(f"data:{os.path.abspath(data)}" if data is not None else None)
    data_fd = None
    if data is not None:
        data = Path(os.path.abspath(data))
        env["ARENA_DATA"] = str(data)
        if not sandbox:
            os.close(_data_folder(data, None, spec, cwd, hide))
    argv, depth, gate = program, 0, gate_program()
    socket_path: Path | None = None  # of the endpoint the referee holds for the bot: listened on just before the start
    if spec.speaks == "stdio":
        if spec.is_bundled():
            argv = [*program, "--stdio"]  # protocol.client's stdio loop
    elif direct_endpoint(spec):  # the referee listens for the bot itself: no gate
        assert private_dir is not None, "a bot's endpoint needs a private folder for its socket"
        socket_path = private_dir / f"{secrets.token_hex(6)}.sock"
        env["ARENA_TOKEN"] = token
        env["ARENA_ENDPOINT"] = SANDBOX_ENDPOINT if sandbox else f"ipc://{socket_path}"
        argv = [*program, "--endpoint", env["ARENA_ENDPOINT"]]
    else:
        env["ARENA_TOKEN"] = token
        if spec.transport == "tcp":
            env["ARENA_GATE_BIND"] = "tcp://127.0.0.1:0"
        elif sandbox:
            env["ARENA_GATE_BIND"] = SANDBOX_ENDPOINT
        else:
            assert private_dir is not None, "a gate without a sandbox needs a private folder for its socket"
            env["ARENA_GATE_BIND"] = f"ipc://{private_dir}/{secrets.token_hex(6)}.sock"
        argv, depth = [*gate_argv(sandbox=sandbox), *program], 1
    if sandbox:
        from arena.referee import sandbox as sb

        root = Path(_project_root())
        trusted = spec.is_bundled()  # the sample bots run the engine's own policies
        workdir, folders, files = _bot_folders(spec, program, cwd, tuple(hide))
        if who is not None:
            check_readable(sb.program_folders(program, workdir, files=True))
        data_fd = _data_folder(data, who, spec, cwd, hide) if data is not None else None
        gated = spec.speaks != "stdio" and socket_path is None
        try:
            argv = sb.wrap(argv, workdir, hide, expose=[*(gate_files(gate) if gated else []), *([root] if trusted else [])],
                           as_pid_1=gated,  # the gate is PID 1: orphans become its children
                           client_dir=None if trusted else root / "protocol", folders=folders, files=files,
                           tmp_bytes=(spec.limits.memory_mb or 256) << 20, writable=data, writable_fd=data_fd,
                           identity=who, bot_env=inside, socket=socket_path)
        except BaseException:
            if data_fd is not None:
                os.close(data_fd)
            raise
        # bwrap, then its PID 1 (the gate, or bwrap's own init for a stdio bot); as root a first
        # bwrap (root's, building the view) comes before
        depth = 2 if who is None else 3
    try:  # the sandbox binds the data folder from this descriptor (opened without following links)
        endpoint = Endpoint(socket_path, token) if socket_path is not None else None  # BotProcess closes it if it fails
        return BotProcess(spec, argv, env, log_path, cwd, infra_depth=depth, data=data,
                          pass_fds=() if data_fd is None else (data_fd,),
                          data_volume=data_fd is not None and _is_volume_fd(data_fd, data), endpoint=endpoint)
    finally:
        if data_fd is not None:
            os.close(data_fd)


def _bot_folders(spec: BotSpec, program: list[str], cwd: Path | None,
                 hide: tuple[Path, ...] = ()) -> tuple[Path, list[Path], list[Path]]:
    """(the working folder, the bot's own folders, single files) a sandboxed bot sees.

    A tournament's bot (``cwd`` given) sees its ``cwd`` folder; one without ``cwd`` an empty working
    folder and only its program file (``program_file``) when anyone may read it and it lies in no
    hidden folder (results, logs).
    A bot of ``arena play`` or ``check-bot`` (no ``cwd``: the command was typed by the organiser)
    runs in the current folder and sees the folders of the files its command line names."""
    from arena.referee import datafolder
    from arena.referee import sandbox as sb

    if cwd is None:
        here = Path.cwd()
        return here, sb.program_folders(program, here), []
    if spec.cwd is not None:
        # As at validate, now: a folder on the way swapped for a link since would show another folder.
        rel = Path(spec.cwd)
        base = Path("/") if rel.is_absolute() else Path(*cwd.parts[:len(cwd.parts) - len(rel.parts)])
        if (link := datafolder.link_on_way(base, spec.cwd)) is not None:
            raise ValueError(f"the bot's folder {str(cwd)!r} leads through {str(link)!r}, a symbolic link now (it "
                             "was not when the tournament was checked); the sandbox would show the bot wherever "
                             "it points")
        return cwd, [cwd], []
    found = program_file(program, cwd)
    hidden = [Path(os.path.abspath(h)).resolve() for h in hide]
    files = [found] if found is not None and world_readable(found, cwd.resolve()) \
        and not any(found.is_relative_to(h) for h in hidden) else []
    return cwd, [], files


def _data_folder(data: Path, who: Any, spec: BotSpec, cwd: Path | None, hide: tuple[Path, ...]) -> int:
    """A descriptor of the bot's data folder ``data`` (made if missing), checked again here
    (``datafolder``: a tournament could reach this another way than through ``validate``), opened
    name by name without following links from its anchor (the tournament's folder when ``data`` ends
    with the bot's ``data`` path, else its parent) and handed over to ``who`` (0700) when given."""
    from arena.referee import datafolder

    names = [data.name]
    if spec.data is not None:
        problem = datafolder.path_problem(spec.data)
        if problem is not None:
            raise ValueError(f"the bot's data folder: {problem}")
        given = datafolder.names(spec.data)
        if data.parts[-len(given):] == tuple(given):
            names = given
    anchor = Path(*data.parts[:-len(names)])
    forbidden = [("a folder hidden from bots (results, logs)", Path(h)) for h in hide]
    why = datafolder.collision(data, forbidden, own=[cwd] if cwd is not None else [])
    if why is not None:
        raise ValueError(f"the bot's data folder {str(data)!r} {why}; expected a folder of its own")
    fd = datafolder.open_folder(anchor, names)
    if who is not None:
        from arena.referee import identity

        try:
            try:
                if not _is_volume_fd(fd, data):  # a live volume's files are its bot's already: not walked again
                    identity.hand_over(fd, who, str(data))
            except RecursionError:  # a folder deeper than identity.MAX_DEPTH slipped by: the bot's start fails
                raise ValueError(f"the bot's data folder {str(data)!r} nests folders too deep to hand over to its "
                                 "user; remove the deep folders") from None
            if _volume(fd, data, spec, who):  # now a mount over the folder: open its root
                os.close(fd)
                fd = -1
                fd = datafolder.open_folder(anchor, names)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            raise
    return fd


_volume_warned = False


def _volume(fd: int, data: Path, spec: BotSpec, who: Any) -> bool:
    """Make the data folder open as ``fd`` a volume of its quota (``datavolume``) if it is not one
    yet; True when it was mounted now.  Where the machine refuses, one warning says the watcher
    measures the folder instead."""
    global _volume_warned
    from arena.referee import datavolume

    if not datavolume.enabled():
        return False
    mounted = datavolume.is_volume(fd, str(data))
    try:
        datavolume.acquire(fd, str(data), data_quota(spec.limits), who.uid, who.gid)
    except OSError as e:
        if not _volume_warned:
            _volume_warned = True
            print(f"arena: warning: a data folder could not be made a volume of its quota ({e}); its size is "
                  "measured by the limits watcher instead (see SECURITY.md)", file=sys.stderr)
        return False
    return not mounted


def _is_volume_fd(fd: int, data: Path | None) -> bool:
    from arena.referee import datavolume

    return data is not None and datavolume.is_volume(fd, str(data))


def _bot_environment(spec: BotSpec, sandbox: bool) -> tuple[dict[str, str], dict[str, str]]:
    """(the launcher's environment, the variables set inside the sandbox only).

    A sandboxed bot's launcher gets a short environment of ours, never a variable from the bot's
    ``env``: those, and the client library on PYTHONPATH (the sample bots the project root), are
    set inside the sandbox only (``sandbox.wrap(bot_env=...)``).  A bot run without a sandbox is
    trusted with ours and its own."""
    from arena.settings import env_problem

    root = _project_root()
    if sandbox:
        from arena.referee import sandbox as sb

        for k, v in spec.env.items():
            problem = env_problem(k, v)
            if problem:
                raise ValueError(f"env {k}: {problem}")
        env = sb.environment({})
        inside = dict(spec.env)
        lib = root if spec.is_bundled() else sb.CLIENT_DIR
        inside["PYTHONPATH"] = lib + (os.pathsep + inside["PYTHONPATH"] if inside.get("PYTHONPATH") else "")
    else:
        env = {**os.environ, **spec.env}
        inside = {}
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env[MARKER] = SESSION
    env.pop("ARENA_ENDPOINT", None)
    return env, inside
