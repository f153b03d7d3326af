"""The ``arena`` command line.

Each command is a thin layer over a module that does the work; errors are
one sentence on stderr with a meaningful exit code (2 for bad input or a run
that had to stop, 1 for a failed check), never a traceback.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail
from arena.cli.folder_text import SET_ASIDE, _done_count, _render, _shown_path, _standings_now
from arena.cli.rules_args import _rules as _rules
from arena.cli.rules_args import _toml_value as _toml_value
from arena.cli.seats import _check_sandbox
from arena.errors import ArenaError
from arena.rules.cards import CardError, parse, text
from arena.rules.log import DealEnd
from arena.rules.melds import MeldError, form_meld, opening_value
from arena.rules.options import CHOICES, DESCRIPTIONS, OPTION_NAMES, resolve
from arena.rules.presets import PRESETS, SOURCES

VARIANTS_COLUMN_MIN = 16  # characters of a preset's column in `arena variants`


@app.command()
def variants(
    fmt: Annotated[str, typer.Option("--format", help="text (tables) or json (the presets, and what each option means, as one JSON object).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """List every preset with all its option values, and what each option means."""
    as_json = _wants_json(fmt, as_json)
    data: dict[str, Any] = {name: {"source": SOURCES[name], **resolve(name).to_data()} for name in PRESETS}
    if as_json:
        typer.echo(json.dumps({**data, "descriptions": dict(DESCRIPTIONS)}, indent=2))
        return
    import re

    from rich.console import Console
    from rich.table import Table

    console = Console()  # the terminal's width: as many presets side by side as fit (VARIANTS_COLUMN_MIN each)
    option_w = max(map(len, OPTION_NAMES)) + 3
    per_table = max(1, min(len(PRESETS), (console.width - option_w - 1) // (VARIANTS_COLUMN_MIN + 3)))
    names = list(PRESETS)
    console.print("Presets (RULES.md section 10), after: " + "; ".join(
        f"{k}: {re.sub(r'^seed [0-9]+, ', '', v)}" for k, v in SOURCES.items()), markup=False, highlight=False)
    for first in range(0, len(names), per_table):
        group = names[first:first + per_table]
        table = Table()
        table.add_column("option", no_wrap=True)
        for name in group:
            table.add_column(name, min_width=min(VARIANTS_COLUMN_MIN, console.width))
        for opt in OPTION_NAMES:  # every option, also those a preset leaves unset (shown as —)
            row = []
            for name in group:
                v = data[name].get(opt, "—")
                if isinstance(v, dict):
                    v = ", ".join(f"{k}p: {x}" if k not in ("A", "JK") else f"{k}={x}" for k, x in v.items())
                elif isinstance(v, list):
                    v = ", ".join(map(str, v)) if opt != "players" else f"{v[0]}-{v[1]}"
                row.append(str(v))
            table.add_row(opt, *row)
        console.print(table)
    meanings = Table(title="What each option means (RULES.md section 9)")
    meanings.add_column("option")
    meanings.add_column("meaning")
    for opt in OPTION_NAMES:
        meanings.add_row(opt, DESCRIPTIONS[opt])
    console.print(meanings)
    console.print("Option values: " + "; ".join(f"{k}: {' / '.join(v)}" for k, v in CHOICES.items()), markup=False,
                  highlight=False)


@app.command()
def meld(
    variant: Annotated[str, typer.Argument(help="Preset name, e.g. german.")],
    cards: Annotated[list[str], typer.Argument(help="Cards in order, e.g. 7H 8H JK.")],
    fmt: Annotated[str, typer.Option("--format", help="text or json (one JSON object).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """Say whether CARDS form a valid meld in VARIANT, which kind, what each wild stands for."""
    as_json = _wants_json(fmt, as_json)
    rules = _rules(variant)
    marked = frozenset(i for i, c in enumerate(cards) if c.endswith("*"))
    try:
        parsed = [parse(c.rstrip("*")) for c in cards]
    except CardError as e:
        fail(str(e))
    result: dict[str, object] = {"variant": variant, "cards": [text(c) for c in parsed]}
    try:
        m = form_meld(parsed, rules, marked)
        result.update(
            valid=True, kind=m.kind, reason=None,
            wilds=[w for i in range(len(m.cards)) if (w := m.wild_text(i)) is not None],
            stands_for=[m.wild_text(i) for i in range(len(m.cards))],
            opening_value=opening_value(m, rules),
        )
    except MeldError as e:
        result.update(valid=False, kind=None, reason=str(e), wilds=[], stands_for=[], opening_value=None)
    if as_json:
        typer.echo(json.dumps(result))
    elif result["valid"]:
        wilds = ", ".join(f"{c} = {w}" for c, w in zip(result["cards"], result["stands_for"]) if w)  # type: ignore[call-overload]
        typer.echo(f"valid {result['kind']}: {' '.join(result['cards'])}"  # type: ignore[arg-type]
                   + (f"; wilds: {wilds}" if wilds else "") + f"; opening value {result['opening_value']}")
    else:
        typer.echo(f"invalid: {' '.join(result['cards'])}: {result['reason']}")  # type: ignore[arg-type]
    raise typer.Exit(0 if result["valid"] else 1)


@app.command()
def simulate(
    variant: Annotated[str, typer.Argument(help="Preset name.")],
    players: Annotated[int, typer.Option("--players", "-p", help="Seats at the table.")] = 2,
    games: Annotated[int, typer.Option("--games", "-g", help="Games to play.")] = 10,
    seed: Annotated[int, typer.Option("--seed", "-s", help="Seed of the first game; game i uses seed + i.")] = 1,
    policy: Annotated[list[str] | None, typer.Option("--policy", help="Policy per seat: random, greedy, or the house bot house-easy, house-medium, house-hard (a CPU budget per decision); the last one fills the rest.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json (one JSON object per game, then a summary).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """Self-play with built-in policies, in-process (no bots, no sockets)."""
    as_json = _wants_json(fmt, as_json)
    from arena.policies import POLICIES
    from arena.selfplay import play_game, policies_for

    rules = _rules(variant)
    lo, hi = rules.players
    if not lo <= players <= hi:
        fail(f"--players: {variant} is played by {lo} to {hi} players, not {players}")
    if games < 1:
        fail("--games: must be at least 1")
    names = list(policy or ["greedy"])
    for n in names:
        if n not in POLICIES:
            fail(f"--policy: unknown policy {n!r}; expected one of {', '.join(POLICIES)}")
    names = (names + [names[-1]] * players)[:players]
    start = time.perf_counter()
    decisions = 0
    wins = [0] * players
    place_sum = [0] * players
    ends: dict[str, int] = {}
    capped = 0
    for i in range(games):
        g, d = play_game(rules, policies_for(rules, names, seed + i), seed + i)
        decisions += d
        placings = g.placings()
        turn_caps = sum(1 for e in g.log if isinstance(e, DealEnd) and e.reason == "turn_cap")
        capped += turn_caps
        ends[g.end_reason] = ends.get(g.end_reason, 0) + 1
        for s, p in enumerate(placings):
            place_sum[s] += p
            wins[s] += p == 1
        row = {"game": i, "seed": seed + i, "end": g.end_reason, "deals": g.deal_no, "totals": g.totals,
               "placings": placings, "turn_capped_deals": turn_caps}
        if as_json:
            typer.echo(json.dumps(row))
        else:
            typer.echo(f"game {i:>4} seed {seed + i:>6}  end {g.end_reason:<11} deals {g.deal_no:>3}  "
                       f"totals {g.totals}  placings {placings}" + (f"  turn-capped deals {turn_caps}" if turn_caps else ""))
    summary = {"variant": variant, "players": players, "policies": names, "games": games, "ends": ends,
               "wins": wins, "avg_place": [round(p / games, 3) for p in place_sum], "turn_capped_deals": capped}
    typer.echo(json.dumps({"summary": summary}) if as_json else
               f"summary: ends {ends}; wins by seat {wins}; average place {summary['avg_place']}; turn-capped deals {capped}")
    elapsed = time.perf_counter() - start
    print(f"{games} games, {decisions} decisions in {elapsed:.2f}s: {games / elapsed:.1f} games/s, "
          f"{decisions / elapsed:.0f} decisions/s", file=sys.stderr)


from arena.cli import play  # noqa: E402, F401 - registers play and replay here, in this order in --help


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
    fmt: Annotated[str, typer.Option("--format", help="Standings format at the end: table, md, csv, json.")] = "table",
    no_sandbox: Annotated[bool, typer.Option("--no-sandbox", help="Run the bots without a sandbox (as sandbox = false in the file); only for bots you trust.")] = False,
    drop_bad_lines: Annotated[bool, typer.Option("--drop-bad-lines", help="With --resume: move journal lines that do not verify (or are outside the schedule, or a second result) to journal.rejected.jsonl and go on, instead of stopping.")] = False,
    progress_mode: Annotated[str, typer.Option("--progress", help="auto (a progress line on a terminal, else one line per game), bar, lines or none.")] = "auto",
    standings_every: Annotated[int, typer.Option("--standings-every", help="Print the standings after every N games (0: only at the end).")] = 0,
    events: Annotated[Path | None, typer.Option("--events", help="Append a JSON Lines stream of run and game starts, results and failures to FILE, for other tools.")] = None,
    accept_changed: Annotated[bool, typer.Option("--accept-changed", help="With --resume: go on with bots whose program changed since the folder's first run (a warning each; their new fingerprints are recorded), instead of stopping.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Standings table with every column and the crosstable (the default fits 100 columns).")] = False,
    report: Annotated[bool, typer.Option("--report", help="Keep an HTML report in OUT/report.html, rewritten every --report-every games; open it in a browser, it reloads itself.")] = False,
    report_every: Annotated[int, typer.Option("--report-every", help="With --report: rewrite the report after this many games.")] = 10,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Play the games on the Dask cluster whose scheduler is at this address (tcp://HOST:8786), as [executor] cluster in the file.")] = None,
) -> None:
    """Run a whole tournament: validate, start every bot once, play every game in parallel, journal, standings."""
    from arena.tournament import schedule
    from arena.tournament.progress import MODES, RunView, choose_mode
    from arena.tournament.runner import run as run_tournament
    from arena.untrusted import shown

    if fmt not in ("table", "md", "csv", "json"):
        fail(f"--format: expected table, md, csv or json, got {fmt!r}")
    if progress_mode not in MODES:
        fail(f"--progress: expected one of {', '.join(MODES)}, got {progress_mode!r}")
    if standings_every < 0:
        fail(f"--standings-every: expected 0 or more games, got {standings_every}")
    if events is not None:
        try:
            events.parent.mkdir(parents=True, exist_ok=True)
            with open(events, "a"):
                pass
        except OSError as e:
            fail(f"--events {events}: cannot write it: {e.strerror or e}")
    if report_every < 1:
        fail(f"--report-every: expected 1 or more, got {report_every}")
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
               f"{len(schedule.seatings(t.seats, t.seating))} seatings), {where}; results in {_shown_path(folder)}",
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
    display = RunView(choose_mode(progress_mode), total, _done_count(folder) if resume else 0,
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
    typer.echo(_render(folder, fmt, wide=wide))


from arena.cli import results  # noqa: E402, F401 - registers its commands here, in this order in --help


@app.command(name="new-bot")
def new_bot_cmd(
    name: Annotated[str, typer.Argument(help="The bot's name; also the folder written (NAME/ in the current folder).")],
    lang: Annotated[str, typer.Option("--lang", help="python (ZeroMQ, the client library), js (Node.js, stdio) or c (C99, stdio).")] = "python",
) -> None:
    """Write a folder with a working bot in LANG, a README of how to run it and a tournament file that enters it."""
    from arena.newbot import LANGUAGES, bot_command, new_bot

    try:
        folder = new_bot(name, lang)
    except OSError as e:
        fail(f"cannot write {e.filename or name}: {e.strerror or e}")
    spec = LANGUAGES[lang]
    typer.echo(f"wrote {folder}/: {spec.file}, README.md, tournament.toml; try it:")
    typer.echo(f"  cd {folder}")
    if spec.build:
        typer.echo(f"  {spec.build}")
    typer.echo(f'  arena check-bot "{bot_command(lang)}"')
    typer.echo(f'  arena play basic greedy "{bot_command(lang)}"')


from arena.cli import match  # noqa: E402, F401 - registers match and check-bot here, in this order in --help
from arena.ladder.cli import ladder_app  # noqa: E402 - its commands live with the ladder (arena/ladder/cli.py)

app.add_typer(ladder_app, name="ladder")


def main() -> None:  # pragma: no cover - console entry point
    app(prog_name="arena")


if __name__ == "__main__":  # pragma: no cover
    app(prog_name="arena")
