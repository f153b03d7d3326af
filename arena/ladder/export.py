"""``arena ladder export``: the results as JSON and CSV, and every game's record as one archive.

Writes into ``DIR/exports/``: ``results.json`` (the snapshot, final included), ``leaderboard.csv``,
``final.csv`` (when there is a final) and ``records.tar.gz`` (each batch's and the final's journal
and records, under their paths in the ladder; never a key, a log or a bot's files).  Every CSV cell
goes through ``arena.untrusted.csv_cell`` (entrants choose their names).
"""

from __future__ import annotations

import csv
import json
import tarfile
from pathlib import Path
from typing import Any

from arena.ladder.layout import EXPORTS, FINAL, batch_dirs, require_ladder
from arena.ladder.snapshot import snapshot
from arena.untrusted import csv_cell

COLUMNS = ("rank", "entrant", "version", "rating", "low", "high", "games", "provisional", "bound", "status")


def _csv(path: Path, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for row in rows:
            w.writerow([csv_cell("" if row.get(c) is None else row.get(c)) for c in columns])


def export(root: Path) -> list[Path]:
    """Write the exports; returns the files written."""
    require_ladder(root)
    out = root / EXPORTS
    out.mkdir(exist_ok=True)
    snap = snapshot(root)
    written = [out / "results.json", out / "leaderboard.csv"]
    (out / "results.json").write_text(json.dumps(snap, indent=1, sort_keys=True), encoding="utf-8")
    _csv(out / "leaderboard.csv", snap["leaderboard"], COLUMNS)
    if snap["final"] is not None:
        _csv(out / "final.csv", snap["final"]["standings"], COLUMNS[:-1])
        written.append(out / "final.csv")
    archive = out / "records.tar.gz"
    tmp = out / ".records.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        for folder in [*batch_dirs(root), root / FINAL]:
            for name in ("journal.jsonl", "tournament.toml"):
                if (folder / name).is_file():
                    tar.add(folder / name, arcname=(folder / name).relative_to(root).as_posix(), recursive=False)
            for rec in sorted((folder / "records").glob("*.jsonl")) if (folder / "records").is_dir() else []:
                if rec.is_file() and not rec.is_symlink():
                    tar.add(rec, arcname=rec.relative_to(root).as_posix(), recursive=False)
    tmp.replace(archive)
    written.append(archive)
    return written
