"""Which games of a results folder to look at: ``arena games DIR [--bot X] [--failed] [--kind K]``.

Reads only journal lines that count (as ``standings`` does) and filters them; every game comes with
the path of its record, so a failure found here is one ``arena replay`` away.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arena.tournament.journal import JournalEntry
from arena.tournament.progress import game_summary
from arena.tournament.standings import counted_lines
from arena.untrusted import shown


@dataclass(frozen=True)
class GameFilter:
    bot: str | None = None      # games with this bot at the table
    failed: bool = False        # games in which some seat failed (any kind), or ``bot`` failed if given
    kind: str | None = None     # games with a failure of this kind (by ``bot`` if given)

    def keeps(self, e: JournalEntry) -> bool:
        if self.bot is not None and self.bot not in e.seats:
            return False
        seats = [s for s, name in enumerate(e.seats) if self.bot is None or name == self.bot]
        fails = [e.failures[s] if s < len(e.failures) else {} for s in seats]
        if self.failed and not any(n for f in fails for n in f.values()):
            return False
        return self.kind is None or any(f.get(self.kind) for f in fails)


def find_games(folder: Path, wanted: GameFilter) -> list[JournalEntry]:
    """Counted games of ``folder`` that ``wanted`` keeps, by game index (BadJournal/JournalError as standings)."""
    contents, _ = counted_lines(folder)
    return sorted((e for e in contents.entries if wanted.keeps(e)), key=lambda e: e.index)


def record_path(folder: Path, e: JournalEntry) -> str | None:
    return str(folder / e.record) if e.record else None


def describe(folder: Path, e: JournalEntry) -> str:
    """One game on one line, with its record's path."""
    path = record_path(folder, e)
    return game_summary(e) + (f" | record: {shown(path)}" if path else " | no record")
