"""The standings as text: ``render(folder, fmt, wide)`` and ``render_standings(st, fmt, wide)`` in
``table`` (rich), ``md``, ``csv`` (the per-bot table only) or ``json`` (everything); what
``arena standings DIR`` prints (the columns are listed in ``standings``).

The default ``table`` fits ``WIDTH`` columns: it leaves out Avg score, sums the failure kinds into
one Fails column and lists the pairs one a line; ``wide`` shows every column and the crosstable.
Every bot-chosen string is escaped for its format (``arena.untrusted``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from arena.failures import column
from arena.tournament.standings import Pair, Row, Standings, compute
from arena.tournament.standings_stats import Margin
from arena.untrusted import csv_cell, md_cell, rich_text, shown

FORMATS: tuple[str, ...] = ("table", "md", "csv", "json")
WIDTH = 100  # the default table fits a terminal this wide; ``wide`` shows everything, however wide


def _num(x: float | None, spec: str, none: str = "-") -> str:
    return none if x is None else format(x, spec)


def _pm(m: Margin | Pair | None) -> str:
    if m is None or m.mean is None:
        return "-"
    return f"{m.mean:+.1f} ±" + _num(m.ci, ".1f")


def _wld(p: Pair | None) -> str:
    return "-" if p is None else f"{p.wins}-{p.losses}-{p.draws}"


def _los(p: Pair | None) -> str:
    return "-" if p is None or p.los is None else f"{100 * p.los:.1f}%"


def _header(st: Standings, wide: bool) -> list[str]:
    cols = ["Rank", "Bot", "Rating", "±95%", "Games", "1st%", "Avg place" if wide else "Place"]
    cols += ["Avg score", "Margin ±CI"] if wide else ["Margin ±CI"]
    if st.league:
        cols.append("SoS")  # beside the columns it confounds
    if st.ladder_points:
        cols.append("Points")
    if st.league:
        cols.append("Settled")
    if st.top is not None:
        cols.append(f"Top {st.top}%")
    if not wide:
        return cols + (["Fails"] if st.failure_kinds else [])
    return cols + [column(k) for k in st.failure_kinds]


def rating_text(r: Row) -> str:
    """The Rating cell: ``1534``, a bound ``> 1714`` / ``< 1361``, ``?`` after a provisional one, ``-`` unrated."""
    if not r.games:
        return "-"
    return f"{r.bound + ' ' if r.bound else ''}{r.rating:.0f}{'?' if r.provisional else ''}"


def top_cell(st: Standings, i: int) -> str:
    """The Top K% cell of row ``i``: shown around the cut (rows K and K + 1, and every row between the first
    and the last whose chance is between 1% and 99%), blank where the answer is settled."""
    chances = [r.top_pct for r in st.rows]
    mine = chances[i]
    if st.top is None or mine is None:
        return ""
    unsure = [j for j, p in enumerate(chances) if p is not None and 0.01 < p < 0.99]
    lo = min(unsure + [st.top - 1])
    hi = max(unsure + [min(st.top, len(st.rows) - 1)])
    return f"{100 * mine:.0f}%" if lo <= i <= hi else ""


def _cells(st: Standings, r: Row, wide: bool, i: int = 0) -> list[str]:
    cells = [str(r.rank), r.bot, rating_text(r), "±" + _num(r.ci, ".0f"), str(r.games), f"{r.first_pct:.1f}",
             f"{r.avg_place:.2f}"]
    cells += [f"{r.avg_score:.1f}", _pm(r.margin)] if wide else [_pm(r.margin)]
    if st.league:
        cells.append(_num(r.sos, ".0f"))
    if st.ladder_points:
        cells.append(str(r.points))
    if st.league:
        cells.append("-" if r.settled is None else f"{100 * r.settled:.0f}%")
    if st.top is not None:
        cells.append(top_cell(st, i))
    if not wide:
        return cells + ([str(sum(r.failures.values()))] if st.failure_kinds else [])
    return cells + [str(r.failures.get(k, 0)) for k in st.failure_kinds]


PAIRS_HEAD = ["Bot", "vs", "Games", "W-L-D", "LOS", "Margin ±CI"]


def _pairs(st: Standings) -> list[list[str]]:
    """One line per pair that met, the higher-ranked bot first."""
    bots = [r.bot for r in st.rows]
    out = []
    for i, a in enumerate(bots):
        for b in bots[i + 1:]:
            p = st.crosstable[a][b]
            if p is not None:
                out.append([a, b, str(p.wins + p.losses + p.draws), _wld(p), _los(p), _pm(p)])
    return out


def _cross_rows(st: Standings, sep: str) -> tuple[list[str], list[list[str]]]:
    bots = [r.bot for r in st.rows]
    head = ["vs"] + bots

    def cell(p: Pair | None) -> str:
        return "" if p is None else sep.join((_pm(p), _wld(p), "LOS " + _los(p)))

    body = [[a] + [("—" if a == b else cell(st.crosstable[a][b])) for b in bots] for a in bots]
    return head, body


def _md_table(head: list[str], body: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(md_cell(c) for c in head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


CROSS_TITLE = "Crosstable: row over column"
PAIRS_TITLE = "Pairs: first over second"


def _render_rich(st: Standings, wide: bool) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=10_000 if wide else WIDTH, force_terminal=False, color_system=None)

    def table(title: str, head: list[str], body: Iterable[list[str]], left: int) -> None:
        t = Table(title=rich_text(title))  # bots' names are never parsed as markup
        for i, c in enumerate(head):
            t.add_column(rich_text(c), justify="left" if i <= left else "right", overflow="fold")
        for row in body:
            t.add_row(*(rich_text(c) for c in row))
        console.print(t)

    table(f"{st.name}: {st.progress}", _header(st, wide), (_cells(st, r, wide, i) for i, r in enumerate(st.rows)), left=1)
    if wide:
        head, body = _cross_rows(st, "\n")
        table(CROSS_TITLE, head, body, left=0)
    else:
        table(PAIRS_TITLE, PAIRS_HEAD, _pairs(st), left=1)
    for note in st.notes:
        console.print(f"note: {shown(note)}", markup=False, highlight=False)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def render_standings(st: Standings, fmt: str, wide: bool = False) -> str:
    """``st`` as text; ``wide`` (table only) shows every column and the crosstable instead of the pairs."""
    if fmt == "table":
        return _render_rich(st, wide)
    if fmt == "md":
        head, body = _cross_rows(st, " · ")
        parts = [f"## {md_cell(st.name)}: {st.progress}", "",
                 _md_table(_header(st, True), (_cells(st, r, True, i) for i, r in enumerate(st.rows))),
                 "", f"### {CROSS_TITLE}", "", _md_table(head, body)]
        parts += [""] + [f"> note: {md_cell(n)}" for n in st.notes] if st.notes else []
        return "\n".join(parts) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        cols = ["rank", "bot", "rating", "ci95", "games", "first_pct", "avg_place", "avg_score", "margin",
                "margin_ci95", "bound", "provisional"] + (["points"] if st.ladder_points else []) \
            + (["settled", "sos"] if st.league else []) \
            + (["top_pct"] if st.top is not None else []) \
            + list(st.failure_kinds)
        w.writerow(cols)
        for r in st.rows:
            m = r.margin
            row: list[Any] = [r.rank, csv_cell(r.bot), round(r.rating, 1) if r.games else "", "" if r.ci is None else round(r.ci, 1), r.games,
                              round(r.first_pct, 2), round(r.avg_place, 3), round(r.avg_score, 2),
                              "" if m is None else round(m.mean, 2), "" if m is None or m.ci is None else round(m.ci, 2),
                              r.bound or "", int(r.provisional)]
            if st.ladder_points:
                row.append(r.points)
            if st.league:
                row += ["" if r.settled is None else round(r.settled, 4), "" if r.sos is None else round(r.sos, 1)]
            if st.top is not None:
                row.append("" if r.top_pct is None else round(r.top_pct, 4))
            w.writerows([row + [r.failures.get(k, 0) for k in st.failure_kinds]])
        return buf.getvalue()
    if fmt == "json":
        return json.dumps(st.to_data() | {"notes": st.notes}, indent=2) + "\n"
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def render(folder: str | Path, fmt: str = "table", drop_bad_lines: bool = False, wide: bool = False) -> str:
    """The standings of a results folder as text in ``fmt`` (table, md, csv, json)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return render_standings(compute(folder, drop_bad_lines=drop_bad_lines), fmt, wide)
