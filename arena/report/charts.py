"""Inline SVG charts for the report, drawn here so the page needs no network and no chart library.

Each function takes plain numbers and returns one ``<svg>`` element as text;
every label goes through ``html.escape`` (bot names are chosen by authors).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from arena.report.gamedata import BIN_COUNT, bin_edge

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777",
           "#4b5563", "#65a30d")


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _ticks(lo: float, hi: float, want: int = 5) -> list[float]:
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / want))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= want:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def interval_plot(rows: list[dict[str, Any]]) -> str:
    """Each bot's rating as a dot with its 95% interval (``rating_low`` to ``rating_high``, not symmetric) as a
    bar, best first; a bot without an interval (``ci`` None) is a dot alone, titled "no interval"."""
    rows = [r for r in rows if r["rating"] is not None]  # a bot with no games has no rating to draw
    if not rows:
        return ""
    # a bound (``bound`` ">" or "<") has no end on its open side (None): its bar runs to the plot's edge
    lo = min(min(r["rating"], r["rating_low"] if r["rating_low"] is not None else r["rating"]) for r in rows)
    hi = max(max(r["rating"], r["rating_high"] if r["rating_high"] is not None else r["rating"]) for r in rows)
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad
    left, width, row_h = 150, 480, 26
    height = row_h * len(rows) + 30

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    parts = [f'<svg class="chart" viewBox="0 0 {left + width + 20} {height}" role="img" '
             f'aria-label="ratings with 95% intervals">']
    for t in _ticks(lo, hi):
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="0" y2="{height - 20}" class="grid"/>'
                     f'<text x="{x(t):.1f}" y="{height - 6}" class="tick" text-anchor="middle">{t:.0f}</text>')
    for i, r in enumerate(rows):
        y = 14 + i * row_h
        bound = r.get("bound")
        has = r["ci"] is not None or bound is not None
        if bound:
            span = f'{"never lost" if bound == ">" else "never won"}: {bound} {r["rating"]:.0f}'
            ends = (r["rating"], hi) if bound == ">" else (lo, r["rating"])
        else:
            span = f'{r["rating_low"]:.0f} to {r["rating_high"]:.0f}' if has else "no interval"
            ends = (r["rating_low"], r["rating_high"])
        dash = ' stroke-dasharray="6 3"' if bound else ""
        bar = (f'<line x1="{x(ends[0]):.1f}" x2="{x(ends[1]):.1f}" y1="{y}" y2="{y}" '
               f'stroke="{color(i)}" stroke-width="{3 if bound else 4}" stroke-linecap="round"{dash}/>') if has else ""
        parts.append(
            f'<g class="interval" data-bot="{escape(r["bot"])}"><title>{escape(r["bot"])}: {r["rating"]:.0f} '
            f'({escape(span)})</title>'
            f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" class="label">{escape(r["bot"])}</text>'
            f'{bar}<circle cx="{x(r["rating"]):.1f}" cy="{y}" r="5" fill="{color(i)}"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def history_chart(history: dict[str, Any]) -> str:
    """Each bot's point rating after the first k games, against k."""
    games: list[int] = history["games"]
    series: dict[str, list[float | None]] = history["bots"]
    values = [v for s in series.values() for v in s if v is not None]
    if len(games) < 1 or not values:
        return '<p class="empty">No games yet.</p>'
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad
    left, top, width, height = 50, 10, 560, 220
    g_max = max(games[-1], 2)

    def x(k: float) -> float:
        return left + (k - 1) / (g_max - 1) * width

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * height

    parts = [f'<svg class="chart" viewBox="0 0 {left + width + 150} {top + height + 30}" role="img" '
             'aria-label="rating over games played">']
    for t in _ticks(lo, hi):
        parts.append(f'<line x1="{left}" x2="{left + width}" y1="{y(t):.1f}" y2="{y(t):.1f}" class="grid"/>'
                     f'<text x="{left - 4}" y="{y(t) + 4:.1f}" class="tick" text-anchor="end">{t:.0f}</text>')
    for t in _ticks(1, g_max):
        if t >= 1:
            parts.append(f'<text x="{x(t):.1f}" y="{top + height + 16}" class="tick" text-anchor="middle">{t:.0f}</text>')
    parts.append(f'<text x="{left + width}" y="{top + height + 28}" class="tick" text-anchor="end">games played</text>')
    ends: list[tuple[float, int]] = []
    for i, (bot, vals) in enumerate(series.items()):
        pts = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in zip(games, vals) if v is not None)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color(i)}" stroke-width="2" '
                     f'data-bot="{escape(bot)}"><title>{escape(bot)}</title></polyline>')
        last = [v for v in vals if v is not None]
        if last:
            ends.append((y(last[-1]), i))
    label_y = spread([e for e, _ in ends], 14.0, top + 4, top + height + 4)
    names = list(series)
    for (end, i), ly in zip(ends, label_y):
        # each name beside its line's last point, in its colour (style, not the fill attribute, which the
        # stylesheet's text rules would override), joined to the point when it had to move to stay apart
        c = color(i)
        parts.append(f'<g class="legend" data-bot="{escape(names[i])}">'
                     f'<line x1="{left + width + 2}" x2="{left + width + 10}" y1="{end:.1f}" y2="{ly:.1f}" '
                     f'style="stroke:{c}" stroke-width="1"/>'
                     f'<text x="{left + width + 12}" y="{ly + 4:.1f}" style="fill:{c}" class="legend-label">'
                     f'{escape(names[i])}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def spread(ys: list[float], gap: float, lo: float, hi: float) -> list[float]:
    """Label positions as near ``ys`` as they can be with at least ``gap`` between any two, within
    [lo, hi] when there is room; returned in the order of ``ys``."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    pos = [ys[i] for i in order]
    for _ in range(len(pos) + 1):  # push apart downwards, then shift the block up if it ran off the end
        for k in range(1, len(pos)):
            pos[k] = max(pos[k], pos[k - 1] + gap)
        over = pos[-1] - hi if pos else 0.0
        if over > 0:
            pos = [p - over for p in pos]
        for k in range(len(pos) - 2, -1, -1):
            pos[k] = min(pos[k], pos[k + 1] - gap)
        under = lo - pos[0] if pos else 0.0
        if under > 0:
            pos = [p + under for p in pos]
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = pos[k]
    return out


def latency_chart(bot: str, lat: dict[str, Any], limit_ms: float | None, index: int) -> str:
    """A bot's decision latencies as a log-scale histogram, with its median, p99, max and the clock's limit."""
    hist: list[int] = lat["hist"]
    used = [b for b, c in enumerate(hist) if c]
    if not used:
        return '<p class="empty">No timed decisions.</p>'
    limit_bin = None
    if limit_ms:
        limit_bin = math.floor((math.log10(limit_ms) + 2) * 20)
    first = max(0, min(used) - 2)
    last = min(BIN_COUNT - 1, max(used + ([limit_bin] if limit_bin is not None else [])) + 2)
    left, width, height = 10, 400, 70
    bw = width / (last - first + 1)
    peak = max(hist)

    def xv(ms: float) -> float:
        pos = (math.log10(max(ms, 1e-3)) + 2) * 20 - first
        return left + pos * bw

    def anchor(x: float, chars: int) -> str:
        """Centred under ``x``, unless that would cut the label at an edge of the chart (about 6 px a char)."""
        half = chars * 3.3
        if x - half < 0:
            return "start"
        return "end" if x + half > left + width + 10 else "middle"

    parts = [f'<svg class="chart latency" viewBox="0 0 {left + width + 10} {height + 34}" role="img" '
             f'aria-label="decision latency of {escape(bot)}">']
    for b in range(first, last + 1):
        if hist[b]:
            h = max(1.0, hist[b] / peak * height)
            parts.append(f'<rect x="{left + (b - first) * bw:.1f}" y="{height - h:.1f}" width="{max(bw - 0.5, 0.5):.1f}" '
                         f'height="{h:.1f}" fill="{color(index)}"><title>{bin_edge(b):.3g}-{bin_edge(b + 1):.3g} ms: '
                         f'{hist[b]}</title></rect>')
    marks = [("median", lat.get("median"), "#111827"), ("p99", lat.get("p99"), "#b45309"),
             ("max", lat.get("max"), "#7c3aed"), ("limit", limit_ms, "#dc2626")]
    for i, (name, v, c) in enumerate(marks):
        if v:
            parts.append(f'<line x1="{xv(v):.1f}" x2="{xv(v):.1f}" y1="0" y2="{height}" stroke="{c}" stroke-width="1.5" '
                         f'stroke-dasharray="{"4 2" if name == "limit" else "none"}"><title>{name} {v:.3g} ms</title></line>'
                         f'<text x="{xv(v):.1f}" y="{height + 12 + 10 * (i % 2)}" style="fill:{c}" class="tick" '
                         f'text-anchor="{anchor(xv(v), len(name))}">{name}</text>')
    for decade in range(-2, 6):
        ms = 10.0 ** decade
        if first <= (decade + 2) * 20 <= last:
            parts.append(f'<text x="{xv(ms):.1f}" y="{height + 32}" class="tick axis" '
                         f'text-anchor="{anchor(xv(ms), len(f"{ms:g} ms"))}">{ms:g} ms</text>')
    parts.append("</svg>")
    return "".join(parts)
