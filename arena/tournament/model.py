"""The tournament's value types: ``Tournament`` (a validated file, every default filled in, rules
fully resolved, and its resolved form ``to_toml_data``), ``Executor`` (where its games are played),
and the constants and choices the file's keys take."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import arena.settings as _settings
from arena.settings import (
    BotSpec,
    FailurePolicy,
    Limits,
    TimeControl,
)

if TYPE_CHECKING:  # types only: the command line reads MAX_CONCURRENCY here at start, and nothing else
    from arena.rules.options import RuleSet
    from arena.tournament.growth import Generation

RESOLVED_FILE = "tournament.toml"
SEATINGS: tuple[str, ...] = ("all", "williams", "rotate")
FORMATS: tuple[str, ...] = ("round_robin", "gauntlet", "swiss", "adaptive", "match")
LEAGUES: tuple[str, ...] = ("swiss", "adaptive")  # tables chosen round by round, within a ``games`` budget
TWIN_SUITS: tuple[str, ...] = ("same", "permute")
TRANSPORTS: tuple[str, ...] = _settings.TRANSPORTS
# Tournaments charge each decision the CPU time of the bot's processes: a busy machine (more games
# than cores, a neighbour that floods its own socket) then costs an honest bot nothing.
TOURNAMENT_TIME = TimeControl(clock="cpu")
MAX_GAMES = 1_000_000        # default of ``max_games``: more games than this is refused unless raised
MAX_CONCURRENCY = 256        # games at once: each is a worker process with its own bots
MAX_FILE_BYTES = 16 << 20    # a tournament file is a few KiB; refuse to read a huge one


# -- the value ------------------------------------------------------------------

SHIPS: tuple[str, ...] = ("path", "upload")


@dataclass(frozen=True)
class Executor:
    """Where a run plays its games: local worker processes, or a Dask cluster (``cluster``, a scheduler address);
    ``upload``: bots whose ``cwd`` folder the coordinator ships to every worker (``ship = "upload"``)."""

    cluster: str | None = None
    upload: tuple[str, ...] = ()
    listen: str = "127.0.0.1:5555"  # remote bots (remote = true): the first one's address, then port + 1; loopback
    # unless the file names another interface (as ``arena play --listen`` defaults to loopback)
    remote_wait_s: int = 120       # how long a game waits for an absent remote bot


@dataclass(frozen=True)
class Tournament:
    """A validated tournament file with every default filled in."""

    name: str
    variant: str
    rules: RuleSet
    bots: tuple[BotSpec, ...]
    seats: int
    deal_sets: int = 2
    seating: str = "all"
    max_tables: int | None = None
    time: TimeControl = TOURNAMENT_TIME  # the CPU clock, as a file without [time] gets
    failures: FailurePolicy = FailurePolicy()
    concurrency: int = 1
    seed: int = 1
    output: str = ""
    ladder_points: bool = False
    records: bool = True
    base_dir: str = "."
    max_games: int = MAX_GAMES
    sandbox: bool = True
    twin_suits: str = "same"
    format: str = "round_robin"
    challengers: tuple[str, ...] = ()   # gauntlet only: the bots every table is built around
    history: tuple[Generation, ...] = ()  # the schedules before --resume grew it (arena.tournament.growth)
    executor: Executor = Executor()     # not in to_toml_data: the same games wherever they are played
    games: int | None = None            # swiss and adaptive only: the game budget (rounded up to whole rounds)
    deals: str | None = None            # a deal suite's file (arena.tournament.deals): the cards, not secret.key
    top: int | None = None              # adaptive only: aim at the top K (league_objective), uneven seats
    top_order: bool = False             # with top: their order too, not only who they are
    uneven: bool = False                # adaptive only: tables by expected information, unequal seats (implied by top)
    limits: Limits = field(default_factory=Limits)  # [limits]: every bot's default and the ceiling of its own
    # where this run read it and what else the arena writes outside the results folder (the --events
    # file): never hashed as part of a bot's program (fingerprints), never written to the resolved file
    deal_key: bytes | None = field(default=None, compare=False, repr=False)  # the deal suite's 32 bytes, once loaded
    source: str = field(default="", compare=False)
    arena_files: tuple[str, ...] = field(default=(), compare=False)

    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    @property
    def output_dir(self) -> Path:
        return Path(self.base_dir) / self.output

    def bot(self, name: str) -> BotSpec:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def to_toml_data(self) -> dict[str, Any]:
        """The resolved form: every value explicit, the rules fully resolved."""
        out: dict[str, Any] = {
            "name": self.name,
            "variant": self.variant,
            "seats": self.seats,
            "format": self.format,
        }
        if self.format in ("gauntlet", "match"):
            out["challengers"] = list(self.challengers)
        if self.games is not None:
            out["games"] = self.games
        if self.top is not None:
            out["top"] = self.top
            out["top_order"] = self.top_order
        if self.uneven:
            out["uneven"] = True
        if self.limits.to_data():
            out["limits"] = self.limits.to_data()
        out |= {
            "deal_sets": self.deal_sets,
            "seating": self.seating,
            "twin_suits": self.twin_suits,
        }
        if self.max_tables is not None:
            out["max_tables"] = self.max_tables
        out |= {
            "concurrency": self.concurrency,
            "seed": self.seed,
            "output": self.output,
            "ladder_points": self.ladder_points,
            "records": self.records,
            "base_dir": self.base_dir,
            "max_games": self.max_games,
            "sandbox": self.sandbox,
            "rules": self.rules.to_data(),
            "time": asdict(self.time),
            "failures": asdict(self.failures),
            "bots": [b.to_data() for b in self.bots],
        }
        if self.deals is not None:
            out["deals"] = self.deals
            if self.deal_key is not None:  # which suite, so a folder is never resumed with other cards
                from arena.tournament.deals import fingerprint

                out["deals_id"] = fingerprint(self.deal_key)
        if self.history:
            out["history"] = [g.to_data() for g in self.history]
        return out
