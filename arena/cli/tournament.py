"""The tournament commands: ``arena validate`` (every problem of a file at once), ``arena init``
(the starter file) and ``arena run`` (a whole tournament, with its progress view)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail
from arena.cli.choices import ProgressMode, TableFormat
from arena.cli.folder_text import SET_ASIDE, _done_count, _render, _shown_path, _standings_now
from arena.cli.rules_args import _rules as _rules
from arena.cli.rules_args import _toml_value as _toml_value
from arena.cli.seats import _check_sandbox
from arena.errors import ArenaError


def _load_tournament(file: Path, out: Path | None = None):
    from dataclasses import replace

    from arena.tournament.config import output_problem, validate_file

    t, errors = validate_file(file, check_output=out is None)
    if errors:
        for e in errors:
            typer.echo(str(e), err=True)
        typer.echo(f"{file}: {len(errors)} problem(s); nothing was run", err=True)
        raise typer.Exit(2)
    assert t is not None
    if out is not None:
        problem = output_problem(out)
        if problem:
            fail(f"--out: {problem}")
        t = replace(t, output=str(out.resolve()))
    return t


@app.command()
def validate(
    file: Annotated[Path, typer.Argument(help="A tournament file (TOML).")],
    start: Annotated[bool, typer.Option("--start", help="Also start every bot once, in its sandbox, and wait for its hello (as `arena run` does before its first game).")] = False,
) -> None:
    """Check a tournament file without running it: every problem at once, with key and line."""
    from arena.tournament import schedule
    from arena.untrusted import shown

    t = _load_tournament(file)
    if start:
        _start_check(t)
    gauntlet = f" (gauntlet: {', '.join(map(shown, t.challengers))} against the rest)" if t.format == "gauntlet" else ""
    typer.echo(f"{file}: ok: {shown(t.name)}, {t.variant}, {len(t.bots)} bots at {t.seats}-seat tables{gauntlet}, "
               f"{schedule.table_count(t)} tables x {t.deal_sets} deal-sets, {schedule.total_games(t)} games"
               + ("; every bot started and said hello" if start else ""))


def _start_check(t: Any) -> None:
    """`validate --start`: start every bot once (logs in a temporary folder); a sentence per bot that failed, exit 2."""
    import shutil
    import tempfile

    from arena.tournament import startup

    _check_sandbox(t.sandbox)
    logs = Path(tempfile.mkdtemp(prefix="arena-start-"))
    try:
        failed = startup.check(t, logs, hide=(t.output_dir.resolve(),))  # as in a run: results hidden from bots
    except KeyboardInterrupt:
        typer.echo("interrupted: every bot process was stopped", err=True)
        raise typer.Exit(130) from None
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    from arena.untrusted import shown

    for why in failed:
        typer.echo(shown(why), err=True)  # a bot's own output is quoted in it
    if failed:
        fail(f"{len(failed)} bot(s) did not start")


@app.command()
def init(
    file: Annotated[Path, typer.Argument(help="Where to write the starter file.")] = Path("tournament.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a starter tournament file (every option shown with its default)."""
    from arena.tournament.config import starter_toml

    if file.exists() and not force:
        fail(f"{file} exists; use --force to overwrite it")
    if file.is_dir():
        fail(f"{file} is a folder; give the path of the file to write")
    try:
        file.write_text(starter_toml(), encoding="utf-8")
    except OSError as e:
        fail(f"cannot write {file}: {e.strerror or e}")
    typer.echo(f"wrote {file}; check it with `arena validate {file}` and run it with `arena run {file}`")


