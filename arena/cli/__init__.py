"""The ``arena`` command line.

Each command is a thin layer over a module that does the work; errors are
one sentence on stderr with a meaningful exit code (2 for bad input or a run
that had to stop, 1 for a failed check), never a traceback.

The app and its error handler are in ``app.py``; each group of commands is a module of its own
(``play``, ``tournament``, ``results``, ``match``), registered on import below in --help's order;
the small ones (variants, meld, simulate, new-bot) stay here.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from typing import Annotated, Any

import typer

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail
from arena.cli.choices import Language, SelfPlayPolicy, TextFormat
from arena.cli.rules_args import _rules as _rules
from arena.cli.rules_args import _toml_value as _toml_value

VARIANTS_COLUMN_MIN = 16  # characters of a preset's column in `arena variants`


@app.command()
def variants(
    fmt: Annotated[TextFormat, typer.Option("--format", help="text (tables) or json (the presets, and what each option means, as one JSON object).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """List every preset with all its option values, and what each option means."""
    from arena.rules.options import CHOICES, DESCRIPTIONS, OPTION_NAMES, resolve
    from arena.rules.presets import PRESETS, SOURCES

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
    fmt: Annotated[TextFormat, typer.Option("--format", help="text or json (one JSON object).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """Say whether CARDS form a valid meld in VARIANT, which kind, what each wild stands for."""
    from arena.rules.cards import CardError, parse, text
    from arena.rules.melds import MeldError, form_meld, opening_value

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
    games: Annotated[int, typer.Option("--games", "-g", min=1, help="Games to play.")] = 10,
    seed: Annotated[int, typer.Option("--seed", "-s", help="Seed of the first game; game i uses seed + i.")] = 1,
    policy: Annotated[list[SelfPlayPolicy] | None, typer.Option("--policy", help="Policy per seat: random, greedy, or the house bot house-easy, house-medium, house-hard (a CPU budget per decision); the last one fills the rest.")] = None,
    fmt: Annotated[TextFormat, typer.Option("--format", help="text or json (one JSON object per game, then a summary).")] = "text",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="The same as --format json.")] = False,
) -> None:
    """Self-play with built-in policies, in-process (no bots, no sockets)."""
    as_json = _wants_json(fmt, as_json)
    from arena.rules.log import DealEnd
    from arena.selfplay import play_game, policies_for

    rules = _rules(variant)
    lo, hi = rules.players
    if not lo <= players <= hi:
        fail(f"--players: {variant} is played by {lo} to {hi} players, not {players}")
    names = [str(p) for p in policy or ["greedy"]]
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


# isort: off
# The command modules register their commands on import: in this order in --help.
from arena.cli import play  # noqa: E402, F401 - play, replay
from arena.cli import tournament  # noqa: E402, F401 - validate, init, run
from arena.cli import results  # noqa: E402, F401 - games, standings, report, view
# isort: on


@app.command(name="new-bot")
def new_bot_cmd(
    name: Annotated[str, typer.Argument(help="The bot's name; also the folder written (NAME/ in the current folder).")],
    lang: Annotated[Language, typer.Option("--lang", help="python (ZeroMQ, the client library), js (Node.js, stdio) or c (C99, stdio).")] = "python",
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


def command_alone(args: list[str]) -> typer.Typer:
    """The app to run for a command line: when its first word is a command (or the ladder group),
    an app of that one command, since typer reads the signature of every registered command to
    build the group (about a third of a start); otherwise the whole app (``--help``, ``--version``,
    a misspelt command)."""
    name = args[0] if args else ""
    commands = [c for c in app.registered_commands
                if (c.name or typer.main.get_command_name(c.callback.__name__ if c.callback else "")) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    alone = copy.copy(app)
    alone.registered_commands, alone.registered_groups = commands, groups
    return alone


def main() -> None:  # console entry point (pyproject.toml) and python -m arena
    command_alone(sys.argv[1:])(prog_name="arena")


if __name__ == "__main__":
    main()
