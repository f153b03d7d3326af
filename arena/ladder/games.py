"""Every game the ladder played: the batches' journals read (each verified under its own key) as one list.

Each batch is a tournament folder whose game indices and table numbers start at 0, so the entries
are renumbered here (``index`` and ``table`` made unique across batches) before any fit: the ratings
cluster by deal-set (table, set), and two batches' table 0 are different deals.  ``LadderGame`` keeps
where each entry came from (its batch folder, relative to the ladder).

A batch's games are cached, keyed on its journal's and key's ``stamp`` (inode, size, mtime_ns): a
journal is read again only once it changed, so a page load or a batch with nothing new in a folder
reads nothing there (``reads`` counts the journals read, for the tests and the bench).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena.ladder.layout import batch_dirs
from arena.tournament.journal import JOURNAL_FILE, JournalEntry, read

BATCH_STRIDE = 1_000_000  # games (and tables) per batch are far below this
Stamp = tuple[tuple[int, int, int] | None, ...]


@dataclass(frozen=True)
class LadderGame:
    batch: str              # the batch folder, relative to the ladder (batches/000003)
    entry: JournalEntry     # renumbered: unique index and table across the ladder


def stamp(*paths: Path) -> Stamp:
    """What identifies these files' contents without reading them: (inode, size, mtime_ns), None when absent."""
    out: list[tuple[int, int, int] | None] = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


_lock = threading.Lock()
_cache: dict[str, tuple[Stamp, list[LadderGame]]] = {}  # batch folder -> (stamp, its games)
MAX_CACHED = 100_000  # batch folders remembered (a few hundred bytes each, plus their games)
reads = 0


def _batch_games(root: Path, folder: Path) -> list[LadderGame]:
    global reads
    now = stamp(folder / JOURNAL_FILE, folder / "secret.key")
    where = str(folder.resolve())
    with _lock:
        held = _cache.get(where)
    if held is not None and held[0] == now:
        return held[1]
    if now[1] is None:
        return []  # a batch that never started a game
    number = int(folder.name) if folder.name.isdigit() else 0
    rel = folder.relative_to(root).as_posix()
    games = [LadderGame(rel, msgspec.structs.replace(e, index=number * BATCH_STRIDE + e.index,
                                                     table=number * BATCH_STRIDE + e.table))
             for e in sorted(read(folder).entries, key=lambda e: e.index)]
    with _lock:
        reads += 1
        if len(_cache) >= MAX_CACHED:
            _cache.clear()
        _cache[where] = (now, games)
    return games


def ladder_games(root: Path, folders: list[Path] | None = None) -> list[LadderGame]:
    """The verified games of every batch (or of ``folders``), oldest batch first, each in index order."""
    out: list[LadderGame] = []
    for folder in batch_dirs(root) if folders is None else folders:
        out.extend(_batch_games(root, folder))
    return out


def record_of(g: LadderGame) -> str | None:
    """The game's record, relative to the ladder (for the replay viewer)."""
    return f"{g.batch}/{g.entry.record}" if g.entry.record else None