@app.command()
def run(
    file: Annotated[Path, typer.Argument(help="A tournament file (TOML).")],
    out: Annotated[Path | None, typer.Option("--out", help="Results folder (default: the file's `output`).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run in the same folder.")] = False,
    fmt: Annotated[TableFormat, typer.Option("--format", help="Standings format at the end: table, md, csv, json.")] = "table",
    no_sandbox: Annotated[bool, typer.Option("--no-sandbox", help="Run the bots without a sandbox (as sandbox = false in the file); only for bots you trust.")] = False,
    drop_bad_lines: Annotated[bool, typer.Option("--drop-bad-lines", help="With --resume: move journal lines that do not verify (or are outside the schedule, or a second result) to journal.rejected.jsonl and go on, instead of stopping.")] = False,
    progress_mode: Annotated[ProgressMode, typer.Option("--progress", help="auto (a progress line on a terminal, else one line per game), bar, lines or none.")] = "auto",
    standings_every: Annotated[int, typer.Option("--standings-every", min=0, help="Print the standings after every N games (0: only at the end).")] = 0,
    events: Annotated[Path | None, typer.Option("--events", help="Append a JSON Lines stream of run and game starts, results and failures to FILE, for other tools.")] = None,
    accept_changed: Annotated[bool, typer.Option("--accept-changed", help="With --resume: go on with bots whose program changed since the folder's first run (a warning each; their new fingerprints are recorded), instead of stopping.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Standings table with every column and the crosstable (the default fits 100 columns).")] = False,
    report: Annotated[bool, typer.Option("--report", help="Keep an HTML report in OUT/report.html, rewritten every --report-every games; open it in a browser, it reloads itself.")] = False,
    report_every: Annotated[int, typer.Option("--report-every", min=1, help="With --report: rewrite the report after this many games.")] = 10,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Play the games on the Dask cluster whose scheduler is at this address (tcp://HOST:8786), as \\[executor] cluster in the file.")] = None,
) -> None:
    """Run a whole tournament: validate, start every bot once, play every game in parallel, journal, standings."""
    from arena.tournament import designs, schedule
    from arena.tournament.progress import RunView, choose_mode
    from arena.tournament.runner import run as run_tournament
    from arena.untrusted import shown

    if events is not None:
        try:
            events.parent.mkdir(parents=True, exist_ok=True)
            with open(events, "a"):
                pass
        except OSError as e:
            fail(f"--events {events}: cannot write it: {e.strerror or e}")
    t = _load_tournament(file, out)
    if no_sandbox or events is not None:
        from dataclasses import replace

        t = replace(t, sandbox=t.sandbox and not no_sandbox,
                    arena_files=(str(events.resolve()),) if events is not None else ())  # not a bot's program
    _check_sandbox(t.sandbox)
    folder = t.output_dir
    total = schedule.total_games(t)
    on_cluster = cluster or t.executor.cluster
    where = f"on the Dask cluster at {on_cluster}" if on_cluster else f"concurrency {t.concurrency}"
    typer.echo(f"{shown(t.name)}: {total} games ({schedule.table_count(t)} tables x {t.deal_sets} deal-sets x "
               f"{len(designs.seatings(t.seats, t.seating))} seatings), {where}; results in {_shown_path(folder)}",
               err=True)
    live = None
    if report:
        from arena.report.live import LiveReport

        live = LiveReport(folder, report_every, lambda m: typer.echo(m, err=True))

    def on_progress(_summary: Any, entry: Any) -> None:
        display.finished(entry)
        if live is not None:
            live.game_done(display.played)

    launched = sum(1 for b in t.bots if not b.remote)
    display = RunView(choose_mode(str(progress_mode)), total, _done_count(folder) if resume else 0,
                   standings_every=standings_every, standings=lambda: _standings_now(folder), events=events,
                   phase=f"starting each of the {launched} bots once to check it says hello..." if launched else None)
    outcome = "stopped"
    try:
        summary = run_tournament(t, folder, resume=resume, on_progress=on_progress, drop_bad_lines=drop_bad_lines,
                                 on_start=display.started, accept_changed=accept_changed, cluster=cluster,
                                 announce=lambda m: typer.echo(shown(m), err=True))  # it names remote bots
        outcome = "interrupted" if summary.interrupted else "finished"
    except KeyboardInterrupt:  # before the first game (the start-up check): nothing was played
        display.close("interrupted")
        typer.echo("interrupted before the first game: every bot process was stopped", err=True)
        raise typer.Exit(130) from None
    except ArenaError as e:  # said by the one handler, after the progress display is closed
        display.close(outcome)
        e.retry = f"arena run {file} --resume" + (f" --out {out}" if out else "")
        raise
    display.close(outcome)
    if live is not None and (path := live.finish()) is not None:
        typer.echo(f"report: {path}", err=True)
    for why in summary.set_aside:  # a journal line (bots' names in it) is quoted
        typer.echo(shown(f"warning: {SET_ASIDE}{why.removeprefix(SET_ASIDE)}"), err=True)
    for why in summary.accepted:
        typer.echo(shown(f"warning: {why}; played as it is now (--accept-changed), its new fingerprint recorded"),
                   err=True)
    if summary.interrupted:
        typer.echo(f"interrupted after {summary.played} game(s) this run; continue with: arena run {file} --resume"
                   + (f" --out {out}" if out else ""), err=True)
        raise typer.Exit(130)
    typer.echo(f"{summary.played} game(s) played, {summary.skipped} already done, in {summary.elapsed_s:.1f}s; "
               f"{summary.bot_starts} bot process start(s)", err=True)
    typer.echo(_render(folder, str(fmt), wide=wide))
