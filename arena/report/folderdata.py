"""A results folder as the report's model (docs/ARCHITECTURE.md section 8).

Numbers come from the tournament modules' public functions, never counted here:
the standings (ratings and their intervals ``rating_low``/``rating_high``, None
on the open side of a bound, ``bound`` and ``provisional``, margins, the
crosstable's W-L-D and LOS, failures, seat advantage, the notes) from
``standings.compute``, the rating history from ``ratings.fit`` on the games in
journal order, the schedule's size and seatings per deal-set from
``schedule``.  Everything is plain data (dicts, lists) ready for a template;
an interval or margin the standings do not give is None (shown "-").
"""

from __future__ import annotations

import itertools
import math
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from arena.report.gamedata import BIN_COUNT, bin_edge
from arena.tournament import ratings, schedule, standings
from arena.tournament.config import RESOLVED_FILE, ConfigFileError, read_resolved
from arena.tournament.journal import JournalEntry

HISTORY_POINTS = 30
KNOWN_ROW_KEYS = ("rank", "bot", "rating", "ci", "games", "first_pct", "avg_place", "avg_score", "margin", "points",
                  "failures", "rating_low", "rating_high", "bound", "provisional", "deal_sets")
REDACTED = "\u2026"


def settings(folder: Path) -> tuple[str, dict[str, Any]]:
    """The resolved tournament file's text and its data ({} when it is missing or unreadable)."""
    path = folder / RESOLVED_FILE
    try:
        text = path.read_text(encoding="utf-8")
        return text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "", {}


def published_settings(text: str, info: dict[str, Any]) -> str:
    """The resolved file as the report shows it: without ``base_dir`` (a local path) and with every bot's
    ``env`` values replaced by "…" (they may hold secrets; the names stay)."""
    if not info:
        return ""
    shown = {k: v for k, v in info.items() if k != "base_dir"}
    bots = shown.get("bots")
    if isinstance(bots, list):
        shown["bots"] = [b | {"env": dict.fromkeys(b["env"], REDACTED)}
                         if isinstance(b, dict) and isinstance(b.get("env"), dict) else b for b in bots]
    head = "".join(line + "\n" for line in itertools.takewhile(lambda s: s.startswith("#"), text.splitlines()))
    return head + ("\n" if head else "") + tomli_w.dumps(shown)


def seatings_per_set(folder: Path) -> int | None:
    """How many seatings each deal-set of the folder's tournament has (None without a readable tournament file)."""
    try:
        t = read_resolved(folder)
        return schedule.seatings_per_set(t)
    except (ConfigFileError, OSError, ValueError):
        return None


def complete_sets(entries: list[JournalEntry], seatings: int | None) -> set[tuple[int, int]]:
    """The (table, set) deal-sets whose every seating is journaled; with ``seatings`` None, every one seen."""
    played: dict[tuple[int, int], set[int]] = {}
    for e in entries:
        played.setdefault((e.table, e.set), set()).add(e.seating)
    return {k for k, s in played.items() if seatings is None or len(s) >= seatings}


def clock_of_folder(folder: Path) -> dict[str, Any] | None:
    """The ``[time]`` table of the folder's resolved tournament file, or None."""
    time = settings(folder)[1].get("time")
    return time if isinstance(time, dict) else None


def schedule_size(folder: Path) -> int | None:
    try:
        return schedule.total_games(read_resolved(folder))
    except (ConfigFileError, OSError):
        return None


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


def game_row(e: JournalEntry, href: str | None, held: bool = False) -> dict[str, Any]:
    """A line of the games table; ``held``: its replay waits for the twins of its deal-set."""
    kinds = sorted({k for seat in e.failures for k, n in seat.items() if n})
    return {
        "index": e.index, "id": e.game_id, "table": e.table, "set": e.set, "seating": e.seating,
        "seats": e.seats, "placings": e.placings, "totals": e.totals, "deals": e.deals,
        "kinds": kinds + (["forfeit"] if e.forfeited and "forfeit" not in kinds else []),
        "failed": bool(kinds or e.forfeited or e.error), "error": e.error, "href": href,
        "held": held,
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
    cross = {a: {b: data["crosstable"][a][b] for b in bots if b != a} for a in bots}
    total = schedule_size(folder)
    return {
        # the folder's name, not its local path: the page is published
        "name": data["name"], "folder": folder.resolve().name, "played": len(entries), "total": total,
        "finished": total is not None and len(entries) >= total,
        "settings_text": published_settings(text, info), "settings": info, "time": info.get("time") if isinstance(info.get("time"), dict) else {},
        "standings": data, "extra_columns": extra, "bots": bots, "cross": cross,
        "notes": st.notes,
        "history": rating_history(entries, bots), "entries": entries,
    }
