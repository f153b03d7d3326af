"""The seam between the runner and what plays its games (docs/ARCHITECTURE.md section 5).

An executor is the local worker processes (``local_pool.LocalPool``) or a Dask cluster
(``executor_dask.DaskPool``); both are an ``Executor`` and report the same typed
events: a game ``Started`` on a worker, ``Done`` with its journal entry, or
``Failed`` inside the referee (a bug, never a bot's failure).  What a worker
does with one game is here too (``play_spec``, then ``entry_of`` where the key
is), so both executors import this module and neither imports the other.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import psutil

from arena.errors import ArenaError
from arena.failures import RESTART_AFTER
from arena.tournament import schedule
from arena.tournament.config import Tournament
from arena.tournament.journal import JournalEntry

if TYPE_CHECKING:
    from arena.referee.game import GameResult
    from arena.referee.host import BotHost, Peer


class RunError(ArenaError, RuntimeError):
    """A run that cannot start (e.g. a results folder of another tournament): one sentence."""


Where = int | str  # a local worker's slot, or "dask"

WAIT = -1  # from the runner's pending games: none can be given out until the games held now are journaled


@dataclass(frozen=True)
class Started:
    """A worker began game ``index``."""

    where: Where
    index: int


@dataclass(frozen=True)
class Done:
    """Game ``entry.index`` finished: its journal entry (record written and signed) and the bot starts it needed."""

    where: Where
    entry: JournalEntry
    starts: int


@dataclass(frozen=True)
class Failed:
    """Game ``index`` failed inside the referee: ``error`` is the exception as text."""

    where: Where
    index: int
    error: str


Event = Started | Done | Failed


class Executor(Protocol):
    """What plays a run's games; the runner's main loop (``runner._play``) drives it."""

    @property
    def busy(self) -> bool:
        """Games are in flight."""
        ...

    def feed(self) -> None:
        """Hand out games up to the executor's window."""
        ...

    def next_event(self, timeout: float) -> Event | None:
        """The next event, or None if none came within ``timeout`` seconds."""
        ...

    def finished(self, index: int) -> bool:
        """Note game ``index`` as journaled; False if it already was (a result that came twice)."""
        ...

    def replace_dead(self) -> None:
        """Follow workers that died or left (``RunError`` when that cannot go on)."""
        ...

    def stop(self, quick: bool) -> None:
        """Stop every worker and its bots."""
        ...


@dataclass
class Played:
    """One game as a worker played it, before anything is signed: all a coordinator needs to journal it."""

    result: GameResult
    starts: int               # bot starts the game needed
    duration_s: float
    worker_rss_mb: float


def rss_mb() -> float:
    return round(psutil.Process().memory_info().rss / 2**20, 2)


def play_spec(t: Tournament, spec: schedule.GameSpec, host: BotHost, peers: dict[str, Peer]) -> Played:
    """Play the scheduled game ``spec`` on ``host`` (its deal seed, id and suit map come with it: no key needed)."""
    from arena.referee.game import play_one

    starts = 0
    seat_peers = []
    for name in spec.seats:
        p = peers[name]
        if not p.ready or not p.alive():
            host.start(p)
            starts += 1
        seat_peers.append(p)
    began = time.monotonic()
    result = play_one(host, seat_peers, t.rules, spec.deal_seed, spec.game_id, t.time, t.failures,
                      suit_map=spec.suit_map)
    for p, fails in zip(seat_peers, result.failures):
        if any(fails.get(k) for k in RESTART_AFTER) and p.process is not None:
            host.stop_peer(p, "restarting after a failure", wait_s=0.2)
    return Played(result, starts, round(time.monotonic() - began, 4), rss_mb())


def entry_of(t: Tournament, spec: schedule.GameSpec, played: Played, out: Path, key: bytes) -> JournalEntry:
    """Write the game's signed record (when ``t.records``) and return its journal entry."""
    from arena.referee.game import write_record
    from arena.rules.record import Header

    result = played.result
    record = out / "records" / f"g{spec.index:06d}.jsonl" if t.records else None
    if record is not None:
        header = Header(result.seed, len(result.seats), t.rules, tuple(result.seats), (("game_id", spec.game_id), ("bots", result.hellos)),
                        suits=spec.suit_map)
        write_record(record, result, header.to_data(), key)
    return JournalEntry(
        index=spec.index, game_id=spec.game_id, table=spec.table, set=spec.set,  # no deal seed (SECURITY.md)
        seating=spec.seating, seats=list(spec.seats), placings=result.placings, totals=result.totals,
        failures=result.failures, forfeited=result.forfeited,
        record=str(record.relative_to(out)) if record else None, deals=result.deals, decisions=result.decisions,
        turn_capped=result.turn_capped > 0, duration_s=played.duration_s,
        worker_rss_mb=played.worker_rss_mb,
    )
