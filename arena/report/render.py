"""Pages to files: the report of a results folder and the replay viewer of a record (docs/ARCHITECTURE.md section 8).

``write_report(folder, out)`` writes ``out`` (default ``FOLDER/report.html``),
one self-contained page, and beside it a folder named after it
(``report/``) with the viewer's script and style and one viewer page per game
(``report/games/g000012.html``: the record's JSON embedded, since a file://
page may not fetch another file).  A game's page is written once every
seating of its deal-set is journaled (a replay shows every hand, and its
twins are dealt the same cards), and again only if its record changed;
decision latencies of each game are kept in
``report/latency.json`` so a rewrite reads only new records.
``write_viewer(record, out)`` writes one self-contained viewer page.
Every file is written to a temporary name and renamed, so a browser that
reloads mid-write sees the old page or the new one.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from arena.record_check import RecordError
from arena.report import charts
from arena.report.folderdata import clock_of_folder, collect, complete_sets, game_row, merge_latency, seatings_per_set
from arena.report.gamedata import latency_summary, quick_record_data, record_data, script_json

HERE = Path(__file__).parent
ASSETS = ("viewer.css", "table_state.js", "viewer.js")
LATENCY_CACHE = "latency.json"


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson_script"] = script_json
    return env


def _asset(name: str) -> str:
    return (HERE / "static" / name).read_text(encoding="utf-8")


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; pages are for reading
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def viewer_page(data: dict[str, Any], inline: bool, asset_prefix: str = "", report_link: str | None = None) -> str:
    h = data["header"]
    title = f"{h.get('rules', {}).get('name', '?')} game {h.get('game_id', '')}".strip()
    assets = {"viewer_css": _asset("viewer.css"), "table_state_js": _asset("table_state.js"),
              "viewer_js": _asset("viewer.js")} if inline else {}
    return _env().get_template("viewer.html").render(
        title=title, inline=inline, assets=assets, asset_prefix=asset_prefix, report_link=report_link,
        record_json=script_json(data))


def write_viewer(record: Path, out: Path | None = None) -> Path:
    """One self-contained viewer page for ``record`` (default: beside it, as .html); RecordError if unreadable."""
    out = out or record.with_suffix(".html")
    write_atomic(out, viewer_page(record_data(record), inline=True))
    return out


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _replays(folder: Path, entries: list[Any], assets_dir: Path,
             report_name: str) -> tuple[dict[int, str], set[int], list[Any], list[str]]:
    """Write the viewer page of every game that lacks one; their links, the games held, latency summaries
    and problems.

    A game's page (and link) is held until every seating of its deal-set is journaled: a replay shows every
    hand, and its twins still to be played are dealt the same cards.
    """
    games_dir = assets_dir / "games"
    cache_path = assets_dir / LATENCY_CACHE
    cache_data = _read_cache(cache_path)
    hrefs: dict[int, str] = {}
    held: set[int] = set()
    summaries: list[Any] = []
    problems: list[str] = []
    changed = False
    clock = clock_of_folder(folder)
    released = complete_sets(entries, seatings_per_set(folder))
    for e in entries:
        if not e.record:
            continue
        record = folder / e.record
        page = games_dir / f"{Path(e.record).stem}.html"
        shown = (e.table, e.set) in released
        if not shown:
            held.add(e.index)
        try:
            size = record.stat().st_size
        except OSError:
            problems.append(f"game {e.index}: its record {e.record} is missing")
            continue
        cached = cache_data.get(str(e.index))
        fresh = bool(cached and cached.get("size") == size)
        if not fresh or (shown and not page.is_file()):
            try:
                data = quick_record_data(record, clock)
            except RecordError as err:
                problems.append(f"game {e.index}: no replay: {err}")
                continue
            if shown:
                write_atomic(page, viewer_page(data, inline=False, asset_prefix="../",
                                               report_link=f"../../{report_name}"))
            cached = {"size": size, "latency": latency_summary(data["entries"], len(e.seats))}
            cache_data[str(e.index)] = cached
            changed = True
        if shown:
            hrefs[e.index] = f"{assets_dir.name}/games/{page.name}"
        else:
            page.unlink(missing_ok=True)
        assert cached is not None
        summaries.append((e, cached["latency"]))
    if changed:
        write_atomic(cache_path, json.dumps(cache_data, separators=(",", ":")))
    return hrefs, held, summaries, problems


def write_report(folder: Path, out: Path | None = None, refresh_s: int | None = 30,
                 running: bool | None = None) -> Path:
    """Write the report of a results folder (and its games' viewer pages); returns the report's path.

    A report of a tournament still running reloads itself every ``refresh_s`` seconds (None: never).
    ``running`` False says the run has stopped (e.g. interrupted): the page says so and does not reload;
    None judges by the folder (running until every game of the schedule is journaled).
    """
    out = out or folder / "report.html"
    assets_dir = out.parent / out.stem
    for name in ASSETS:
        target = assets_dir / name
        text = _asset(name)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
    model = collect(folder)
    entries = model.pop("entries")
    hrefs, held, summaries, problems = _replays(folder, entries, assets_dir, out.name)
    latency = merge_latency(summaries)
    limit = model["time"].get("decision_ms")
    rows = model["standings"]["rows"]
    # the journal is in finish order; the list is in schedule order, as the games are numbered
    games = [game_row(e, hrefs.get(e.index), e.index in held) for e in sorted(entries, key=lambda e: e.index)]
    kinds = sorted({k for g in games for k in g["kinds"]})
    html = _env().get_template("report.html").render(
        m=model, rows=rows, latency=latency, limit_ms=limit, problems=problems, held=len(held),
        stopped=running is False and not model["finished"],
        games_json=script_json(games), kinds=kinds,
        interval_svg=charts.interval_plot(rows), history_svg=charts.history_chart(model["history"]),
        latency_svgs={b: charts.latency_chart(b, latency[b], limit, i) for i, b in enumerate(model["bots"]) if b in latency},
        refresh_s=None if model["finished"] or running is False else refresh_s,
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        css=_asset("report.css"), js=_asset("report.js"), heat=_heat)
    write_atomic(out, html)
    return out


def _heat(cell: dict[str, Any] | None, scale: float) -> str:
    """Background colour of a crosstable cell: green when the row bot is ahead, red when behind, grey
    without a margin (never at the same table, or a forfeit in every game)."""
    if not cell or cell.get("mean") is None:
        return "#f3f4f6"
    v = max(-1.0, min(1.0, cell["mean"] / scale)) if scale else 0.0
    if v >= 0:
        return f"rgb({int(255 - 150 * v)},{int(255 - 40 * v)},{int(255 - 150 * v)})"
    return f"rgb(255,{int(255 + 150 * v)},{int(255 + 150 * v)})"
