"""What a tournament run shows while it runs, and the event stream it writes for other tools.

``RunView`` is told of every game a worker starts and every game journaled, and turns them into:

- a progress line (``bar``, the default on a terminal) that fits 80 columns: done of total, games/s,
  ETA and the failure count, never losing the count when failures appear;
- one line per finished game (``lines``, the default when stderr is not a terminal: CI, nohup, a log
  file): its number among all games, index, table, seats with their placings, and its failures;
- the standings every N games (``standings_every``), from the journal as it is;
- with ``events``, a JSON Lines file with one object per run start, game start, game result,
  failure (one per seat and kind) and run end, each with ``event`` and ``time`` (UTC, ISO 8601),
  flushed line by line so another program can follow it (``tail -f``).

It knows nothing of how games are played: the runner calls ``started`` and ``finished``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from arena.tournament.journal import JournalEntry
from arena.untrusted import shown

Mode = Literal["bar", "lines", "none"]
MODES: tuple[str, ...] = ("auto", "bar", "lines", "none")
BAR_WIDTH = 80


def choose_mode(requested: str, stream: IO[str] = sys.stderr) -> Mode:
    """``auto`` is a progress bar on a terminal and one line per game anywhere else."""
    if requested == "auto":
        return "bar" if stream.isatty() else "lines"
    assert requested in MODES
    return requested  # type: ignore[return-value]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _failures(entry: JournalEntry) -> list[tuple[str, str, int]]:
    """(bot, kind, count) of every failure of a finished game."""
    return [(entry.seats[seat], kind, n) for seat, fails in enumerate(entry.failures)
            for kind, n in sorted(fails.items()) if n]


def game_line(entry: JournalEntry, done: int, total: int) -> str:
    """One finished game on one line, e.g. ``[41/180] game 40 table 3 set 1 seating 2: greedy 1st, ...``."""
    return f"[{done}/{total}] {game_summary(entry)}"


def game_summary(entry: JournalEntry) -> str:
    """A game's index, table, seats with their placings, failures and forfeits, on one line (bot
    names ``shown``: a name cannot break the line or drive the terminal)."""
    order = sorted(range(len(entry.seats)), key=lambda s: (entry.placings[s], s))
    seats = ", ".join(f"{shown(entry.seats[s])} {_ordinal(entry.placings[s])}" for s in order)
    fails = "; ".join(f"{shown(bot)} {shown(kind)} {n}" for bot, kind, n in _failures(entry))
    forfeits = ", ".join(shown(entry.seats[s]) for s in entry.forfeited)
    line = f"game {entry.index} table {entry.table} set {entry.set} seating {entry.seating}: {seats}"
    if fails:
        line += f" | failures: {fails}"
    if forfeits:
        line += f" | forfeited: {forfeits}"
    return line


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def bar_line(done: int, total: int, played: int, elapsed_s: float, failures: int, width: int = BAR_WIDTH) -> str:
    """The progress line: the count, rate, ETA and failures always fit; the bar takes what is left."""
    rate = played / elapsed_s if elapsed_s > 0 else 0.0
    eta = _clock((total - done) / rate) if rate > 0 and done < total else ("0:00:00" if done >= total else "-")
    tail = f" {done}/{total} {rate:.1f}/s ETA {eta} fail {failures}"
    room = max(0, width - len(tail) - 2)
    filled = room * done // total if total else room
    return ("[" + "#" * filled + "." * (room - filled) + "]" + tail)[:width]


class RunView:
    """Shows a run's progress in ``mode``, prints standings every ``standings_every`` games, writes events."""

    def __init__(self, mode: Mode, total: int, already: int, *, standings_every: int = 0,
                 standings: Callable[[], str] | None = None, events: Path | None = None,
                 out: IO[str] = sys.stderr, phase: str | None = None) -> None:
        self.mode = mode
        self.total = total
        self.done = already
        self.played = 0
        self.failures = 0
        self.standings_every = standings_every
        self.standings = standings
        self.out = out
        self.started_at = time.monotonic()
        self.events: IO[str] | None = open(events, "a", encoding="utf-8") if events is not None else None
        self._emit({"event": "run_start", "total": total, "done": already})
        # What happens before the first game (the start-up check), said instead of a bar standing at 0.
        self.phase = phase
        if phase is not None and mode != "none":
            self.out.write(phase[:BAR_WIDTH] if mode == "bar" else phase + "\n")
            self.out.flush()
        else:
            self._bar()

    def _emit(self, obj: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.write(json.dumps({**obj, "time": _now()}) + "\n")
            self.events.flush()

    def _bar(self) -> None:
        if self.mode == "bar":
            line = bar_line(self.done, self.total, self.played, time.monotonic() - self.started_at, self.failures)
            self.out.write("\r" + line)
            self.out.flush()

    def _print(self, text: str) -> None:
        if self.mode == "bar":
            self.out.write("\r" + " " * BAR_WIDTH + "\r")
        self.out.write(text + "\n")
        self.out.flush()

    def started(self, index: int) -> None:
        self._emit({"event": "game_start", "index": index})
        if self.phase is not None:  # the first game: the bar replaces the phase's line
            self.phase = None
            self._bar()

    def finished(self, entry: JournalEntry) -> None:
        self.done += 1
        self.played += 1
        fails = _failures(entry)
        self.failures += sum(n for _, _, n in fails)
        self._emit({"event": "game_result", "index": entry.index, "game_id": entry.game_id, "table": entry.table,
                    "set": entry.set, "seating": entry.seating, "seats": entry.seats, "placings": entry.placings,
                    "totals": entry.totals, "forfeited": entry.forfeited, "record": entry.record,
                    "duration_s": entry.duration_s})
        for bot, kind, n in fails:
            self._emit({"event": "failure", "index": entry.index, "bot": bot, "kind": kind, "count": n,
                        "record": entry.record})
        if self.mode == "lines":
            self._print(game_line(entry, self.done, self.total))
        if self.standings_every and self.standings is not None and self.played % self.standings_every == 0:
            self._print(f"standings after {self.done} of {self.total} games:\n{self.standings()}")
        self._bar()

    def close(self, outcome: str) -> None:
        if self.mode == "bar":
            self.out.write("\n")
            self.out.flush()
        self._emit({"event": "run_end", "outcome": outcome, "done": self.done, "total": self.total,
                    "played": self.played})
        if self.events is not None:
            self.events.close()
            self.events = None
