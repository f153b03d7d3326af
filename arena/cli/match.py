"""``arena match`` (duplicate pairs between two bots until a sequential test decides) and
``arena check-bot`` (the protocol compliance run against one bot)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.cli.app import app, fail
from arena.cli.choices import MatchTest
from arena.cli.seats import _bot_spec, _check_bot, _check_sandbox, _odd_in_bot_folder, _unique_names
from arena.errors import ArenaError
from arena.tournament.model import MAX_CONCURRENCY


@app.command(name="match")
def match_cmd(
    bot_a: Annotated[str, typer.Argument(help="Bot A: a sample bot (random, greedy, greedy-eps10), a command line in quotes, or stdio:COMMAND.")],
    bot_b: Annotated[str, typer.Argument(help="Bot B, the same way; H1 says A is stronger than B.")],
    variant: Annotated[str, typer.Option("--variant", help="Preset name.")],
    test_kind: Annotated[MatchTest, typer.Option("--test", help="margin: nElo of the duplicate pairs' score differences (default); penta: logistic Elo of placings only, heads-up pentanomial.")] = "margin",
    seats: Annotated[int, typer.Option("--seats", min=2, max=6, help="Table size, 2 to 6; above 2 needs --opponents.")] = 2,
    opponents: Annotated[str | None, typer.Option("--opponents", help="BOT,BOT,...: the seats - 1 bots A and B each face, in the same seat on the same deal.")] = None,
    elo0: Annotated[float, typer.Option("--elo0", help="H0: A is this much stronger than B (nElo for margin, Elo for penta).")] = 0.0,
    elo1: Annotated[float | None, typer.Option("--elo1", help="H1: A is this much stronger than B (default: 20 nElo for margin, 10 Elo for penta).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Chance of accepting H1 when H0 holds.")] = 0.05,
    beta: Annotated[float, typer.Option("--beta", help="Chance of accepting H0 when H1 holds.")] = 0.05,
    max_pairs: Annotated[int, typer.Option("--max-pairs", min=1, help="Stop undecided after this many duplicate pairs (deal-sets).")] = 5000,
    out: Annotated[Path | None, typer.Option("--out", help="Results folder (default results/match-A-vs-B).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted match in the same folder.")] = False,
    time_ms: Annotated[int, typer.Option("--time-ms", min=1, help="Per-decision limit in ms (CPU time of the bot's processes, as in tournaments).")] = 1000,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=MAX_CONCURRENCY, help="Games at once.")] = 1,
    no_sandbox: Annotated[bool, typer.Option("--no-sandbox", help="Run the bots without a sandbox; only for bots you trust.")] = False,
    drop_bad_lines: Annotated[bool, typer.Option("--drop-bad-lines", help="With --resume: move journal lines that do not verify to journal.rejected.jsonl and go on, instead of stopping.")] = False,
    deals: Annotated[Path | None, typer.Option("--deals", help="A deal suite file (32 bytes; made if missing): the cards come from it, not from the folder's secret.key, so two folders or organisers deal alike.")] = None,
) -> None:
    """Duplicate pairs between two bots until a sequential test (SPRT) decides whether A is stronger than B."""
    from dataclasses import replace

    from arena.tournament import match
    from arena.tournament.config import TOURNAMENT_TIME, output_problem
    from arena.tournament.sprt import Sprt

    test_kind = str(test_kind)
    if elo1 is None:
        elo1 = 20.0 if test_kind == match.MARGIN else 10.0
    try:
        test = match.Test(test_kind, Sprt(elo0, elo1, alpha, beta), others=opponents is not None)
    except ValueError as e:
        fail(f"--elo0/--elo1/--alpha/--beta: {e}")
    others = [] if opponents is None else [x.strip() for x in opponents.split(",")]
    if any(not x for x in others):
        fail(f"--opponents: expected BOT,BOT,... without empty names, got {opponents!r}")
    if (seats > 2 or others) and len(others) != seats - 1:
        fail(f"--opponents: a {seats}-seat match needs {seats - 1} opponent(s), got {len(others)}")
    args = [bot_a, bot_b, *others]
    specs = _unique_names([_bot_spec(arg, i, False) for i, arg in enumerate(args)])
    for seat, (arg, spec) in enumerate(zip(args, specs)):
        if spec.remote:
            fail(f"bot {arg!r}: a match starts its bots itself; remote:NAME is for `arena play`")
        _check_bot(seat, arg, spec)
    folder = out or Path("results") / f"match-{specs[0].name}-vs-{specs[1].name}".replace("/", "_")
    if (problem := output_problem(folder)) is not None:
        fail(f"--out: {problem}")
    t, errors = match.tournament(specs[0], specs[1], variant, max_pairs, replace(TOURNAMENT_TIME, decision_ms=time_ms),
                                 folder.resolve(), sandbox=not no_sandbox, concurrency=concurrency,
                                 seats=seats, opponents=specs[2:])
    if t is None:
        fail("; ".join(f"--{e.key}: {e.message}" if e.key == "variant" else f"{e.key}: {e.message}" if e.key else e.message
                       for e in errors))
    if deals is not None:  # loaded (or made) by the runner, like a tournament file's deals = PATH
        t = replace(t, deals=str(deals.resolve()))
    _check_sandbox(t.sandbox)
    typer.echo(match.header_line(t, test))
    printed: list[int] = []

    def on_pair(r: match.Report) -> None:
        printed.append(r.pairs)
        typer.echo(r.progress_line())

    try:
        final, summary = match.play(t, test, resume=resume, on_pair=on_pair, drop_bad_lines=drop_bad_lines)
    except ArenaError as e:
        e.retry = f"the same `arena match` command with --resume --out {folder}"
        raise
    if printed[-1:] != [final.pairs]:
        typer.echo(final.progress_line())
    if summary is not None and summary.interrupted and final.verdict is None:
        typer.echo(f"interrupted after {final.pairs} pair(s); continue with the same command and --resume --out {folder}",
                   err=True)
        raise typer.Exit(130)
    typer.echo(final.verdict_line(max_pairs))


@app.command(name="check-bot")
def check_bot_cmd(
    bot: Annotated[str, typer.Argument(help="A sample bot (random, greedy), a command line in quotes, e.g. \"node sample_bots/js/bot.js\", or stdio:COMMAND.")],
    variant: Annotated[list[str] | None, typer.Option("--variant", metavar="V", help="Preset to check (repeatable; default: all six).")] = None,
    stdio: Annotated[bool, typer.Option("--stdio", help="The bot talks JSON lines on stdin/stdout instead of ZeroMQ.")] = False,
    seed: Annotated[int, typer.Option("--seed", "-s", help="Seed of the first game; the others follow it.")] = 1,
    time_ms: Annotated[int, typer.Option("--time-ms", min=1, help="Per-decision limit in ms.")] = 2000,
    start_ms: Annotated[int, typer.Option("--start-ms", min=1, help="Start clock: time for the bot to say hello, in ms.")] = 10000,
    tcp: Annotated[bool, typer.Option("--tcp", help="Give the bot a loopback TCP endpoint instead of an ipc one (for ZeroMQ bindings without ipc).")] = False,
    sandbox: Annotated[bool, typer.Option("--sandbox/--no-sandbox", help="Run the bot in its sandbox, as tournaments do (default).")] = True,
) -> None:
    """Protocol compliance run against one bot: one line per check, exit 1 on any failure."""
    from arena.referee.compliance import check_bot
    from arena.settings import split_transport
    from arena.untrusted import shown

    command, transport = split_transport(bot, stdio)
    if tcp and transport == "stdio":
        fail("--tcp gives a ZeroMQ bot a TCP endpoint; a stdio bot has none: drop --tcp, or --stdio (stdio:)")
    if tcp and transport == "zmq":
        transport = "tcp"
    if (odd := _odd_in_bot_folder(command)) is not None:
        fail(f"bot {command!r} cannot be started: {odd}")
    _check_sandbox(sandbox)
    try:
        report = check_bot(command, variant or None, transport, seed, time_ms, out=lambda line: typer.echo(shown(line)), start_ms=start_ms,
                           sandbox=sandbox)
    except KeyboardInterrupt:
        typer.echo("interrupted: every bot process was stopped", err=True)
        raise typer.Exit(130) from None
    raise typer.Exit(0 if report.ok else 1)
