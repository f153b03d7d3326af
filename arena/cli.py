"""The ``arena`` command line (DESIGN 2).

Each command is a thin layer over a module that does the work; errors are
one sentence on stderr with a meaningful exit code (2 for bad input), never a
traceback.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Annotated, NoReturn, Optional

import typer

from arena.cards import CardError, parse, text
from arena.rules.melds import MeldError, form_meld, opening_value
from arena.rules.options import CHOICES, RuleSet, RulesError, resolve
from arena.rules.presets import PRESETS, SOURCES

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Referee and tournament runner for Rummy bots.",
    pretty_exceptions_enable=False,
)


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _rules(variant: str) -> RuleSet:
    try:
        return resolve(variant)
    except RulesError as e:
        fail(str(e))


@app.command()
def variants(
    as_json: Annotated[bool, typer.Option("--json", help="Print the presets as JSON.")] = False,
) -> None:
    """List every preset with all its option values."""
    data = {name: {"source": SOURCES[name], **resolve(name).to_data()} for name in PRESETS}
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Presets (RULES.md section 10); sources: " + "; ".join(f"{k}: {v}" for k, v in SOURCES.items()))
    table.add_column("option")
    for name in PRESETS:
        table.add_column(name)
    options = [k for k in data["basic"] if k not in ("name", "source")]
    for opt in options:
        row = []
        for name in PRESETS:
            v = data[name].get(opt, "—")
            if isinstance(v, dict):
                v = ", ".join(f"{k}p: {x}" if k not in ("A", "JK") else f"{k}={x}" for k, x in v.items())
            elif isinstance(v, list):
                v = ", ".join(map(str, v)) if opt != "players" else f"{v[0]}-{v[1]}"
            row.append(str(v))
        table.add_row(opt, *row)
    Console(width=max(150, Console().width)).print(table)
    typer.echo("Option values: " + "; ".join(f"{k}: {' / '.join(v)}" for k, v in CHOICES.items()))


@app.command()
def meld(
    variant: Annotated[str, typer.Argument(help="Preset name, e.g. german.")],
    cards: Annotated[list[str], typer.Argument(help="Cards in order, e.g. 7H 8H JK.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object.")] = False,
) -> None:
    """Say whether CARDS form a valid meld in VARIANT, which kind, what each wild stands for."""
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
    policy: Annotated[Optional[list[str]], typer.Option("--policy", help="Policy per seat (greedy or random); the last one fills the rest.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per game and a summary.")] = False,
) -> None:
    """Self-play with built-in policies, in-process (no bots, no sockets)."""
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
        turn_caps = sum(1 for e in g.log if e["e"] == "deal_end" and e["reason"] == "turn_cap")
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


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
