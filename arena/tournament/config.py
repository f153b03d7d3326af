"""The tournament file (TOML): reading, validating, resolving and writing it.

Owns the entry points: ``validate_file``/``validate_text``, which report EVERY problem of a file
at once (key path, line, what was expected, "did you mean"), ``load``/``read_resolved``, and the
top level of the file (its keys, ``name``, ``base_dir``, ``seats``, ``output``), asking a module
per group of tables: ``config_game`` (variant, rules, time, failures), ``config_bots`` ([[bots]],
[limits]), ``config_formats`` (format, challengers, games, top, history, the size guard),
``config_executor`` ([executor], ship), ``config_paths`` (output, deals, what the bots' folders
may not share); each reports to ``config_checker.Checker``.  The value types are in ``model.py``
(their fields and defaults are the file's), the key-to-line mapper in ``toml_lines.py``, the
resolved copy's writer in ``resolved.py``, the ``arena init`` template in ``starter.py``; the names
other modules import are re-exported here.

File format (all keys but ``name``, ``variant``, ``seats`` and ``[[bots]]`` are
optional)::

    name = "club-night"            # results go to results/<name> by default
    variant = "basic"              # basic international parlett czech german wrotham
    seats = 4                      # table size k, within the variant's players range
    format = "round_robin"         # round_robin | gauntlet (then challengers = ["name", ...]: each table
                                   # holds exactly one challenger, the other seats from the rest)
                                   # | swiss | adaptive (leagues: rounds chosen from the standings so far,
    games = 4000                   #   until this budget of games; required for them, refused otherwise)
    deal_sets = 2                  # R deal-sets per table
    seating = "all"                # all | williams | rotate (default all for k<=4)
    twin_suits = "same"            # same | permute: each seating of a set dealt with its suits relabelled
    max_tables = 100               # optional cap: seeded balanced subset of tables
    concurrency = 1                # games at once
    seed = 1
    output = "results/club-night"  # relative to the file's folder
    ladder_points = false          # 56 per win, 34 per other game, 0 per forfeit
    records = true                 # write a game record per game (records/<game id>.jsonl)
    max_games = 1000000            # refuse a schedule of more games than this (a typo guard)
    [rules]                        # overrides of the preset, by option name
    target = 150
    [time]                         # milliseconds
    start_ms = 10000; decision_ms = 1000; bank_ms = 0; increment_ms = 0; grace_ms = 50
    [failures]                     # per kind: retry | default | forfeit
    illegal = "retry"
    strikes = 3
    [[bots]]
    name = "mine"
    command = "python my_bot.py"   # or a bundled bot: "random", "greedy"
    cwd = "bots/mine"              # optional, relative to the file's folder
    transport = "zmq"              # zmq (ipc socket) | tcp (loopback, for bindings without ipc) | stdio
    env = { LEVEL = "3" }
    limits = { memory_mb = 512, cpu_seconds = 60, processes = 16 }
    ship = "path"                  # on a cluster: path (the same path on every worker) | upload (cwd sent once per worker)
    # remote = true                # instead of command: a bot that connects by itself (SPEC 12)
    [executor]                     # where games are played (not part of the resolved copy: the same games anywhere)
    cluster = "tcp://host:8786"    # a Dask scheduler; absent: local worker processes (`arena run --cluster` wins)
    listen = "127.0.0.1:5555"      # remote bots: the first listens here, the next on port + 1, ... ("0.0.0.0:P": every interface)
    remote_wait_s = 120            # how long a game waits for an absent remote bot (then the timeout policy)

Relative paths (``output``, a bot's ``cwd`` and relative commands) are resolved
against ``base_dir``: the folder of the file unless the file sets ``base_dir``
(the resolved copy does, so it stays valid inside the results folder).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from arena.settings import BUNDLED_BOTS as BUNDLED_BOTS
from arena.settings import FailurePolicy as FailurePolicy
from arena.settings import TimeControl as TimeControl
from arena.tournament import config_bots, config_formats, config_game, config_paths
from arena.tournament.config_bots import LIMIT_CEILINGS as LIMIT_CEILINGS
from arena.tournament.config_checker import MISSING, Checker, describe
from arena.tournament.config_checker import ConfigError as ConfigError
from arena.tournament.config_checker import ConfigFileError as ConfigFileError
from arena.tournament.config_executor import executor
from arena.tournament.config_paths import output_problem as output_problem
from arena.tournament.model import FORMATS as FORMATS
from arena.tournament.model import LEAGUES as LEAGUES
from arena.tournament.model import MAX_CONCURRENCY as MAX_CONCURRENCY
from arena.tournament.model import MAX_FILE_BYTES as MAX_FILE_BYTES
from arena.tournament.model import MAX_GAMES as MAX_GAMES
from arena.tournament.model import RESOLVED_FILE as RESOLVED_FILE
from arena.tournament.model import SEATINGS as SEATINGS
from arena.tournament.model import SHIPS as SHIPS
from arena.tournament.model import TOURNAMENT_TIME as TOURNAMENT_TIME
from arena.tournament.model import TRANSPORTS as TRANSPORTS
from arena.tournament.model import TWIN_SUITS as TWIN_SUITS
from arena.tournament.model import Executor as Executor
from arena.tournament.model import Tournament as Tournament
from arena.tournament.resolved import write_resolved as write_resolved
from arena.tournament.starter import starter_toml as starter_toml
from arena.tournament.toml_lines import _HEADER as _HEADER
from arena.tournament.toml_lines import Part as Part
from arena.tournament.toml_lines import _KeyLines as _KeyLines

# -- public entry points --------------------------------------------------------

def validate_file(
    path: str | Path,
    bundled: Collection[str] = BUNDLED_BOTS,
    check_commands: bool = True,
    check_output: bool = True,
) -> tuple[Tournament | None, list[ConfigError]]:
    """Read and check a tournament file; the Tournament is None when any error was found.

    ``check_commands`` looks for each bot's program (and cwd) on disk;
    ``check_output`` whether the results folder could be created and written.
    """
    p = Path(path)
    try:
        text = _read_text(p)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return None, [ConfigError("", None, f"cannot read the file: {reason}", str(p))]
    t, errors = validate_text(text, base_dir=p.resolve().parent, file=str(p), bundled=bundled,
                              check_commands=check_commands)
    if t is not None:
        t = replace(t, source=str(p.resolve()))
    if t is not None and check_output:
        problem = output_problem(t.output_dir)
        if problem:
            line = _KeyLines(text).find(("output",))
            return None, [ConfigError("output" if line else "", line, problem, str(p))]
    return t, errors


def _read_text(p: Path) -> str:
    with open(p, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES >> 20} MiB; a tournament file is a few KiB")
    return data.decode("utf-8")


def validate_text(
    text: str,
    base_dir: str | Path = ".",
    file: str | None = None,
    bundled: Collection[str] = BUNDLED_BOTS,
    check_commands: bool = True,
) -> tuple[Tournament | None, list[ConfigError]]:
    """Like ``validate_file`` for TOML text; relative paths resolve against ``base_dir``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        return None, [ConfigError("", int(m.group(1)) if m else None, f"not valid TOML: {e}", file)]
    except RecursionError:
        return None, [ConfigError("", None, "not a tournament file: arrays or tables nested too deeply to read", file)]
    checker = Checker(_KeyLines(text), file)
    try:
        t = _tournament(checker, data, Path(base_dir), frozenset(bundled), check_commands)
    except RecursionError:
        return None, [ConfigError("", None, "not a tournament file: values nested too deeply to check", file)]
    errors = sorted(checker.errors, key=lambda e: e.line if e.line is not None else 1 << 30)
    return (t if not errors else None), errors


