"""``arena play`` (one game between bot processes, human seats included, live progress and a
record) and ``arena replay`` (a recorded game turn by turn, with its signature's status)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from arena.cli.app import _wants_json as _wants_json
from arena.cli.app import app as app
from arena.cli.app import fail as fail
from arena.cli.choices import Clock
from arena.cli.seats import (
    _bot_spec,
    _check_bot,
    _check_listen,
    _check_record_name,
    _check_record_path,
    _check_sandbox,
    _open_host,
    _play_hidden,
    _stdio_seats,
    _unique_names,
)

if TYPE_CHECKING:
    from arena.record_check import MacStatus
    from arena.referee.entries import Line

from arena.cli.rules_args import _rules

LONGEST_WAIT_S = 86400  # a day: the most a person's move (--human-time) or a remote seat (--remote-wait-s) is given


@app.command()
def play(
    variant: Annotated[str, typer.Argument(help="Preset name.")],
    bots: Annotated[list[str], typer.Argument(help="One per seat: a sample bot (random, greedy), a command line in quotes, stdio:COMMAND for a bot on stdin/stdout, remote:NAME, or human (you, at this terminal).")],
    seed: Annotated[int | None, typer.Option("--seed", "-s", help="Game seed (decides every deal; default: a random one, shown at the end). Bots are never told it.")] = None,
    time_ms: Annotated[int, typer.Option("--time-ms", min=1, help="Per-decision limit in ms.")] = 1000,
    bank_ms: Annotated[int, typer.Option("--bank-ms", min=0, help="Time bank in ms, drawn on when a decision runs over.")] = 0,
    increment_ms: Annotated[int, typer.Option("--increment-ms", min=0, help="Added to the bank after each decision.")] = 0,
    grace_ms: Annotated[int, typer.Option("--grace-ms", min=0, help="Allowance for transport jitter, in ms.")] = 50,
    start_ms: Annotated[int, typer.Option("--start-ms", min=1, help="Start clock: time for a bot to say hello, in ms.")] = 10000,
    record: Annotated[Path | None, typer.Option("--record", help="Game record file (JSON Lines), in an existing folder; bot logs go to logs/ beside it. Default: a new dated folder under ./arena-play/, named in the output.")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --record: overwrite the file if it exists.")] = False,
    rules_overrides: Annotated[list[str] | None, typer.Option("--rules", help="Override a rule option of the preset as KEY=VALUE, as in a tournament file's \\[rules] table (repeatable), e.g. --rules deals=3.")] = None,
    human_time: Annotated[float, typer.Option("--human-time", min=1, max=LONGEST_WAIT_S, help="With a human seat: the person's time per move, in seconds (the bots keep --time-ms).")] = 600.0,
    seat_names: Annotated[list[str] | None, typer.Option("--name", help="Name of a seat's bot, one per seat in order (repeatable; default: the name in each bot's hello).")] = None,
    listen: Annotated[str | None, typer.Option("--listen", help="HOST:PORT to listen on, for remote:NAME seats (default 127.0.0.1, any free port).")] = None,
    remote_wait_s: Annotated[float, typer.Option("--remote-wait-s", help="How long a remote:NAME seat has to connect, in seconds.")] = 120.0,
    stdio: Annotated[list[int] | None, typer.Option("--stdio", help="Seat number whose bot talks JSON lines on stdin/stdout (repeatable).")] = None,
    on_failure: Annotated[list[str] | None, typer.Option("--on", help="Failure policy as KIND=POLICY, e.g. illegal=forfeit (repeatable).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the final table.")] = False,
    clock: Annotated[Clock, typer.Option("--clock", help="wall: a decision is charged its elapsed time; cpu: the CPU time of the bot's processes.")] = "wall",
    wall_ms: Annotated[int, typer.Option("--wall-ms", min=0, help="With --clock cpu: a decision also ends after this much wall time (0: 4x its limit, at least 1 s).")] = 0,
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
    from arena.rules.log import DealEnd, DealStart, ForfeitEntry, GameEnd, GameStart
    from arena.settings import FailurePolicy, TimeControl
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
    policy = FailurePolicy()
    for item in on_failure or []:
        try:
            kind, pol = parse_override(item)
        except ValueError as e:
            fail(f"--on {item!r}: {e}")
        kind_policy: dict[str, Any] = {kind: pol}  # a Policy field: kind is a row of the table, never "strikes"
        policy = replace(policy, **kind_policy)
    if remote_wait_s <= 0 or remote_wait_s > LONGEST_WAIT_S:  # more than 0: typer's ranges have no open bound here
        fail(f"--remote-wait-s: expected more than 0 and at most {LONGEST_WAIT_S} seconds, got {remote_wait_s}")
    stdio_seats = _stdio_seats(stdio, len(bots))
    specs = _unique_names([_bot_spec(b, i, i in stdio_seats) for i, b in enumerate(bots)])
    if seat_names:
        if len(seat_names) != len(bots) or any(not n.strip() for n in seat_names):
            fail(f"--name: expected one non-empty name per seat ({len(bots)}), got {len(seat_names)}")
        specs = _unique_names([replace(spec, name=name.strip()) for spec, name in zip(specs, seat_names)])
    for seat, spec in enumerate(specs):
        _check_bot(seat, bots[seat], spec)
    listen = _check_listen(listen)
    if record is not None:
        _check_record_name(record, force)  # a typo in --record is said without probing the sandbox
    _check_sandbox(sandbox)
    seed = _play_seed(seed)
    tc = TimeControl(start_ms=start_ms, decision_ms=time_ms, bank_ms=bank_ms, increment_ms=increment_ms,
                     grace_ms=grace_ms, clock=str(clock), wall_ms=wall_ms)
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
    deal: Annotated[int | None, typer.Option("--deal", min=1, help="Only this deal (from 1).")] = None,
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
