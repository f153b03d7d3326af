"""The ``arena`` command line.

Each command is a thin layer over a module that does the work; errors are
one sentence on stderr with a meaningful exit code (2 for bad input or a run
that had to stop, 1 for a failed check), never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail
from arena.cli.folder_text import SET_ASIDE, _done_count, _render, _shown_path, _standings_now
from arena.cli.seats import (
    _bot_spec,
    _check_bot,
    _check_listen,
    _check_record_path,
    _check_sandbox,
    _open_host,
    _play_hidden,
    _stdio_seats,
    _unique_names,
)
from arena.errors import ArenaError
from arena.rules.cards import CardError, parse, text
from arena.rules.log import DealEnd
from arena.rules.melds import MeldError, form_meld, opening_value
from arena.rules.options import CHOICES, DESCRIPTIONS, OPTION_NAMES, RulesError, RuleSet, resolve
from arena.rules.presets import PRESETS, SOURCES

if TYPE_CHECKING:
    from arena.record_check import MacStatus
    from arena.referee.entries import Line


def _rules(variant: str, overrides: list[str] | None = None) -> RuleSet:
    """A preset with ``--rules KEY=VALUE`` overrides (VALUE read as a TOML value, else as a string)."""
    changes: dict[str, Any] = {}
    for item in overrides or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            fail(f"--rules {item!r}: expected KEY=VALUE, e.g. deals=3 or card_values=german")
        changes[key.strip()] = _toml_value(raw.strip())
    try:
        return resolve(variant, changes)
    except RulesError as e:
        fail(f"--rules: {e}" if changes else str(e))


def _toml_value(raw: str) -> Any:
    """A command-line value as TOML reads it (``3``, ``true``, ``{"2" = 10}``), or the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


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


