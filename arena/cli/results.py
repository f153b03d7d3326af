"""The commands that read a results folder: ``games``, ``standings``, ``report`` and ``view``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.app import app, fail
from arena.cli.choices import FailureKind, TableFormat, TextFormat
from arena.cli.folder_text import _reading_results, _render
from arena.errors import ArenaError


@app.command()
def games(
    folder: Annotated[Path, typer.Argument(help="A results folder of `arena run`.")],
    bot: Annotated[str | None, typer.Option("--bot", help="Only games with this bot at the table (and with --failed or --kind, its own failures).")] = None,
    failed: Annotated[bool, typer.Option("--failed", help="Only games in which a seat (or --bot) failed.")] = False,
    kind: Annotated[FailureKind | None, typer.Option("--kind", help="Only games with a failure of this kind, e.g. timeout or crash.")] = None,
    fmt: Annotated[TextFormat, typer.Option("--format", help="text (a line per game, with its record path) or json (the journal entries).")] = "text",
) -> None:
    """List the games of a results folder, with their record paths: all of them, a bot's, or the failed ones."""
    import msgspec

    from arena.tournament.games import GameFilter, describe, find_games

    if not (folder / "journal.jsonl").is_file():
        fail(f"{folder}: no journal.jsonl here; is it a results folder of `arena run`?")
    with _reading_results(folder, f"arena games {folder}"):
        found = find_games(folder, GameFilter(bot, failed, None if kind is None else str(kind)))
        if bot is not None and bot not in (names := _bot_names(folder)):
            fail(f"--bot {bot!r}: no bot of that name in {folder}; the bots are: {', '.join(names)}")
    if fmt == "json":
        typer.echo(msgspec.json.encode([{**msgspec.structs.asdict(g), "record_path": str(folder / g.record)
                                         if g.record else None} for g in found]).decode())
        return
    for g in found:
        typer.echo(describe(folder, g))
    typer.echo(f"{len(found)} game(s)", err=True)


def _bot_names(folder: Path) -> list[str]:
    """The bots of a results folder: its tournament's, else those its journal seated."""
    from arena.tournament.config import RESOLVED_FILE, read_resolved
    from arena.tournament.games import GameFilter, find_games

    if (folder / RESOLVED_FILE).is_file():
        return list(read_resolved(folder).bot_names)
    return sorted({name for e in find_games(folder, GameFilter()) for name in e.seats})


@app.command(name="standings")
def standings_cmd(
    folder: Annotated[Path, typer.Argument(help="A results folder (with journal.jsonl).")],
    fmt: Annotated[TableFormat, typer.Option("--format", help="table, md, csv or json.")] = "table",
    drop_bad_lines: Annotated[bool, typer.Option("--drop-bad-lines", help="Move journal lines that do not verify (or are outside the schedule, or a second result) to journal.rejected.jsonl and count the rest, instead of stopping.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column and the crosstable (the default table fits 100 columns).")] = False,
) -> None:
    """Standings and crosstable of a results folder (only journal lines that verify are counted)."""
    if not (folder / "journal.jsonl").is_file():
        fail(f"{folder}: no journal.jsonl here; is it a results folder of `arena run`?")
    typer.echo(_render(folder, str(fmt), drop_bad_lines, wide))


@app.command(name="report")
def report_cmd(
    folder: Annotated[Path, typer.Argument(help="A results folder (with journal.jsonl), finished or still running.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="The HTML file to write (default: FOLDER/report.html); game replays go in a folder beside it named after it.")] = None,
    refresh_s: Annotated[int, typer.Option("--refresh-s", min=0, help="While the tournament runs, the page reloads itself this often, in seconds (0: never).")] = 30,
) -> None:
    """Write an HTML report of a results folder: standings, crosstable, ratings over time, latency, every game with its replay."""
    from arena.report import write_report
    from arena.tournament.config import ConfigFileError

    if not (folder / "journal.jsonl").is_file():
        fail(f"{folder}: no journal.jsonl here; is it a results folder of `arena run`?")
    try:
        path = write_report(folder, out, refresh_s or None)
    except ConfigFileError as e:
        fail(f"cannot read the results in {folder}: {e.errors[0] if e.errors else e}")
    except OSError as e:
        fail(f"cannot write the report: {e.filename or out}: {e.strerror or e}")
    except ArenaError as e:
        e.retry = f"arena standings {folder}"
        raise
    typer.echo(f"report: {path}")


@app.command()
def view(
    record: Annotated[Path, typer.Argument(help="A game record (JSON Lines) written by arena play or arena run.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="The HTML file to write (default: the record's path with .html).")] = None,
) -> None:
    """Write a replay viewer of one game: a self-contained HTML page that steps through it as a card table."""
    from arena.report import write_viewer

    try:
        path = write_viewer(record, out)
    except OSError as e:
        fail(f"cannot write the viewer: {e.filename or out}: {e.strerror or e}")
    typer.echo(f"viewer: {path}")
