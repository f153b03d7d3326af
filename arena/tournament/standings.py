"""Standings of a results folder: the per-bot table and the pairwise crosstable.

Owns what ``arena standings DIR`` shows (docs/ARCHITECTURE.md section 5).
``compute(folder)`` reads the journal (and the resolved ``tournament.toml`` when present, for the bot
order, ladder points and whether lower scores are better) and returns a
``Standings`` value; ``render(folder, fmt)`` formats it as ``table`` (rich),
``md``, ``csv`` (the per-bot table only) or ``json`` (everything).

Columns: Rank, Bot, Rating, ±95%, Games, 1st%, Avg place, Avg score (final
total), Margin ±CI (own total minus the mean of the table opponents' totals,
sign flipped under penalty scoring so positive is always better), Points (only
with ``ladder_points``), then one column per failure kind that occurred.
Crosstable cell (row, column): mean score margin of row over column in the
games where both sat at the same table.  Margin intervals are 95% normal
intervals with standard errors clustered by deal-set (games of one duplicate
set are not independent).

Only journal lines that verify under the folder's secret key, with an index in
the schedule and the first result of their game, are counted; any other line
stops ``compute`` with ``BadJournal`` (a sentence per line), unless it is asked
to set such lines aside in ``journal.rejected.jsonl`` (``drop_bad_lines``),
which it then lists among the notes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena.failures import FAILURE_KINDS, column
from arena.tournament import ratings, schedule
from arena.tournament.config import RESOLVED_FILE, ConfigFileError, read_resolved
from arena.tournament.journal import (
    LOCK_FILE,
    JournalContents,
    JournalEntry,
    JournalError,
    check,
    lock_folder,
    read,
    set_aside,
)

FORMATS: tuple[str, ...] = ("table", "md", "csv", "json")
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Margin:
    mean: float
    ci: float | None     # half width of the 95% interval; None with fewer than 2 deal-sets
    games: int


@dataclass(frozen=True)
class Row:
    rank: int
    bot: str
    rating: float
    ci: float            # ± half width of the 95% bootstrap interval
    games: int
    first_pct: float
    avg_place: float
    avg_score: float
    margin: Margin
    points: int | None
    failures: dict[str, int]


@dataclass
class Standings:
    name: str
    games: int
    ladder_points: bool
    failure_kinds: list[str]
    rows: list[Row]
    crosstable: dict[str, dict[str, Margin | None]]
    problems: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # bad journal lines moved to journal.rejected.jsonl

    def to_data(self) -> dict[str, Any]:
        return asdict(self)


class _Clustered:
    """Mean with a cluster-robust standard error (clusters = deal-sets)."""

    def __init__(self) -> None:
        self.sums: dict[tuple[int, int], float] = {}
        self.counts: dict[tuple[int, int], int] = {}

    def add(self, cluster: tuple[int, int], x: float) -> None:
        self.sums[cluster] = self.sums.get(cluster, 0.0) + x
        self.counts[cluster] = self.counts.get(cluster, 0) + 1

    def result(self) -> Margin | None:
        n = sum(self.counts.values())
        if n == 0:
            return None
        mean = sum(self.sums.values()) / n
        g = len(self.sums)
        if g < 2:
            return Margin(mean, None, n)
        # residual sum per cluster: sum_i (x_i - mean) = S_g - n_g * mean
        ss = sum((self.sums[c] - self.counts[c] * mean) ** 2 for c in self.sums)
        se = math.sqrt(ss * g / (g - 1)) / n
        return Margin(mean, Z95 * se, n)


def _tournament_info(folder: Path) -> dict[str, Any]:
    path = folder / RESOLVED_FILE
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _schedule_size(folder: Path) -> int | None:
    """How many games the folder's tournament has, or None without a tournament file to say."""
    if not (folder / RESOLVED_FILE).exists():
        return None
    try:
        return schedule.total_games(read_resolved(folder))
    except ConfigFileError:
        return None