def load(path: str | Path, bundled: Collection[str] = BUNDLED_BOTS, check_commands: bool = True) -> Tournament:
    """A valid Tournament, or ConfigFileError listing every problem."""
    t, errors = validate_file(path, bundled, check_commands, check_output=check_commands)
    if errors or t is None:
        raise ConfigFileError(errors)
    return t


def read_resolved(folder: str | Path) -> Tournament:
    """Load the resolved ``tournament.toml`` of a results folder (commands are not checked)."""
    return load(Path(folder) / RESOLVED_FILE, check_commands=False)


# -- the top level --------------------------------------------------------------

# Tournament's fields are the file's top-level keys, but what a run sets (where it read the file, the
# deal suite's bytes, the files it writes); deals_id is the resolved copy's, beside deals.
_RUN_ONLY = ("deal_key", "source", "arena_files")


def _top_keys() -> tuple[str, ...]:
    keys = [f.name for f in fields(Tournament) if f.name not in _RUN_ONLY]
    keys.insert(keys.index("deals") + 1, "deals_id")
    return tuple(keys)


TOP_KEYS = _top_keys()


def _name(c: Checker, data: dict[str, Any]) -> Any:
    """``name``: it names the results folder and is printed."""
    name = c.string(data, "name", ())
    if name is not None and any(ch in name for ch in "/\\\0"):
        c.err(("name",), f"expected a name without '/', '\\' or NUL (it names the results folder), got {name!r}")
        return None
    if name is not None and not name.isprintable():  # it is printed: no escape code, newline or bidi override
        c.err(("name",), f"expected a name without control characters (it is printed), got {name!r}")
        return None
    if name is not None and (not name or name.startswith(".")):  # '..' would make results/.. the results
        c.err(("name",), f"expected a name that does not start with '.' (it names the results folder), got {name!r}")
        return None
    return name


def _base_dir(c: Checker, data: dict[str, Any], file_dir: Path) -> Path:
    """``base_dir``: what relative paths resolve against (the file's folder unless it says)."""
    base = data.get("base_dir", MISSING)
    if base is MISSING:
        return file_dir
    if isinstance(base, str) and base and "\0" not in base:
        return file_dir / base
    c.err(("base_dir",), f"expected a folder path, got {describe(base)}")
    return file_dir