@app.command()
def play(
    variant: Annotated[str, typer.Argument(help="Preset name.")],
    bots: Annotated[list[str], typer.Argument(help="One per seat: a sample bot (random, greedy), a command line in quotes, stdio:COMMAND for a bot on stdin/stdout, remote:NAME, or human (you, at this terminal).")],
    seed: Annotated[int | None, typer.Option("--seed", "-s", help="Game seed (decides every deal; default: a random one, shown at the end). Bots are never told it.")] = None,
    time_ms: Annotated[int, typer.Option("--time-ms", help="Per-decision limit in ms.")] = 1000,
    bank_ms: Annotated[int, typer.Option("--bank-ms", help="Time bank in ms, drawn on when a decision runs over.")] = 0,
    increment_ms: Annotated[int, typer.Option("--increment-ms", help="Added to the bank after each decision.")] = 0,
    grace_ms: Annotated[int, typer.Option("--grace-ms", help="Allowance for transport jitter, in ms.")] = 50,
    start_ms: Annotated[int, typer.Option("--start-ms", help="Start clock: time for a bot to say hello, in ms.")] = 10000,
    record: Annotated[Path | None, typer.Option("--record", help="Game record file (JSON Lines), in an existing folder; bot logs go to logs/ beside it. Default: a new dated folder under ./arena-play/, named in the output.")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --record: overwrite the file if it exists.")] = False,
    rules_overrides: Annotated[list[str] | None, typer.Option("--rules", help="Override a rule option of the preset as KEY=VALUE, as in a tournament file's [rules] table (repeatable), e.g. --rules deals=3.")] = None,
    human_time: Annotated[float, typer.Option("--human-time", help="With a human seat: the person's time per move, in seconds (the bots keep --time-ms).")] = 600.0,
    seat_names: Annotated[list[str] | None, typer.Option("--name", help="Name of a seat's bot, one per seat in order (repeatable; default: the name in each bot's hello).")] = None,
    listen: Annotated[str | None, typer.Option("--listen", help="HOST:PORT to listen on, for remote:NAME seats (default 127.0.0.1, any free port).")] = None,
    remote_wait_s: Annotated[float, typer.Option("--remote-wait-s", help="How long a remote:NAME seat has to connect, in seconds.")] = 120.0,
    stdio: Annotated[list[int] | None, typer.Option("--stdio", help="Seat number whose bot talks JSON lines on stdin/stdout (repeatable).")] = None,
    on_failure: Annotated[list[str] | None, typer.Option("--on", help="Failure policy as KIND=POLICY, e.g. illegal=forfeit (repeatable).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the final table.")] = False,
    clock: Annotated[str, typer.Option("--clock", help="wall: a decision is charged its elapsed time; cpu: the CPU time of the bot's processes.")] = "wall",
    wall_ms: Annotated[int, typer.Option("--wall-ms", help="With --clock cpu: a decision also ends after this much wall time (0: 4x its limit, at least 1 s).")] = 0,
    sandbox: Annotated[bool, typer.Option("--sandbox/--no-sandbox", help="Run every bot in its own sandbox (bubblewrap); --no-sandbox only for bots you trust.")] = True,
) -> None:
    """Play one game between bot processes, with live progress, a final table and a record."""
    from dataclasses import replace

    from rich.console import Console
    from rich.table import Table

    from arena.display import describe
    from arena.failures import parse_override
    from arena.human.terminal import HumanProcess
    from arena.referee.entries import Failure
    from arena.referee.game import play_one
    from arena.referee.host import BotHost
    from arena.rules.log import DealStart, ForfeitEntry, GameEnd, GameStart
    from arena.settings import CLOCKS, FailurePolicy, TimeControl
    from arena.untrusted import rich_text, shown

    rules = _rules(variant, rules_overrides)
    humans = [i for i, b in enumerate(bots) if b.strip().lower() == "human"]
    if len(humans) > 1:
        fail(f"seats {', '.join(map(str, humans))}: only one seat can be human")
    tty = _terminal() if humans else None
    bots = ["remote:human" if i in humans else b for i, b in enumerate(bots)]
    lo, hi = rules.players
    if not lo <= len(bots) <= hi:
        fail(f"{variant} is played by {lo} to {hi} players; {len(bots)} bots given")
    if min(time_ms, start_ms) < 1 or min(bank_ms, increment_ms, grace_ms) < 0:
        fail("clock options must be positive (--time-ms, --start-ms) or zero or more (--bank-ms, --increment-ms, --grace-ms)")
    policy = FailurePolicy()
    for item in on_failure or []:
        try:
            kind, pol = parse_override(item)
        except ValueError as e:
            fail(f"--on {item!r}: {e}")
        kind_policy: dict[str, Any] = {kind: pol}  # a Policy field: kind is a row of the table, never "strikes"
        policy = replace(policy, **kind_policy)
    if remote_wait_s <= 0 or remote_wait_s > 86400:
        fail(f"--remote-wait-s: expected more than 0 and at most 86400 seconds, got {remote_wait_s}")
    stdio_seats = _stdio_seats(stdio, len(bots))
    specs = _unique_names([_bot_spec(b, i, i in stdio_seats) for i, b in enumerate(bots)])
    if seat_names:
        if len(seat_names) != len(bots) or any(not n.strip() for n in seat_names):
            fail(f"--name: expected one non-empty name per seat ({len(bots)}), got {len(seat_names)}")
        specs = _unique_names([replace(spec, name=name.strip()) for spec, name in zip(specs, seat_names)])
    for seat, spec in enumerate(specs):
        _check_bot(seat, bots[seat], spec)
    listen = _check_listen(listen)
    if clock not in CLOCKS:
        fail(f"--clock: expected one of {', '.join(CLOCKS)}, got {clock!r}")
    if wall_ms < 0:
        fail(f"--wall-ms: expected 0 or more, got {wall_ms}")
    _check_sandbox(sandbox)
    seed = _play_seed(seed)
    tc = TimeControl(start_ms=start_ms, decision_ms=time_ms, bank_ms=bank_ms, increment_ms=increment_ms,
                     grace_ms=grace_ms, clock=clock, wall_ms=wall_ms)
    if not 1 <= human_time <= 86400:
        fail(f"--human-time: expected 1 to 86400 seconds, got {human_time:g}")
    # A person's clock: generous and on the wall (what a person feels); the bots' clocks stay as given.
    person = TimeControl(start_ms=start_ms, decision_ms=int(human_time * 1000), grace_ms=grace_ms, clock="wall")
    seat_times = [person if i in humans else None for i in range(len(bots))]
    record_path = record or _new_play_folder(variant, seed) / "record.jsonl"
    if record is None:
        from arena.integrity import private_folder

        try:
            private_folder(record_path.parent)
        except OSError as e:
            fail(f"cannot create the folder {record_path.parent}: {e.strerror or e}")
    _check_record_path(record_path, given=record is not None, force=force)
    if record is None and not quiet:
        typer.echo(f"writing the record and the bots' logs to {record_path.parent}/", err=True)
    console = Console(stderr=False)
    names = [s.name for s in specs]

    def on_entry(entry: Line) -> None:
        if quiet:
            return
        if isinstance(entry, (DealEnd, Failure, ForfeitEntry, GameEnd, GameStart, DealStart)):
            line = describe(entry, names, full=False)
            if line:
                typer.echo(line)

    human = HumanProcess(tty, record_path.parent / "logs" / "human-terminal.log", policy.strikes) if tty else None
    human_peers: list[Any] = []
    quiet = quiet or human is not None  # the person's screen is the seat's, nothing else is drawn on it

    def human_listening(peer: Any) -> bool:
        """The human seat's gate listens: start the person's client on this terminal (no token printed)."""
        if human is None or peer not in human_peers:
            return False
        human.start(peer)
        return True

    host = _open_host(lambda: BotHost(tc, record_path.parent / "logs", listen=listen,
                                      announce=lambda m: typer.echo(m, err=True),
                                      remote_wait_ms=int(remote_wait_s * 1000), sandbox=sandbox,
                                      hide=_play_hidden(record_path, record is None), on_listening=human_listening), listen)
    try:
        peers = [host.add(spec) for spec in specs]
        human_peers.extend(peers[i] for i in humans)
        for peer in peers:
            if not host.start(peer) and not quiet:
                typer.echo(shown(f"! {peer.spec.name} did not start: {peer.problem[1] if peer.problem else '?'}"), err=True)
        if not seat_names:
            _name_by_hello(peers)
            names[:] = [p.spec.name for p in peers]
        started = time.perf_counter()
        result = play_one(host, peers, rules, seed, _play_game_id(), tc, policy, record_path, on_entry,
                          seat_times=seat_times)
        elapsed = time.perf_counter() - started
    except KeyboardInterrupt:
        host.close("interrupted")
        typer.echo("interrupted: every bot process was stopped", err=True)
        raise typer.Exit(130) from None
    except OSError as e:
        host.close("error")
        fail(f"cannot write {e.filename or record_path}: {e.strerror or e}; every bot process was stopped")
    finally:
        host.close()
        if human is not None:
            human.stop()
    table = Table(title=f"{variant}, seed {seed}: {result.end_reason} after {result.deals} deal(s)")
    for col in ("Place", "Seat", "Bot", "Total", "Failures", "Median ms"):
        table.add_column(col)
    order = sorted(range(len(names)), key=lambda s: (result.placings[s], s))
    for s in order:
        lat = sorted(result.latencies_ms[s])
        med = f"{lat[len(lat) // 2]:.1f}" if lat else "-"
        fails = ", ".join(f"{k} {v}" for k, v in sorted(result.failures[s].items())) or "-"
        if s in result.forfeited:
            fails += " (forfeited)"
        table.add_row(str(result.placings[s]), str(s), rich_text(names[s]), str(result.totals[s]), fails, med)
    console.print(table)
    typer.echo(f"record: {record_path}")
    print(f"{result.decisions} decisions in {elapsed:.2f}s", file=sys.stderr)


def _terminal() -> str:
    """The terminal device a human seat plays on (this command's own); bad input if there is none."""

    for stream in (sys.stdin, sys.stdout):
        try:
            if stream.isatty():
                return os.ttyname(stream.fileno())
        except (OSError, ValueError):
            continue
    fail("a human seat needs a terminal: run arena play in one (stdin and stdout are not terminals)")


def _new_play_folder(variant: str, seed: int) -> Path:
    """A new folder for one `arena play` game: ./arena-play/DATE-TIME-VARIANT-seedS (never an old one)."""
    base = Path("arena-play") / f"{time.strftime('%Y%m%d-%H%M%S')}-{variant}-seed{seed}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


def _name_by_hello(peers: list[Any]) -> None:
    """Seats take the name their bot gave in its hello (unique, as the command-line names are), except
    remote:NAME seats, whose name was given."""
    from dataclasses import replace

    from arena.display import printable

    named = _unique_names([replace(p.spec, name=printable(p.hello.name)) if p.hello is not None and not p.spec.remote
                           else p.spec for p in peers])
    for peer, spec in zip(peers, named):
        peer.spec = spec


def _play_seed(seed: int | None) -> int:
    """The seed of an `arena play` game: the one given, or a fresh random one (so none is guessable)."""
    import secrets

    return seed if seed is not None else secrets.randbelow(2**31)


def _play_game_id() -> str:
    """The id bots are told for an `arena play` game: random, so it says nothing of the seed."""
    import secrets

    return f"play-{secrets.token_hex(4)}"


def _read_record(path: Path) -> tuple[dict, list[Line]]:
    from arena.record_check import read_record

    return read_record(path)


def _read_record_objects(path: Path) -> tuple[dict, list[dict]]:
    """A record's header and entry objects, checked, as the file holds them (what --verify replays)."""
    from arena.record_check import read_record_objects

    header, objects = read_record_objects(path)
    return header, [obj for _, obj in objects]


@app.command()
def replay(
    record: Annotated[Path, typer.Argument(help="A game record (JSON Lines) written by arena play or arena run.")],
    verify: Annotated[bool, typer.Option("--verify", help="Re-check every action with the engine; exit 1 at the first entry that does not hold.")] = False,
    private: Annotated[bool, typer.Option("--private/--public", help="Show hands and stock draws (default) or only what every seat saw.")] = True,
    key: Annotated[Path | None, typer.Option("--key", help="With --verify: the tournament's secret.key to check the record's MAC with (default: ../secret.key of a tournament's records/ folder).")] = None,
    deal: Annotated[int | None, typer.Option("--deal", help="Only this deal (from 1).")] = None,
    seat: Annotated[int | None, typer.Option("--seat", help="As this seat saw the game: its own hand only, the others' sizes.")] = None,
    table: Annotated[bool, typer.Option("--table/--no-table", help="After each turn, the table: melds with their numbers, hand sizes, stock, discard top.")] = True,
) -> None:
    """Print a recorded game turn by turn (and the table after each turn), or verify it against the engine."""
    from arena.display import describe, printable
    from arena.rules.record import Header, ReplayError
    from arena.rules.record import replay as run_replay

    if verify:
        header, objects = _read_record_objects(record)
        mac = _record_mac(record, header, key)
        if not mac.ok:
            typer.echo(f"{record}: does not verify: {mac.text}")
            raise typer.Exit(1)
        try:
            h = Header.from_data(header)
            game = run_replay(h, objects)
        except ReplayError as e:
            typer.echo(printable(f"{record}: does not verify: {e} (line {e.index + 1} of the file)"))
            raise typer.Exit(1) from None
        except Exception as e:  # noqa: BLE001 - a shape the record check let through must not be a traceback
            fail(printable(f"{record}: the engine cannot replay this record ({type(e).__name__}: {e})"))
        typer.echo(f"{record}: verified {len(objects)} entries; {game.deal_no} deal(s), totals {game.totals}, "
                   f"placings {game.placings()}; {mac.text}")
        return
    from arena.rules.log import DealStart
    from arena.table_replay import TableReplay

    header, entries = _read_record(record)
    names = list(header.get("seats") or [f"seat{i}" for i in range(header.get("players", 0))])
    players = int(header.get("players") or len(names))
    if seat is not None and not 0 <= seat < players:
        fail(f"--seat {seat}: no such seat; the seats of this game are 0 to {players - 1}")
    if deal is not None and deal < 1:
        fail(f"--deal {deal}: deals are numbered from 1")
    typer.echo(printable(f"{header.get('rules', {}).get('name', '?')} game, seed {header.get('seed')}, seats: "
                         f"{', '.join(names)}" + (f"; as seat {seat} saw it" if seat is not None else "")))
    board = TableReplay(Header.from_data(header), names, seat, hands=private) if table else None
    current = 0
    for entry in entries:
        if isinstance(entry, DealStart):
            current = entry.deal
        shown = deal is None or current == deal
        line = describe(entry, names, full=private and seat is None) if shown else None
        if line:
            typer.echo(line)
        state = board.after(entry) if board is not None else []
        if shown:
            for text in state:
                typer.echo(text)
    if deal is not None and current < deal:
        fail(f"--deal {deal}: this game has {current} deal(s)")


def _record_mac(record: Path, header: dict[str, Any], key: Path | None) -> MacStatus:
    """The MAC check of a record under ``key`` (or the key of its tournament folder, if any)."""
    from arena.integrity import KeyFileError
    from arena.record_check import RecordError, mac_status, tournament_key_file

    try:
        return mac_status(record, header, key if key is not None else tournament_key_file(record))
    except (KeyFileError, RecordError) as e:
        fail(f"--key: {e}" if key is not None else str(e))


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
