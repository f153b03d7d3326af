"""Settings shared by the referee and the tournament runner: bots, clocks, failure policy.

``BotSpec`` says how to start one bot (a bundled sample bot's name, a command
line, or ``remote:NAME`` for a bot that connects by itself); ``TimeControl``
holds the clocks of DESIGN 5; ``FailurePolicy`` what the referee does on each
failure kind.  These are plain frozen values: tournament files are read into
them (``arena.tournament.config``) and ``arena play`` builds them from flags.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BUNDLED_BOT_MODULES: dict[str, str] = {"random": "sample_bots.random", "greedy": "sample_bots.greedy"}
BUNDLED_BOTS: frozenset[str] = frozenset(BUNDLED_BOT_MODULES)
FAILURE_KINDS: tuple[str, ...] = (
    "timeout", "crash", "disconnect", "illegal", "malformed", "oversized", "stale", "token", "resource",
)
POLICIES: tuple[str, ...] = ("retry", "default", "forfeit")


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


@dataclass(frozen=True)
class Limits:
    """Resource limits for a bot process (None = no limit)."""

    memory_mb: int | None = None
    cpu_seconds: int | None = None
    processes: int | None = None

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

    def __hash__(self) -> int:  # env is a dict; hash what identifies the bot
        return hash((self.name, self.command, self.cwd, self.transport, self.limits))

    def is_bundled(self, bundled: Collection[str] = BUNDLED_BOTS) -> bool:
        return first_word(self.command) in bundled

    @property
    def remote(self) -> bool:
        """A seat the referee does not launch: the bot connects with its token (``remote:NAME``)."""
        return self.command.startswith("remote:")

    def workdir(self, base_dir: str | Path) -> Path:
        """The folder the bot runs in (``cwd`` resolved against ``base_dir``)."""
        return Path(base_dir) / self.cwd if self.cwd else Path(base_dir)

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "command": self.command, "transport": self.transport}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.env:
            out["env"] = dict(self.env)
        if self.limits.to_data():
            out["limits"] = self.limits.to_data()
        return out


@dataclass(frozen=True)
class TimeControl:
    """Clocks in milliseconds (DESIGN 5): handshake, per decision, bank + increment, grace."""

    start_ms: int = 10000
    decision_ms: int = 1000
    bank_ms: int = 0
    increment_ms: int = 0
    grace_ms: int = 50


@dataclass(frozen=True)
class FailurePolicy:
    """What the referee does on each failure kind: ``retry`` | ``default`` | ``forfeit``.

    - ``retry``: drop the bad message, tell the bot why, ask the same decision
      again; a bot gets at most ``strikes`` retries per game (all kinds
      together), after which a retry-kind failure is handled as ``default``.
    - ``default``: the referee plays the safe legal move for the bot (draw from
      the stock, discard the drawn card).
    - ``forfeit``: the bot loses the game and is placed last.

    Defaults: a bot that sends something wrong but is still talking gets
    another chance (``illegal``, ``malformed``, ``stale`` reply, wrong
    ``token`` = retry); a slow or oversized reply costs the move (``timeout``,
    ``oversized`` = default); a bot that is gone or over its resource limits
    loses the game (``crash``, ``disconnect``, ``resource`` = forfeit) and is
    restarted for its next game.
    """

    timeout: str = "default"
    crash: str = "forfeit"
    disconnect: str = "forfeit"
    illegal: str = "retry"
    malformed: str = "retry"
    oversized: str = "default"
    stale: str = "retry"
    token: str = "retry"
    resource: str = "forfeit"
    strikes: int = 3

    def policy(self, kind: str) -> str:
        if kind not in FAILURE_KINDS:
            raise KeyError(kind)
        return str(getattr(self, kind))