def counted_lines(folder: Path, drop_bad_lines: bool = False) -> tuple[JournalContents, list[str]]:
    """The journal lines that count, and notes on the bad lines set aside (``drop_bad_lines``);
    BadJournal without it when there are bad lines."""
    total = _schedule_size(folder)
    if not drop_bad_lines:
        return check(folder, None, total), []
    contents = read(folder, None, total)
    if not contents.bad:
        return contents, []
    with _unused(folder):
        dropped = set_aside(folder, read(folder, None, total))
    notes = [f"set aside in journal.rejected.jsonl: {why}" for why in dropped]
    return read(folder, None, total), notes


@contextmanager
def _unused(folder: Path) -> Iterator[None]:
    """Hold the folder's run lock while bad lines are moved; JournalError if a run is using the folder."""
    try:
        f = lock_folder(folder)
    except BlockingIOError:
        raise JournalError(f"{folder} is in use by an `arena run`; set bad lines aside once it has stopped") from None
    except OSError as e:
        raise JournalError(f"cannot lock {folder / LOCK_FILE}: {e.strerror or e}") from None
    with f:
        yield


def compute(folder: str | Path, resamples: int = ratings.DEFAULT_RESAMPLES, drop_bad_lines: bool = False) -> Standings:
    """Standings of a results folder (its journal plus its resolved tournament file)."""
    folder = Path(folder)
    info = _tournament_info(folder)
    contents, dropped = counted_lines(folder, drop_bad_lines)
    entries = contents.entries
    bots_cfg: list[str] = [b["name"] for b in info.get("bots", []) if isinstance(b, dict) and b.get("name")]
    ladder = bool(info.get("ladder_points", False))
    rules = info.get("rules", {})
    sign = -1.0 if isinstance(rules, dict) and rules.get("scoring") == "penalty" else 1.0
    seed = info.get("seed", 0) if isinstance(info.get("seed", 0), int) else 0
    st = _standings(str(info.get("name", folder.name)), entries, bots_cfg, ladder, sign, seed, resamples,
                    dropped + contents.problems)
    st.set_aside = dropped
    return st


def _standings(name: str, entries: list[JournalEntry], bots: list[str], ladder: bool, sign: float, seed: int,
               resamples: int, problems: list[str]) -> Standings:
    names = ratings.bot_order(entries, bots)
    rated = ratings.rate(entries, names, resamples=resamples, seed=seed)
    points = ratings.ladder_points(entries) if ladder else {}
    games = dict.fromkeys(names, 0)
    firsts = dict.fromkeys(names, 0)
    place_sum = dict.fromkeys(names, 0.0)
    score_sum = dict.fromkeys(names, 0.0)
    fails: dict[str, dict[str, int]] = {b: {} for b in names}
    margin = {b: _Clustered() for b in names}
    pair = {a: {b: _Clustered() for b in names if b != a} for a in names}
    for e in entries:
        k = len(e.seats)
        cluster = (e.table, e.set)
        for s, bot in enumerate(e.seats):
            games[bot] += 1
            if s < len(e.placings):
                place_sum[bot] += e.placings[s]
                firsts[bot] += e.placings[s] == 1
            if s < len(e.failures):
                for kind, n in e.failures[s].items():
                    fails[bot][kind] = fails[bot].get(kind, 0) + n
            if len(e.totals) != k or k < 2:
                continue
            score_sum[bot] += e.totals[s]
            others = (sum(e.totals) - e.totals[s]) / (k - 1)
            margin[bot].add(cluster, sign * (e.totals[s] - others))
            for o, other in enumerate(e.seats):
                if o != s:
                    pair[bot][other].add(cluster, sign * (e.totals[s] - e.totals[o]))
    kinds_seen = {kind for f in fails.values() for kind, n in f.items() if n}
    kinds = [k for k in FAILURE_KINDS if k in kinds_seen] + sorted(kinds_seen - set(FAILURE_KINDS))
    order = sorted(names, key=lambda b: (-rated[b].rating, b))
    rows = []
    for rank, b in enumerate(order, start=1):
        g = games[b]
        rows.append(Row(
            rank=rank, bot=b, rating=rated[b].rating, ci=rated[b].plus_minus, games=g,
            first_pct=100.0 * firsts[b] / g if g else 0.0,
            avg_place=place_sum[b] / g if g else 0.0,
            avg_score=score_sum[b] / g if g else 0.0,
            margin=margin[b].result() or Margin(0.0, None, 0),
            points=points.get(b, 0) if ladder else None,
            failures={k: fails[b].get(k, 0) for k in kinds},
        ))
    cross = {a: {b: (pair[a][b].result() if b != a else None) for b in order} for a in order}
    return Standings(name, len(entries), ladder, kinds, rows, cross, list(problems))


