"""The ``arena ladder`` commands (a typer sub-app registered in ``arena.cli``): thin, errors as one sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

ladder_app = typer.Typer(
    no_args_is_help=True,
    help="Run a competition: a ladder that takes submissions and rates them as games land.",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def fail(message: str, code: int = 2) -> NoReturn:
    from arena.untrusted import shown

    typer.echo(f"error: {shown(message)}", err=True)  # one line, whatever an entrant's name or file it quotes
    raise typer.Exit(code)


@ladder_app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="The ladder's folder (made now; it must not hold a ladder yet).")],
    variant: Annotated[str, typer.Option("--variant", metavar="V", help="The preset the ladder plays (arena variants lists them).")] = "basic",
    seats: Annotated[int, typer.Option("--seats", metavar="K", help="Players per table.")] = 2,
    name: Annotated[str | None, typer.Option("--name", help="The ladder's name (default: the folder's name).")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Games at once.")] = 2,
) -> None:
    """Make a ladder: DIR/ladder.toml (rules, clocks, limits, the final's settings) and its folders."""
    from arena.ladder.layout import BATCHES, ENTRANTS, INBOX, LADDER_FILE
    from arena.ladder.settings import check_text, starter_text

    if (folder / LADDER_FILE).exists():
        fail(f"{folder / LADDER_FILE} exists already; edit it, or choose another folder")
    text = starter_text(name or folder.resolve().name, variant, seats, concurrency)
    _s, errors = check_text(text, str(folder / LADDER_FILE))
    if errors:
        first = errors[0]
        fail(f"--{first.key}: {first.message}" if first.key in ("variant", "seats", "name", "concurrency")
             else first.message)
    try:
        for sub in (INBOX, ENTRANTS, BATCHES):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        (folder / LADDER_FILE).write_text(text, encoding="utf-8")
    except OSError as e:
        fail(f"cannot make the ladder: {e.filename}: {e.strerror}")
    typer.echo(f"ladder: {folder / LADDER_FILE}; submit bots with: arena ladder submit {folder} BOT_FOLDER --name NAME")


@ladder_app.command()
def check(folder: Annotated[Path, typer.Argument(help="The ladder's folder.")]) -> None:
    """Check DIR/ladder.toml: every problem, one line each (file:line: key: what); exit 2 on any."""
    from arena.ladder.settings import problems

    found = problems(folder)
    for p in found:
        typer.echo(p, err=True)
    if found:
        raise typer.Exit(2)
    typer.echo(f"{folder}: the ladder file is valid")


@ladder_app.command(name="submit")
def submit_cmd(
    folder: Annotated[Path, typer.Argument(help="The ladder's folder.")],
    bot: Annotated[Path, typer.Argument(help="The bot's folder: its files and a bot.toml with command = \"...\".")],
    name: Annotated[str, typer.Option("--name", help="The entrant's name (letters, digits, - and _).")],
) -> None:
    """Enter a bot as NAME's next version, once copied, fingerprinted and passed by check-bot; exit 1 if refused."""
    from arena.ladder.layout import LadderError
    from arena.ladder.submit import submit
    from arena.untrusted import shown

    try:
        out = submit(folder, bot, name)
    except LadderError as e:
        fail(str(e))
    except KeyboardInterrupt:
        typer.echo("interrupted: the check was stopped and this version refused", err=True)
        raise typer.Exit(130) from None
    if out.accepted:
        typer.echo(f"{shown(name)} version {out.version}: accepted (the check's report: {out.report})")
        return
    typer.echo(f"{shown(name)} version {out.version}: refused: {shown(out.reason)} (the check's report: {out.report})")
    raise typer.Exit(1)


@ladder_app.command(name="run")
def run_cmd(
    folder: Annotated[Path, typer.Argument(help="The ladder's folder.")],
    batches: Annotated[int | None, typer.Option("--batches", help="Stop after this many batches (default: run until stopped).")] = None,
    games: Annotated[int | None, typer.Option("--games", help="Stop once this many games were played in this run.")] = None,
    idle_exit: Annotated[bool, typer.Option("--idle-exit", help="Stop when too few versions can play, instead of waiting for submissions.")] = False,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Play the games on the Dask cluster whose scheduler is at this address (tcp://HOST:8786), as arena run --cluster.")] = None,
    ship: Annotated[str, typer.Option("--ship", help="On a cluster: upload (each version's folder sent to the workers) or path (the same ladder folder on every worker).")] = "upload",
) -> None:
    """Play batches of games until stopped (Ctrl-C, SIGTERM): new versions first; resumes after any kill."""
    from arena.errors import ArenaError
    from arena.ladder.layout import LadderError
    from arena.ladder.run import Where, run_ladder
    from arena.untrusted import shown

    if cluster is not None and "://" not in cluster:
        fail(f"--cluster: expected a scheduler address such as tcp://host:8786, got {cluster!r}")
    if ship not in ("upload", "path"):
        fail(f"--ship: expected upload or path, got {ship!r}")
    try:
        stats = run_ladder(folder.resolve(), batches, games, say=lambda m: typer.echo(shown(m)), idle_exit=idle_exit,
                           where=Where(cluster, ship))
    except (LadderError, ArenaError) as e:  # ArenaError: a cluster that cannot be reached or used (ClusterError)
        fail(str(e))
    end = "stopped" if stats.interrupted else "done"
    typer.echo(f"{end}: {stats.batches} batch(es), {stats.games} game(s) in this run; "
               f"continue with: arena ladder run {folder}")
    if stats.interrupted:
        raise typer.Exit(130)


@ladder_app.command()
def freeze(folder: Annotated[Path, typer.Argument(help="The ladder's folder.")]) -> None:
    """Stop taking submissions (games go on among the versions entered)."""
    from arena.ladder.layout import LadderError, locked, require_ladder, set_state, state

    try:
        require_ladder(folder)
    except LadderError as e:
        fail(str(e))
    with locked(folder):
        if state(folder) == "open":
            set_state(folder, "frozen")
    typer.echo(f"{folder}: {state(folder)}; no more submissions")


@ladder_app.command(name="final")
def final_cmd(
    folder: Annotated[Path, typer.Argument(help="The ladder's folder.")],
    top: Annotated[int | None, typer.Option("--top", metavar="N", help="Finalists: the top N active versions (default: top in ladder.toml's final table).")] = None,
) -> None:
    """Freeze the ladder and play a full duplicate round robin among the top N, sized for the final's precision_elo."""
    from arena.ladder.final import play_final
    from arena.ladder.layout import LadderError
    from arena.ladder.snapshot import snapshot
    from arena.untrusted import shown

    if top is not None and top < 2:
        fail(f"--top: expected 2 or more, got {top}")
    try:
        plan, played, interrupted = play_final(folder.resolve(), top)
    except LadderError as e:
        fail(str(e))
    if plan is not None:
        typer.echo(f"final: {len(plan.bots)} finalists, {plan.deal_sets} deal-set(s) per table, {plan.games} games ({plan.why})")
    if interrupted:
        typer.echo(f"interrupted after {played} game(s); continue with: arena ladder final {folder}", err=True)
        raise typer.Exit(130)
    final = snapshot(folder)["final"] or {"standings": []}
    for row in final["standings"]:
        pm = "" if row["low"] is None or row["high"] is None else f" [{row['low']:.0f}, {row['high']:.0f}]"
        typer.echo(f"{row['rank']:>3}. {shown(row['entrant'])} v{row['version']}: {row['rating']:.0f}{pm}, "
                   f"{row['games']} games" + (" (provisional)" if row["provisional"] else ""))


@ladder_app.command(name="export")
def export_cmd(folder: Annotated[Path, typer.Argument(help="The ladder's folder.")]) -> None:
    """Write DIR/exports/: results.json, leaderboard.csv, final.csv and records.tar.gz."""
    from arena.ladder.export import export
    from arena.ladder.layout import LadderError

    try:
        for path in export(folder):
            typer.echo(str(path))
    except LadderError as e:
        fail(str(e))


@ladder_app.command()
def status(folder: Annotated[Path, typer.Argument(help="The ladder's folder.")]) -> None:
    """The leaderboard as it stands now."""
    from arena.ladder.layout import LadderError, require_ladder
    from arena.ladder.snapshot import snapshot
    from arena.untrusted import shown

    try:
        require_ladder(folder)
        snap = snapshot(folder)
    except LadderError as e:
        fail(str(e))
    head = snap["ladder"]
    typer.echo(f"{shown(head['name'])}: {head['variant']}, {head['seats']} seats, {head['state']}, {head['games']} games")
    for row in snap["leaderboard"]:
        rating = "-" if row["rating"] is None else f"{row['rating']:.0f}"
        typer.echo(f"{row['rank']:>3}. {shown(row['entrant'])} v{row['version']}: {rating}, {row['games']} games, "
                   f"{row['status']}" + (" (provisional)" if row["provisional"] else ""))


@ladder_app.command()
def serve(
    folder: Annotated[Path, typer.Argument(help="The ladder's folder.")],
    listen: Annotated[str, typer.Option("--listen", metavar="HOST:PORT", help="Where to listen (0.0.0.0: every interface, with a warning; port 0: any free port).")] = "127.0.0.1:8000",
) -> None:
    """Serve the live leaderboard, entrants' pages and replays over HTTP, read-only, until Ctrl-C or SIGTERM."""
    import signal

    from arena.ladder.serve import ServeError, make_server, parse_listen

    try:
        host, port = parse_listen(listen)
        server = make_server(folder, host, port)
    except ServeError as e:
        fail(str(e))
    if host in ("0.0.0.0", "::", ""):
        typer.echo(f"warning: listening on every interface ({listen}): anyone who can reach this machine sees the "
                   "leaderboard, the entrants' pages and the replays", err=True)

    def stop(_sig: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    typer.echo(f"serving {folder} at http://{shown_host}:{bound_port}/ (read-only; Ctrl-C stops)", err=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
