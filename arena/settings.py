"""Settings shared by the referee and the tournament runner: bots, clocks, failure policy.

``BotSpec`` says how to start one bot (a bundled sample bot's name, a command
line, or ``remote:NAME`` for a bot that connects by itself); ``TimeControl``
holds the clocks and ``FailurePolicy`` what the referee does on each failure
kind (docs/ARCHITECTURE.md section 4).  These are plain frozen values:
tournament files are read into them (``arena.tournament.config``) and
``arena play`` builds them from flags.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena.failures import FAILURE_KINDS as FAILURE_KINDS  # re-exported: the kinds are declared in arena.failures
from arena.failures import KINDS, Kind, Policy
from arena.failures import POLICIES as POLICIES

BUNDLED_BOT_MODULES: dict[str, str] = {"random": "sample_bots.random_bot", "greedy": "sample_bots.greedy",
                                        "greedy-eps10": "sample_bots.greedy_eps10"}
BUNDLED_BOT_MODULES.update({f"house-{lv}": f"sample_bots.house_{lv}" for lv in ("easy", "medium", "hard")})  # arena/house.py
BUNDLED_BOTS: frozenset[str] = frozenset(BUNDLED_BOT_MODULES)
CLOCKS: tuple[str, ...] = ("cpu", "wall")
TRANSPORTS: tuple[str, ...] = ("zmq", "tcp", "stdio")


STDIO_PREFIX = "stdio:"


def split_transport(arg: str, stdio: bool = False) -> tuple[str, str]:
    """A BOT argument as (command, transport): ``stdio:COMMAND`` means the stdio transport."""
    if arg.startswith(STDIO_PREFIX):
        return arg[len(STDIO_PREFIX):].strip(), "stdio"
    return arg, "stdio" if stdio else "zmq"


def first_word(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0] if words else ""


_INTERPRETER = re.compile(r"(python|pypy)[0-9.]*|node(js)?")
_PY_NO_SCRIPT = ("c", "m")                 # python -c CODE / -m MODULE: no script file
_PY_TAKES_ARG = ("-X", "-W", "--check-hash-based-pycs")
_NODE_NO_SCRIPT = ("-e", "--eval", "-p", "--print", "-i", "--interactive", "-", "--test")
_NODE_TAKES_ARG = ("-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                   "--input-type", "--title", "--env-file")
_NODE_SUFFIXES = ("", ".js", ".mjs", ".cjs")


def command_problem(command: str, workdir: Path, env: Mapping[str, str] | None = None,
                    bundled: Collection[str] = BUNDLED_BOTS) -> str | None:
    """Why ``command`` cannot be started in ``workdir``, or None when it can.

    A bundled bot's name is fine; otherwise the first word must be an executable
    file: found on PATH (the bot's own PATH when its ``env`` sets one) when it
    has no ``/``, else relative to ``workdir``.  For a known interpreter
    (python, node) the script it is given must exist too.
    """
    if "\0" in command:
        return "expected a command line without NUL characters"
    try:
        words = shlex.split(command)
    except ValueError as e:
        return f"expected a command line; cannot split {command!r}: {e}"
    if not words:
        return "expected a non-empty command"
    if words[0] in bundled:
        return None
    problem, program = _program_problem(words[0], workdir, env, bundled)
    if problem:
        return problem
    return _script_problem(Path(program).name, words[1:], workdir)


def _program_problem(first: str, workdir: Path, env: Mapping[str, str] | None,
                     bundled: Collection[str]) -> tuple[str | None, str]:
    """(why the program cannot run, or None; its resolved path)."""
    if "/" not in first:
        search = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
        found = shutil.which(first, path=search)
        if found:
            return None, found
        hint = f"; to run the file in {str(workdir)!r}, write './{first}'" if (workdir / first).is_file() else ""
        return f"{first!r} not found: not on PATH and not a bundled bot ({', '.join(sorted(bundled))}){hint}", first
    path = workdir / first
    if not path.exists():
        return f"{first!r} not found: not a file in {str(workdir)!r}", first
    if path.is_dir():
        return f"{str(path)!r} is a folder, not a program", first
    if not os.access(path, os.X_OK):
        return f"{str(path)!r} is not executable (chmod +x it, or start it with its interpreter)", first
    return None, str(path)


def _script_problem(program: str, args: list[str], workdir: Path) -> str | None:
    """For python and node: why the script they are given is missing, or None."""
    if not _INTERPRETER.fullmatch(program):
        return None
    node = program.startswith("node")
    script = _node_script(args) if node else _python_script(args)
    if script is None:
        return None
    base = workdir / script
    if any(Path(str(base) + suffix).exists() for suffix in (_NODE_SUFFIXES if node else ("",))):
        return None
    return f"{program} would run {script!r}, which is not a file in {str(workdir)!r}"


def program_file(command: str, workdir: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The file a command line runs: the script it gives python or node, else its executable
    (found as ``command_problem`` finds it); None when there is none (``python -c``, a missing file)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    problem, program = _program_problem(words[0], workdir, env, ())
    if problem:
        return None
    name = Path(program).name
    if _INTERPRETER.fullmatch(name):
        node = name.startswith("node")
        script = _node_script(words[1:]) if node else _python_script(words[1:])
        if script is None:
            return None
        base = workdir / script
        return next((p for suffix in (_NODE_SUFFIXES if node else ("",)) if (p := Path(str(base) + suffix)).is_file()),
                    None)
    return Path(program)


def _python_script(args: list[str]) -> str | None:
    """The script argument of a python command line (None with -c, -m, or none given)."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-":
            return None
        if word == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if not word.startswith("-"):
            return word
        if word in _PY_TAKES_ARG:
            i += 1
        elif not word.startswith(("--", "-X", "-W")) and any(c in word[1:] for c in _PY_NO_SCRIPT):
            return None
        i += 1
    return None


def _node_script(args: list[str]) -> str | None:
    """The script argument of a node command line (None with -e, -p, or none given)."""
    i = 0
    while i < len(args):
        word = args[i]
        if word in _NODE_NO_SCRIPT:
            return None
        if word == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if not word.startswith("-"):
            return word
        if word in _NODE_TAKES_ARG:
            i += 1
        i += 1
    return None


# Variables a bot's ``env`` may not set: they change how programs of ours start (the dynamic loader
# and libc read them in the sandbox's gate too; glibc drops them for setuid programs for that reason),
# or they are the arena's own (the token, the endpoint, the data folder, the markers).
UNSAFE_ENV_NAMES = ("GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH",
                    "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR", "MALLOC_CHECK_",
                    "MALLOC_PERTURB_", "GLIBC_TUNABLES", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT")
UNSAFE_ENV_PREFIXES = ("LD_", "ARENA_")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def env_problem(key: object, value: object) -> str | None:
    """Why ``key = value`` cannot be put in a bot's environment, or None."""
    if not isinstance(key, str) or not key or "=" in key or "\0" in key:
        return f"expected a variable name without '=' or NUL characters, got {key!r}"
    if not _ENV_NAME.fullmatch(key):
        return f"expected a variable name of letters, digits and '_' (not starting with a digit), got {key!r}"
    if key in UNSAFE_ENV_NAMES or key.startswith(UNSAFE_ENV_PREFIXES):
        return (f"{key} may not be set for a bot: it changes how the arena's own programs start (or is the "
                "arena's own variable); remove it from env")
    if not isinstance(value, str):
        return None  # the caller reports the type
    if "\0" in value:
        return "expected a value without NUL characters"
    return None


@dataclass(frozen=True)
class Limits:
    """Resource limits for a bot process (None = no limit; ``data_mb`` None = the default quota of
    its data folder, ``launch.DATA_MB``)."""

    memory_mb: int | None = None
    cpu_seconds: int | None = None
    processes: int | None = None
    data_mb: int | None = None

    def to_data(self) -> dict[str, int]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class BotSpec:
    """One ``[[bots]]`` entry. ``env`` is a plain dict: do not mutate it."""

    name: str
    command: str
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    transport: str = "zmq"
    limits: Limits = Limits()
    data: str | None = None  # a folder the bot may write, kept between its games (relative to base_dir)

    def __hash__(self) -> int:  # env is a dict; hash what identifies the bot
        return hash((self.name, self.command, self.cwd, self.transport, self.limits, self.data))

    def is_bundled(self, bundled: Collection[str] = BUNDLED_BOTS) -> bool:
        return first_word(self.command) in bundled

    @property
    def speaks(self) -> str:
        """The transport the bot runs on: the declared one, except that a bundled bot declared on
        ZeroMQ (the default) speaks stdio, the same messages with no gate and no ZeroMQ between it and
        the referee: half the CPU of a decision, twice the games a second (README Benchmarks)."""
        return "stdio" if self.transport == "zmq" and self.is_bundled() else self.transport

    @property
    def remote(self) -> bool:
        """A seat the referee does not launch: the bot connects with its token (``remote:NAME``)."""
        return self.command.startswith("remote:")

    def workdir(self, base_dir: str | Path) -> Path:
        """The folder the bot runs in (``cwd`` resolved against ``base_dir``)."""
        return Path(base_dir) / self.cwd if self.cwd else Path(base_dir)

    def datadir(self, base_dir: str | Path) -> Path | None:
        """The bot's writable folder (``data`` resolved against ``base_dir``), if it has one."""
        return Path(base_dir) / self.data if self.data else None

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "command": self.command, "transport": self.transport}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.env:
            out["env"] = dict(self.env)
        if self.limits.to_data():
            out["limits"] = self.limits.to_data()
        if self.data is not None:
            out["data"] = self.data
        return out


@dataclass(frozen=True)
class TimeControl:
    """Clocks in milliseconds (docs/ARCHITECTURE.md section 4): handshake, per decision, bank + increment, grace."""

    start_ms: int = 10000
    decision_ms: int = 1000
    bank_ms: int = 0
    increment_ms: int = 0
    grace_ms: int = 50
    clock: str = "wall"  # wall: a decision is charged its elapsed time; cpu: the CPU time of the bot's processes
    wall_ms: int = 0  # cpu clock only: a decision also ends after this much wall time (0: 4x its limit, at least 1 s)


@dataclass(frozen=True)
class FailurePolicy:
    """What the referee does on each failure kind: ``retry`` | ``default`` | ``forfeit``.

    - ``retry``: drop the bad message, tell the bot why, ask the same decision
      again; a bot gets at most ``strikes`` retries per game (all kinds
      together), after which a retry-kind failure is handled as ``default``.
    - ``default``: the referee plays the safe legal move for the bot (draw from
      the stock, discard the drawn card).
    - ``forfeit``: the bot loses the game and is placed last.

    One field per row of ``arena.failures.TABLE``, defaulting to its ``default``:
    a bot that sends something wrong but is still talking gets another chance
    (``illegal``, ``malformed``, ``stale`` reply, wrong ``token`` = retry); a
    slow or oversized reply costs the move (``timeout``, ``oversized`` =
    default); a bot that is gone or over its resource limits loses the game
    (``crash``, ``disconnect``, ``resource`` = forfeit).
    """

    timeout: Policy = KINDS["timeout"].default
    crash: Policy = KINDS["crash"].default
    disconnect: Policy = KINDS["disconnect"].default
    illegal: Policy = KINDS["illegal"].default
    malformed: Policy = KINDS["malformed"].default
    oversized: Policy = KINDS["oversized"].default
    stale: Policy = KINDS["stale"].default
    token: Policy = KINDS["token"].default
    resource: Policy = KINDS["resource"].default
    strikes: int = 3

    def policy(self, kind: Kind) -> Policy:
        """The policy for ``kind`` (KeyError for a kind not in ``arena.failures.TABLE``)."""
        if kind not in KINDS:
            raise KeyError(kind)
        value: Policy = getattr(self, kind)
        return value
