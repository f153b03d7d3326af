"""A results folder as the report's model (docs/ARCHITECTURE.md section 8).

Numbers come from the tournament modules' public functions: the standings
(ratings, intervals, margins, failures) from ``standings.compute``, the rating
history from ``ratings.fit`` on the games in journal order, the schedule's size
from ``schedule.total_games``.  Only pair counts (wins, losses, draws by
placing) and their likelihood of superiority are counted here.
Everything is plain data (dicts, lists) ready for a template.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from pathlib import Path
from typing import Any

from arena.report.gamedata import BIN_COUNT, bin_edge
from arena.tournament import ratings, schedule, standings
from arena.tournament.config import RESOLVED_FILE, ConfigFileError, read_resolved
from arena.tournament.journal import JournalEntry

HISTORY_POINTS = 30
KNOWN_ROW_KEYS = ("rank", "bot", "rating", "ci", "games", "first_pct", "avg_place", "avg_score", "margin", "points",
                  "failures")


def settings(folder: Path) -> tuple[str, dict[str, Any]]:
    """The resolved tournament file's text and its data ({} when it is missing or unreadable)."""
    path = folder / RESOLVED_FILE
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "", {}


def clock_of_folder(folder: Path) -> dict[str, Any] | None:
    """The ``[time]`` table of the folder's resolved tournament file, or None."""
    time = settings(folder)[1].get("time")
    return time if isinstance(time, dict) else None


def schedule_size(folder: Path) -> int | None:
    try:
        return schedule.total_games(read_resolved(folder))
    except (ConfigFileError, OSError):
        return None


def los(wins: int, losses: int) -> float | None:
    """Likelihood of superiority from head-to-head wins and losses (normal approximation; draws ignored)."""
    if wins + losses == 0:
        return None
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def pair_counts(entries: list[JournalEntry]) -> dict[str, dict[str, list[int]]]:
    """[wins, losses, draws] of row bot against column bot, by placing at the same table."""
    out: dict[str, dict[str, list[int]]] = {}
    for e in entries:
        for a, bot_a in enumerate(e.seats):
            for b, bot_b in enumerate(e.seats):
                if a == b or a >= len(e.placings) or b >= len(e.placings):
                    continue
                cell = out.setdefault(bot_a, {}).setdefault(bot_b, [0, 0, 0])
                pa, pb = e.placings[a], e.placings[b]
                cell[0 if pa < pb else 1 if pa > pb else 2] += 1
    return out


def rating_history(entries: list[JournalEntry], bots: list[str], points: int = HISTORY_POINTS) -> dict[str, Any]:
    """Point ratings after the first k games (journal order, i.e. the order they finished), at ``points`` values of k."""
    n = len(entries)
    if n == 0:
        return {"games": [], "bots": {b: [] for b in bots}}
    ks = sorted({max(1, round(n * (i + 1) / points)) for i in range(points)})
    series: dict[str, list[float | None]] = {b: [] for b in bots}
    for k in ks:
        fitted = ratings.fit(entries[:k], bots)
        played = {bot for e in entries[:k] for bot in e.seats}
        for b in bots:
            series[b].append(round(fitted[b], 1) if b in fitted and b in played else None)
    return {"games": ks, "bots": series}


def game_row(e: JournalEntry, href: str | None) -> dict[str, Any]:
    kinds = sorted({k for seat in e.failures for k, n in seat.items() if n})
    return {
        "index": e.index, "id": e.game_id, "table": e.table, "set": e.set, "seating": e.seating,
        "seats": e.seats, "placings": e.placings, "totals": e.totals, "deals": e.deals,
        "kinds": kinds + (["forfeit"] if e.forfeited and "forfeit" not in kinds else []),
        "failed": bool(kinds or e.forfeited or e.error), "error": e.error, "href": href,
    }


def merge_latency(per_game: list[tuple[JournalEntry, dict[str, list[Any]]]]) -> dict[str, dict[str, Any]]:
    """Per bot: histogram (counts by bin), decisions, median, p99 and max (ms) over its games."""
    out: dict[str, dict[str, Any]] = {}
    for e, summary in per_game:
        for seat, bot in enumerate(e.seats):
            if seat >= len(summary["hist"]):
                continue
            acc = out.setdefault(bot, {"hist": [0] * BIN_COUNT, "count": 0, "max": 0.0})
            for key, c in summary["hist"][seat].items():
                acc["hist"][int(key)] += c
            acc["count"] += summary["count"][seat]
            acc["max"] = max(acc["max"], summary["max"][seat])
    for acc in out.values():
        acc["median"] = _quantile(acc["hist"], acc["count"], 0.5, acc["max"])
        acc["p99"] = _quantile(acc["hist"], acc["count"], 0.99, acc["max"])
    return out


def _quantile(hist: list[int], count: int, q: float, slowest: float) -> float | None:
    """The q-quantile from the histogram: the geometric middle of its bin (at most the slowest decision)."""
    if count == 0:
        return None
    want = q * count
    seen = 0
    for b, c in enumerate(hist):
        seen += c
        if seen >= want and c:
            return min(math.sqrt(bin_edge(b) * bin_edge(b + 1)), slowest)
    return slowest


def overlap_notes(rows: list[dict[str, Any]]) -> list[str]:
    """A note for each pair of neighbours in the ranking whose 95% intervals overlap."""
    notes = []
    for a, b in itertools.pairwise(rows):
        if a["rating"] - a["ci"] <= b["rating"] + b["ci"]:
            notes.append(f"{a['bot']} and {b['bot']}: their 95% intervals overlap, so their order is not settled "
                         "by these games")
    return notes


def _pair(cell: dict[str, Any] | None, counted: list[int]) -> dict[str, Any]:
    """A crosstable cell: the standings' margin, and W-L-D and LOS (the standings' own when it gives them)."""
    cell = cell or {}
    wld = [cell[k] for k in ("wins", "losses", "draws")] if all(k in cell for k in ("wins", "losses", "draws")) else counted
    return {"margin": cell or None, "wld": wld, "los": cell["los"] if "los" in cell else los(wld[0], wld[1])}


def collect(folder: Path) -> dict[str, Any]:
    """The report's model of a results folder, without latencies and replay links (see ``render``)."""
    st = standings.compute(folder)
    data = st.to_data()
    contents, _ = standings.counted_lines(folder)
    entries = list(contents.entries)
    text, info = settings(folder)
    bots = [r["bot"] for r in data["rows"]]
    extra = sorted({k for r in data["rows"] for k, v in r.items()
                    if k not in KNOWN_ROW_KEYS and (v is None or isinstance(v, int | float | str))})
    pairs = pair_counts(entries)
    cross = {a: {b: _pair(data["crosstable"].get(a, {}).get(b), pairs.get(a, {}).get(b, [0, 0, 0]))
                 for b in bots if b != a} for a in bots}
    total = schedule_size(folder)
    notes = list(data.get("notes") or []) or overlap_notes(data["rows"])
    return {
        "name": data["name"], "folder": str(folder), "played": len(entries), "total": total,
        "finished": total is not None and len(entries) >= total,
        "settings_text": text, "settings": info, "time": info.get("time") if isinstance(info.get("time"), dict) else {},
        "standings": data, "extra_columns": extra, "bots": bots, "cross": cross,
        "notes": notes, "problems": data.get("problems", []),
        "history": rating_history(entries, bots), "entries": entries,
    }