def _seats(c: Checker, data: dict[str, Any], players: tuple[int, int] | None, bots: tuple[Any, ...] | None) -> Any:
    """``seats``: within the variant's players range, and no more than the bots."""
    seats = c.integer(data, "seats", (), minimum=2)
    if seats is not None and players is not None:
        lo, hi = players
        if not lo <= seats <= hi:
            c.err(("seats",), f"expected a table size that variant {data.get('variant')!r} allows "
                              f"({lo} to {hi} players), got {seats}")
        elif bots is not None and seats > len(bots):
            c.err(("seats",), f"expected at most as many seats as bots ({len(bots)}), got {seats}")
    return seats


def _output(c: Checker, data: dict[str, Any], name: str | None) -> Any:
    """``output``: the results folder (default results/<name>), a printable path."""
    output = c.string(data, "output", (), default=f"results/{name}")
    if output is not None and "\0" in output:
        c.err(("output",), "expected a folder path without NUL characters")
        return None
    if output is not None and not output.isprintable():
        c.err(("output",), f"expected a folder path without control characters (it is printed), got {output!r}")
        return None
    return output


def _tournament(c: Checker, data: dict[str, Any], file_dir: Path, bundled: frozenset[str],
                check_commands: bool) -> Tournament | None:
    c.unknown_keys(data, TOP_KEYS, ())
    name = _name(c, data)
    base_dir = _base_dir(c, data, file_dir)
    rules, players = config_game.rules(c, data)
    top_limits = config_bots.limits_table(c, data)
    bots = config_bots.bots(c, data, base_dir, bundled, check_commands, top_limits)
    seats = _seats(c, data, players, bots)
    fmt, challengers = config_formats.format_keys(c, data, bots, seats)
    deal_sets = c.integer(data, "deal_sets", (), default=Tournament.deal_sets, minimum=1)
    seating = c.string(data, "seating", (), default=Tournament.seating if (seats or 0) <= 4 else "williams",
                       choices=SEATINGS)
    max_tables = c.integer(data, "max_tables", (), default=Tournament.max_tables, minimum=1)
    games = config_formats.games(c, data, fmt, max_tables)
    top, top_order = config_formats.top(c, data, fmt, bots)
    uneven = config_formats.uneven(c, data, fmt)
    if fmt == "gauntlet" and max_tables is not None and bots is not None and seats is not None:
        config_formats.gauntlet_cap(c, max_tables, len(challengers), len(bots) - len(challengers), seats)
    twin_suits = config_formats.twin_suits(c, data, rules)
    time = config_game.time(c, data)
    failures = config_game.failures(c, data)
    concurrency = c.integer(data, "concurrency", (), default=Tournament.concurrency, minimum=1)
    if concurrency is not None and concurrency > MAX_CONCURRENCY:
        c.err(("concurrency",), f"expected at most {MAX_CONCURRENCY} games at once "
                                f"(each is a process with its own bots), got {concurrency}")
    seed = c.integer(data, "seed", (), default=Tournament.seed)
    output = _output(c, data, name)
    ladder = c.boolean(data, "ladder_points", (), default=Tournament.ladder_points)
    records = c.boolean(data, "records", (), default=Tournament.records)
    max_games = c.integer(data, "max_games", (), default=Tournament.max_games, minimum=1)
    sandbox = c.boolean(data, "sandbox", (), default=Tournament.sandbox)
    history = config_formats.history(c, data, bots, seats, deal_sets)
    where = executor(c, data)
    deals, deal_key = config_paths.deals(c, data, base_dir)
    if output is not None and (why := config_paths.output_overlap(c, base_dir / output, base_dir)) is not None:
        c.err(("output",), why)
        output = None
    if bots is not None and output is not None:
        config_paths.data_collisions(c, bots, base_dir, base_dir / output, deals)
        if sandbox is not False:
            config_paths.cwd_collisions(c, bots, base_dir, base_dir / output, deals)

    if c.errors:
        return None
    assert rules is not None and bots is not None and time is not None and failures is not None
    t = Tournament(
        name=name, variant=data["variant"], rules=rules, bots=bots, seats=seats, deal_sets=deal_sets,
        seating=seating, max_tables=max_tables, time=time, failures=failures, concurrency=concurrency,
        seed=seed, output=output, ladder_points=ladder, records=records, base_dir=str(base_dir),
        max_games=max_games, sandbox=bool(sandbox), twin_suits=twin_suits, format=fmt, challengers=challengers,
        history=history, executor=where, games=games, top=top, top_order=bool(top_order),
        uneven=bool(uneven) or top is not None, limits=top_limits, deals=deals, deal_key=deal_key,
    )
    config_formats.size(c, t, "deal_sets" in data)
    return None if c.errors else t