# -- rendering --------------------------------------------------------------------

def _pm(m: Margin | None) -> str:
    if m is None:
        return ""
    return f"{m.mean:+.1f}" + (f" ±{m.ci:.1f}" if m.ci is not None else "")


def _header(st: Standings) -> list[str]:
    cols = ["Rank", "Bot", "Rating", "±95%", "Games", "1st%", "Avg place", "Avg score", "Margin ±CI"]
    if st.ladder_points:
        cols.append("Points")
    return cols + [column(k) for k in st.failure_kinds]


def _cells(st: Standings, r: Row) -> list[str]:
    cells = [str(r.rank), r.bot, f"{r.rating:.0f}", f"±{r.ci:.0f}", str(r.games), f"{r.first_pct:.1f}",
             f"{r.avg_place:.2f}", f"{r.avg_score:.1f}", _pm(r.margin)]
    if st.ladder_points:
        cells.append(str(r.points))
    return cells + [str(r.failures.get(k, 0)) for k in st.failure_kinds]


def _cross_rows(st: Standings) -> tuple[list[str], list[list[str]]]:
    bots = [r.bot for r in st.rows]
    head = ["vs"] + bots
    body = [[a] + [("—" if a == b else _pm(st.crosstable[a][b])) for b in bots] for a in bots]
    return head, body


def _md_table(head: list[str], body: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
    return "\n".join(lines)


def _render_rich(st: Standings) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False, color_system=None)
    t = Table(title=f"{st.name}: {st.games} games")
    for i, c in enumerate(_header(st)):
        t.add_column(c, justify="left" if i == 1 else "right")
    for r in st.rows:
        t.add_row(*_cells(st, r))
    console.print(t)
    head, body = _cross_rows(st)
    x = Table(title="Crosstable: mean score margin of row over column (±95%)")
    for i, c in enumerate(head):
        x.add_column(c, justify="left" if i == 0 else "right")
    for row in body:
        x.add_row(*row)
    console.print(x)
    for p in st.problems:
        console.print(f"note: {p}", markup=False)
    return buf.getvalue()


def render_standings(st: Standings, fmt: str) -> str:
    if fmt == "table":
        return _render_rich(st)
    if fmt == "md":
        head, body = _cross_rows(st)
        parts = [f"## {st.name}: {st.games} games", "", _md_table(_header(st), (_cells(st, r) for r in st.rows)),
                 "", "### Crosstable (mean score margin of row over column, ±95%)", "", _md_table(head, body)]
        parts += [""] + [f"> note: {p}" for p in st.problems] if st.problems else []
        return "\n".join(parts) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        cols = ["rank", "bot", "rating", "ci95", "games", "first_pct", "avg_place", "avg_score", "margin",
                "margin_ci95"] + (["points"] if st.ladder_points else []) + list(st.failure_kinds)
        w.writerow(cols)
        for r in st.rows:
            row: list[Any] = [r.rank, r.bot, round(r.rating, 1), round(r.ci, 1), r.games, round(r.first_pct, 2),
                              round(r.avg_place, 3), round(r.avg_score, 2), round(r.margin.mean, 2),
                              "" if r.margin.ci is None else round(r.margin.ci, 2)]
            if st.ladder_points:
                row.append(r.points)
            w.writerows([row + [r.failures.get(k, 0) for k in st.failure_kinds]])
        return buf.getvalue()
    if fmt == "json":
        return json.dumps(st.to_data(), indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render(folder: str | Path, fmt: str = "table", drop_bad_lines: bool = False) -> str:
    """The standings of a results folder as text in ``fmt`` (table, md, csv, json)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return render_standings(compute(folder, drop_bad_lines=drop_bad_lines), fmt)
