"""Every game the ladder played: the batches' journals read (each verified under its own key) as one list.

Each batch is a tournament folder whose game indices and table numbers start at 0, so the entries
are renumbered here (``index`` and ``table`` made unique across batches) before any fit: the ratings
cluster by deal-set (table, set), and two batches' table 0 are different deals.  ``LadderGame`` keeps
where each entry came from (its batch folder, relative to the ladder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena.ladder.layout import batch_dirs
from arena.tournament.journal import JournalEntry, read

BATCH_STRIDE = 1_000_000  # games (and tables) per batch are far below this


@dataclass(frozen=True)
class LadderGame:
    batch: str              # the batch folder, relative to the ladder (batches/000003)
    entry: JournalEntry     # renumbered: unique index and table across the ladder


def ladder_games(root: Path, folders: list[Path] | None = None) -> list[LadderGame]:
    """The verified games of every batch (or of ``folders``), oldest batch first, each in index order."""
    out: list[LadderGame] = []
    for folder in batch_dirs(root) if folders is None else folders:
        if not (folder / "secret.key").exists():
            continue  # a batch that never started a game
        number = int(folder.name) if folder.name.isdigit() else 0
        rel = folder.relative_to(root).as_posix()
        for e in sorted(read(folder).entries, key=lambda e: e.index):
            moved = msgspec.structs.replace(e, index=number * BATCH_STRIDE + e.index,
                                            table=number * BATCH_STRIDE + e.table)
            out.append(LadderGame(rel, moved))
    return out


def record_of(g: LadderGame) -> str | None:
    """The game's record, relative to the ladder (for the replay viewer)."""
    return f"{g.batch}/{g.entry.record}" if g.entry.record else None
