"""The tournament file (TOML): reading, validating, resolving and writing it.

Owns the ``Tournament`` value (every default filled in, rules fully resolved),
``validate_file`` which reports EVERY problem of a file at once (key path, line,
what was expected, "did you mean"), and ``load``/``read_resolved``.  The value types
are in ``model.py``, the key-to-line mapper in ``toml_lines.py``, the resolved copy's
writer in ``resolved.py``, the ``arena init`` template in ``starter.py`` (re-exported here).

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

import difflib
import math
import os
import re
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import arena.settings as _settings
from arena.errors import ArenaError
from arena.referee import datafolder
from arena.referee.sandbox import odd_file
from arena.rules.options import RulesError, RuleSet, resolve
from arena.rules.suits import suit_asymmetry
from arena.settings import (
    BUNDLED_BOTS,
    FAILURE_KINDS,
    POLICIES,
    BotSpec,
    FailurePolicy,
    Limits,
    TimeControl,
    command_problem,
    env_problem,
)
from arena.tournament.deals import DealSuiteError, fingerprint, read_suite
from arena.tournament.growth import Generation
from arena.tournament.model import _TIME_CHOICES
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
from arena.tournament.toml_lines import _key_str, _KeyLines

# -- errors ---------------------------------------------------------------------

@dataclass(frozen=True)
class ConfigError:
    """One problem: where (key path like ``bots[2].command``, line) and what was expected."""

    key: str
    line: int | None
    message: str
    file: str | None = None

    def __str__(self) -> str:
        where = self.file or "<tournament>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class ConfigFileError(ArenaError, ValueError):
    """Raised by ``load``: carries every ``ConfigError`` of the file."""

    def __init__(self, errors: list[ConfigError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


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


def output_problem(folder: str | Path) -> str | None:
    """Why a results folder could not be created or written at ``folder``, or None (nothing is created)."""
    text = str(folder)
    if "\0" in text:
        return "expected a folder path without NUL characters"
    path = Path(os.path.abspath(text))
    if path.exists() and not path.is_dir():
        return f"the results folder {text!r} exists and is not a folder"
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"the results folder {text!r} cannot be created: {str(existing)!r} is not a folder"
    try:
        fs = os.statvfs(existing)
    except OSError as e:
        return f"the results folder {text!r} cannot be created: {e.strerror}"
    if fs.f_flag & os.ST_RDONLY:
        return f"the results folder {text!r} cannot be written: {str(existing)!r} is on a read-only filesystem"
    if fs.f_blocks == 0:
        return f"the results folder {text!r} cannot be written: {str(existing)!r} is on a filesystem that stores no files"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the results folder {text!r} cannot be written: no permission to write in {str(existing)!r}"
    return None


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
    checker = _Checker(_KeyLines(text), file)
    try:
        t = checker.tournament(data, Path(base_dir), frozenset(bundled), check_commands)
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


# -- checking -------------------------------------------------------------------

_TOP_KEYS = ("name", "variant", "rules", "bots", "seats", "deal_sets", "seating", "max_tables", "time",
             "failures", "concurrency", "seed", "output", "ladder_points", "records", "base_dir", "max_games",
             "sandbox", "twin_suits", "format", "challengers", "history", "executor", "games", "deals", "deals_id",
             "top", "top_order", "uneven", "limits")
_BOT_KEYS = ("name", "command", "cwd", "env", "transport", "limits", "data", "ship", "remote")
_EXECUTOR_KEYS = ("cluster", "listen", "remote_wait_s")
_LIMIT_KEYS = tuple(f.name for f in fields(Limits))
# The most a bot's own `limits` may ask when the tournament's [limits] does not say (an entrant
# writes its own entry: without a ceiling it could give itself the machine).  [limits] raises them.
LIMIT_CEILINGS = {"memory_mb": 4096, "processes": 256, "data_mb": 1024}
_TIME_KEYS = tuple(f.name for f in fields(TimeControl))
_FAILURE_KEYS = FAILURE_KINDS + ("strikes",)
_MISSING = object()


def _outside_folder(command: str, folder: Path, env: Mapping[str, str]) -> str | None:
    """Why the sandbox would not show a bot the program its command runs (a file outside its ``cwd``
    folder, the system folders and the Python we run under), or None."""
    import sys

    from arena.settings import program_file

    program = program_file(command, folder, env)
    if program is None:
        return None
    real = program.resolve()
    shown = [folder.resolve(), Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path("/usr"), Path("/etc"),
             *(Path(p).resolve() for p in os.environ.get("PATH", "").split(os.pathsep) if p.startswith("/"))]
    named = Path(os.path.normpath(os.path.abspath(program)))
    if any(real.is_relative_to(d) for d in shown) or any(named.is_relative_to(d) for d in shown):
        return None
    return (f"runs {str(program)!r}, outside the bot's folder {str(folder)!r}: the sandbox shows a bot only its "
            "own folder (cwd), so the bot would not find it; move it into that folder")


def _link_in(base_dir: Path, relative: str) -> Path | None:
    """The first symbolic link on the way from ``base_dir`` to ``relative`` (the path a tournament file
    gives), or None: a link there is an entrant's to point anywhere."""
    here = base_dir
    for part in Path(relative).parts:
        here = here / part
        if part not in ("/", "..", ".") and here.is_symlink():
            return here
    return None


def _describe(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array"
    return repr(v)


def _generation_problem(gen: list[str], gen_sets: int, names: list[str], seats: int | None,
                        deal_sets: int | None) -> tuple[str, str] | None:
    """Why ``[[history]]``'s generation (bots ``gen``, ``gen_sets`` deal-sets) cannot precede the file:
    (its key, the sentence), or None."""
    dup = next((b for i, b in enumerate(gen) if b in gen[:i]), None)
    if dup is not None:
        return "bots", f"{dup!r} is named twice"
    unknown = [b for b in gen if b not in names]
    if unknown:
        return "bots", f"{unknown[0]!r} is not one of the [[bots]]"
    if sorted(gen, key=names.index) != gen:
        return "bots", f"expected the bots in the order of the [[bots]] entries ({', '.join(n for n in names if n in gen)})"
    if seats is not None and len(gen) < seats:
        return "bots", f"a {seats}-seat table needs at least {seats} bots, the generation has {len(gen)}"
    if deal_sets is not None and gen_sets > deal_sets:
        return "deal_sets", f"deal_sets = {gen_sets} is more than the file's deal_sets = {deal_sets}: a tournament only grows"
    return None


class _Checker:
    def __init__(self, where: _KeyLines, file: str | None) -> None:
        self.where = where
        self.file = file
        self.errors: list[ConfigError] = []
        self.top_limits = Limits()  # the tournament's [limits], read before its bots

    def err(self, path: tuple[Part, ...], message: str) -> None:
        self.errors.append(ConfigError(_key_str(path), self.where.find(path), message, self.file))

    def unknown_keys(self, table: Mapping[str, Any], allowed: Iterable[str], path: tuple[Part, ...]) -> None:
        allowed = tuple(allowed)
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of: {', '.join(allowed)}"
                self.err(path + (key,), f"unknown key {key!r}{hint}")

    # typed getters: report and return the default on a bad value
    def string(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: Any = _MISSING,
               choices: tuple[str, ...] | None = None) -> Any:
        v = table.get(key, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                self.err(path + (key,), f"missing; expected {self._expect_str(choices)}")
                return None
            return default
        if not isinstance(v, str) or not v.strip():
            self.err(path + (key,), f"expected {self._expect_str(choices)}, got {_describe(v)}")
            return None
        if choices is not None and v not in choices:
            close = difflib.get_close_matches(v, choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.err(path + (key,), f"expected {self._expect_str(choices)}, got {v!r}{hint}")
            return None
        return v

    @staticmethod
    def _expect_str(choices: tuple[str, ...] | None) -> str:
        return f"one of: {', '.join(choices)}" if choices else "a non-empty string"

    def integer(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: Any = _MISSING,
                minimum: int | None = None) -> Any:
        v = table.get(key, _MISSING)
        need = "a whole number" + (f" >= {minimum}" if minimum is not None else "")
        if v is _MISSING:
            if default is _MISSING:
                self.err(path + (key,), f"missing; expected {need}")
                return None
            return default
        if not isinstance(v, int) or isinstance(v, bool) or (minimum is not None and v < minimum):
            self.err(path + (key,), f"expected {need}, got {_describe(v)}")
            return None
        return v

    def boolean(self, table: Mapping[str, Any], key: str, path: tuple[Part, ...], default: bool) -> Any:
        v = table.get(key, default)
        if not isinstance(v, bool):
            self.err(path + (key,), f"expected true or false, got {_describe(v)}")
            return None
        return v

    def table(self, data: Mapping[str, Any], key: str, path: tuple[Part, ...]) -> dict[str, Any]:
        v = data.get(key, {})
        if not isinstance(v, dict):
            self.err(path + (key,), f"expected a table, got {_describe(v)}")
            return {}
        return v

    # sections
    def tournament(self, data: dict[str, Any], file_dir: Path, bundled: frozenset[str],
                   check_commands: bool) -> Tournament | None:
        self.unknown_keys(data, _TOP_KEYS, ())
        name = self.string(data, "name", ())
        if name is not None and any(c in name for c in "/\\\0"):
            self.err(("name",), f"expected a name without '/', '\\' or NUL (it names the results folder), got {name!r}")
            name = None
        elif name is not None and not name.isprintable():  # it is printed: no escape code, newline or bidi override
            self.err(("name",), f"expected a name without control characters (it is printed), got {name!r}")
            name = None
        elif name is not None and (not name or name.startswith(".")):  # '..' would make results/.. the results
            self.err(("name",), f"expected a name that does not start with '.' (it names the results folder), "
                                f"got {name!r}")
            name = None
        base = data.get("base_dir", _MISSING)
        if base is _MISSING:
            base_dir = file_dir
        elif isinstance(base, str) and base and "\0" not in base:
            base_dir = file_dir / base
        else:
            self.err(("base_dir",), f"expected a folder path, got {_describe(base)}")
            base_dir = file_dir

        rules, players = self.rules(data)
        self.top_limits = self.limits_table(data)
        bots = self.bots(data, base_dir, bundled, check_commands)

        seats = self.integer(data, "seats", (), minimum=2)
        if seats is not None and players is not None:
            lo, hi = players
            if not lo <= seats <= hi:
                self.err(("seats",), f"expected a table size that variant {data.get('variant')!r} allows "
                                     f"({lo} to {hi} players), got {seats}")
            elif bots is not None and seats > len(bots):
                self.err(("seats",), f"expected at most as many seats as bots ({len(bots)}), got {seats}")
        fmt, challengers = self.format(data, bots, seats)
        deal_sets = self.integer(data, "deal_sets", (), default=2, minimum=1)
        seating = self.string(data, "seating", (), default="all" if (seats or 0) <= 4 else "williams",
                              choices=SEATINGS)
        max_tables = self.integer(data, "max_tables", (), default=None, minimum=1)
        games = self.games(data, fmt, max_tables)
        top, top_order = self.top(data, fmt, bots)
        uneven = self.boolean(data, "uneven", (), default=False)
        if uneven and fmt != "adaptive":
            self.err(("uneven",), 'only an adaptive league gives its seats unevenly; add format = "adaptive" '
                                  "or remove uneven")
        if fmt == "gauntlet" and max_tables is not None and bots is not None and seats is not None:
            self.gauntlet_cap(max_tables, len(challengers), len(bots) - len(challengers), seats)
        twin_suits = self.twin_suits(data, rules)
        time = self.time(data)
        failures = self.failures(data)
        concurrency = self.integer(data, "concurrency", (), default=1, minimum=1)
        if concurrency is not None and concurrency > MAX_CONCURRENCY:
            self.err(("concurrency",), f"expected at most {MAX_CONCURRENCY} games at once "
                                       f"(each is a process with its own bots), got {concurrency}")
        seed = self.integer(data, "seed", (), default=1)
        output = self.string(data, "output", (), default=f"results/{name}")
        if output is not None and "\0" in output:
            self.err(("output",), "expected a folder path without NUL characters")
            output = None
        elif output is not None and not output.isprintable():
            self.err(("output",), f"expected a folder path without control characters (it is printed), got {output!r}")
            output = None
        ladder = self.boolean(data, "ladder_points", (), default=False)
        records = self.boolean(data, "records", (), default=True)
        max_games = self.integer(data, "max_games", (), default=MAX_GAMES, minimum=1)
        sandbox = self.boolean(data, "sandbox", (), default=True)
        history = self.history(data, bots, seats, deal_sets)
        executor = self.executor(data)
        deals, deal_key = self.deals(data, base_dir)
        if output is not None and (why := self.output_overlap(base_dir / output, base_dir)) is not None:
            self.err(("output",), why)
            output = None
        if bots is not None and output is not None:
            self.data_collisions(bots, base_dir, base_dir / output, deals)
            if sandbox is not False:
                self.cwd_collisions(bots, base_dir, base_dir / output, deals)

        if self.errors:
            return None
        assert rules is not None and bots is not None and time is not None and failures is not None
        t = Tournament(
            name=name, variant=data["variant"], rules=rules, bots=bots, seats=seats, deal_sets=deal_sets,
            seating=seating, max_tables=max_tables, time=time, failures=failures, concurrency=concurrency,
            seed=seed, output=output, ladder_points=ladder, records=records, base_dir=str(base_dir),
            max_games=max_games, sandbox=bool(sandbox), twin_suits=twin_suits, format=fmt, challengers=challengers,
            history=history,
            executor=executor,
            games=games,
            top=top,
            top_order=bool(top_order),
            uneven=bool(uneven) or top is not None,
            limits=self.top_limits,
            deals=deals,
            deal_key=deal_key,
        )
        self.size(t, "deal_sets" in data)
        return None if self.errors else t

    def history(self, data: dict[str, Any], bots: tuple[BotSpec, ...] | None, seats: int | None,
                deal_sets: int | None) -> tuple[Generation, ...]:
        """``[[history]]``, written by ``arena run --resume`` when a tournament grew: earlier bots and deal-sets.

        Each generation must be a schedule the file could have grown from: distinct bots of the file in
        its order, enough of them to fill a table, and no more deal-sets than the file has."""
        raw = data.get("history", [])
        by = "[[history]] is written by `arena run --resume`: leave it out of a tournament file"
        if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
            self.err(("history",), f"expected [[history]] tables, got {_describe(raw)} ({by})")
            return ()
        names = [b.name for b in bots or ()]
        out: list[Generation] = []
        for i, g in enumerate(raw):
            extra = sorted(set(g) - {"bots", "deal_sets"})
            if extra:
                self.err(("history", i, extra[0]), f"unknown key; a generation has bots and deal_sets ({by})")
            gen_bots, gen_sets = g.get("bots"), g.get("deal_sets")
            if not isinstance(gen_bots, list) or not gen_bots or not all(isinstance(b, str) for b in gen_bots):
                self.err(("history", i, "bots"),
                         f"expected the names of that generation's bots, got {_describe(gen_bots)} ({by})")
                continue
            if not isinstance(gen_sets, int) or isinstance(gen_sets, bool) or gen_sets < 1:
                self.err(("history", i, "deal_sets"),
                         f"expected a whole number of 1 or more, got {_describe(gen_sets)} ({by})")
                continue
            if bots is not None and (why := _generation_problem(gen_bots, gen_sets, names, seats, deal_sets)):
                self.err(("history", i, why[0]), f"{why[1]} ({by})")
                continue
            out.append(Generation(tuple(gen_bots), gen_sets))
        return tuple(out)

    def size(self, t: Tournament, deal_sets_given: bool) -> None:
        """Refuse a schedule of more than ``max_games`` games (a typo such as an extra digit)."""
        from arena.tournament import schedule

        total = schedule.total_games(t)
        if total <= t.max_games:
            return
        if t.format in LEAGUES:
            self.err(("games",), f"{total:,} games (whole rounds) is more than max_games = {t.max_games:,}; "
                                 f"lower games, or raise max_games")
            return
        tables, seatings = schedule.table_count(t), len(schedule.seatings(t.seats, t.seating))
        self.err(("deal_sets",) if deal_sets_given else ("bots",),
                 f"{total:,} games ({tables:,} tables x {t.deal_sets:,} deal-sets x {seatings} seatings) is more "
                 f"than max_games = {t.max_games:,}; lower deal_sets or max_tables, or raise max_games")

    def format(self, data: dict[str, Any], bots: tuple[BotSpec, ...] | None,
               seats: int | None) -> tuple[Any, tuple[str, ...]]:
        """``format`` and, for a gauntlet, ``challengers``: bots of the file, leaving enough others to fill a table."""
        fmt = self.string(data, "format", (), default="round_robin", choices=FORMATS)
        raw = data.get("challengers", _MISSING)
        if fmt == "match" and (not isinstance(raw, list) or len(raw) != 2 or bots is None or seats is None
                               or len(bots) != seats + 1):
            # arena.tournament.schedule: A and B take turns in the same seat against the same seats - 1 others
            self.err(("format",), "a match needs challengers = [A, B] and exactly seats - 1 other bots")
            return None, ()
        if fmt not in ("gauntlet", "match"):
            if raw is not _MISSING and fmt is not None:
                self.err(("challengers",), 'only a gauntlet has challengers; add format = "gauntlet" or remove it')
            return fmt, ()
        if raw is _MISSING:
            self.err(("format",), 'a gauntlet needs challengers = ["name", ...]: the bots every table holds one of')
            return None, ()
        if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
            self.err(("challengers",), f"expected a non-empty array of bot names, got {_describe(raw)}")
            return None, ()
        if bots is None:
            return fmt, tuple(raw)
        names = [b.name for b in bots]
        ok = True
        for i, c in enumerate(raw):
            if c not in names:
                close = difflib.get_close_matches(c, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; the bots are: {', '.join(names)}"
                self.err(("challengers", i), f"expected the name of a [[bots]] entry, got {c!r}{hint}")
                ok = False
            elif c in raw[:i]:
                self.err(("challengers", i), f"{c!r} is named twice")
                ok = False
        if not ok:
            return None, ()
        pool = len(names) - len(set(raw))
        if seats is not None and pool < seats - 1:
            self.err(("challengers",), f"a {seats}-seat table needs {seats - 1} bot(s) that are not challengers "
                                       f"beside its challenger; only {pool} of the {len(names)} bots are not")
            return None, ()
        # file order, whatever the order of the list: a table's bots are always in file order
        return fmt, tuple(n for n in names if n in raw)

    def games(self, data: dict[str, Any], fmt: str | None, max_tables: int | None) -> Any:
        """``games``: the budget of a league (swiss, adaptive), which has no ``max_tables``."""
        if fmt not in LEAGUES:
            if "games" in data and fmt is not None:
                self.err(("games",), 'only a league has a game budget; add format = "swiss" or "adaptive", '
                                     "or remove it (max_tables caps a round robin)")
            return None
        if max_tables is not None:
            self.err(("max_tables",), f"a {fmt} league is sized by games, not max_tables; remove max_tables")
        if "games" not in data:
            self.err(("format",), f"a {fmt} league needs games = N: the budget of games it plays, in rounds")
            return None
        return self.integer(data, "games", (), minimum=1)

    def top(self, data: dict[str, Any], fmt: str | None, bots: tuple[BotSpec, ...] | None) -> tuple[Any, Any]:
        """``top = K`` (and ``top_order``): an adaptive league aiming at its top K (README, Leagues)."""
        if "top" not in data:
            if "top_order" in data:
                self.err(("top_order",), "top_order needs top = K (the places it orders); add top or remove it")
            return None, False
        if fmt != "adaptive":
            self.err(("top",), 'only an adaptive league has a top = K objective; add format = "adaptive" or remove top')
            return None, False
        top = self.integer(data, "top", (), minimum=1)
        if top is not None and bots is not None and top >= len(bots):
            self.err(("top",), f"expected fewer than the {len(bots)} bots (the top K is a part of the field), got {top}")
            top = None
        return top, self.boolean(data, "top_order", (), default=False)

    def gauntlet_cap(self, max_tables: int, challengers: int, pool: int, seats: int) -> None:
        """A gauntlet's ``max_tables`` below its table count gives every challenger as many tables."""
        full = challengers * math.comb(pool, seats - 1)
        if max_tables < full and max_tables % challengers:
            lower = max_tables - max_tables % challengers
            self.err(("max_tables",), f"expected a multiple of the {challengers} challengers, so that each faces "
                                      f"the same opponents, got {max_tables}; use {lower or challengers}")

    def twin_suits(self, data: dict[str, Any], rules: RuleSet | None) -> Any:
        """``twin_suits``; "permute" only under rules that treat the four suits alike (``suit_asymmetry``)."""
        value = self.string(data, "twin_suits", (), default="same", choices=TWIN_SUITS)
        if value == "permute" and rules is not None and (why := suit_asymmetry(rules)) is not None:
            self.err(("twin_suits",), f"\"permute\" is refused for variant {data.get('variant')!r} with these rules: "
                                      f"{why}, so a relabelled twin is not proven to be the same game")
            return None
        return value

    def rules(self, data: dict[str, Any]) -> tuple[RuleSet | None, tuple[int, int] | None]:
        """The resolved rules (None on any error) and the players range of what did resolve."""
        from arena.rules.presets import PRESETS

        variant = self.string(data, "variant", (), choices=tuple(PRESETS))
        overrides = dict(self.table(data, "rules", ()))
        rule_name = overrides.pop("name", None)
        if rule_name is not None and not isinstance(rule_name, str):
            self.err(("rules", "name"), f"expected a string, got {_describe(rule_name)}")
            rule_name = None
        if variant is None:
            return None, None
        before = len(self.errors)
        for _ in range(len(overrides) + 1):
            try:
                rs = resolve(variant, overrides, name=rule_name)
            except RulesError as e:
                msg = str(e)
                m = re.match(r"unknown rule option '([^']+)'", msg) or re.match(r"([A-Za-z_]+)[:.]", msg)
                key = m.group(1) if m else None
                if key in overrides:
                    assert key is not None
                    self.err(("rules", key), msg.removeprefix(f"{key}: "))
                    del overrides[key]
                    continue
                self.err(("rules",), msg)
                return None, None
            return (rs if len(self.errors) == before else None), rs.players
        return None, None

    def limits_table(self, data: dict[str, Any]) -> Limits:
        """The tournament's ``[limits]``: every bot's default, and the ceiling of what its own asks."""
        lim = self.table(data, "limits", ())
        self.unknown_keys(lim, _LIMIT_KEYS, ("limits",))
        return Limits(**{k: self.integer(lim, k, ("limits",), default=None, minimum=1) for k in _LIMIT_KEYS})

    def bot_limits(self, lim: Mapping[str, Any], path: tuple[Part, ...]) -> Limits:
        """A bot's own ``limits``, each at most the tournament's ceiling, the tournament's where unset."""
        top = self.top_limits
        values: dict[str, int | None] = {}
        for k in _LIMIT_KEYS:
            v = self.integer(lim, k, path, default=None, minimum=1)
            ceiling = getattr(top, k) or LIMIT_CEILINGS.get(k)
            if v is not None and ceiling is not None and v > ceiling:
                self.err(path + (k,), f"expected at most {ceiling}, the tournament's ceiling (the organiser may "
                                      f"raise it with [limits] {k} = N), got {v}")
            values[k] = v if v is not None else getattr(top, k)
        return Limits(**values)

    def bots(self, data: dict[str, Any], base_dir: Path, bundled: frozenset[str],
             check_commands: bool) -> tuple[BotSpec, ...] | None:
        raw = data.get("bots", _MISSING)
        if raw is _MISSING:
            self.err(("bots",), "missing; expected at least two [[bots]] tables")
            return None
        if not isinstance(raw, list) or not all(isinstance(b, dict) for b in raw):
            self.err(("bots",), "expected an array of tables ([[bots]] entries)")
            return None
        if len(raw) < 2:
            self.err(("bots",), f"expected at least two [[bots]] tables, got {len(raw)}")
        before = len(self.errors)
        out: list[BotSpec] = []
        seen: dict[str, int] = {}
        sandboxed = data.get("sandbox", True) is not False  # without a sandbox a bot sees the machine anyway
        for i, b in enumerate(raw):
            path: tuple[Part, ...] = ("bots", i)
            self.unknown_keys(b, _BOT_KEYS, path)
            name = self.string(b, "name", path)
            if name is not None:
                if name in seen:
                    self.err(path + ("name",), f"expected a unique bot name; {name!r} is already bots[{seen[name]}]")
                seen.setdefault(name, i)
            remote = self.boolean(b, "remote", path, default=False)
            if remote and "command" in b:
                self.err(path + ("remote",), "expected either remote = true or a command, not both")
            command = f"remote:{name}" if remote and name is not None else self.string(b, "command", path)
            cwd = b.get("cwd")
            if cwd is not None and (not isinstance(cwd, str) or not cwd or "\0" in cwd):
                self.err(path + ("cwd",), f"expected a folder path, got {_describe(cwd)}")
                cwd = None
            elif cwd is not None and sandboxed and (problem := datafolder.path_problem(cwd)) is not None:
                self.err(path + ("cwd",), problem.replace("a folder path", "the bot's folder path", 1).replace(
                    "a bot's data folder", "a bot's folder"))
                cwd = None
            elif cwd is not None and sandboxed and (link := _link_in(base_dir, cwd)) is not None:
                self.err(path + ("cwd",), f"expected a folder of the bot's own; {str(link)!r} is a symbolic link "
                                          "(the sandbox would show the bot wherever it points)")
                cwd = None
            elif cwd is not None and check_commands and not (base_dir / cwd).is_dir():
                self.err(path + ("cwd",), f"expected an existing folder; {str(base_dir / cwd)!r} is not one")
                cwd = None
            env = self.table(b, "env", path)
            for k, v in env.items():
                problem = env_problem(k, v) if isinstance(v, str) else f"expected a string value, got {_describe(v)}"
                if problem:
                    self.err(path + ("env", k), problem)
            if command is not None and check_commands and not command.startswith("remote:"):
                strings = {k: v for k, v in env.items() if isinstance(v, str)}
                problem = command_problem(command, base_dir / cwd if cwd else base_dir, strings, bundled)
                if problem is None and cwd and data.get("sandbox", True) is not False:
                    problem = _outside_folder(command, base_dir / cwd, strings)
                if problem is None and not cwd and data.get("sandbox", True) is not False \
                        and command.split()[0] not in bundled:
                    from arena.referee.launch import command_line, script_problem

                    problem = script_problem(command_line(command))
                if problem:
                    self.err(path + ("command",), problem)
            transport = self.string(b, "transport", path, default="zmq", choices=TRANSPORTS)
            bot_data = b.get("data")
            if bot_data is not None and (not isinstance(bot_data, str) or not bot_data):
                self.err(path + ("data",), f"expected a folder path, got {_describe(bot_data)}")
                bot_data = None
            elif bot_data is not None and (problem := datafolder.path_problem(bot_data)) is not None:
                self.err(path + ("data",), problem)
                bot_data = None
            elif bot_data is not None and (link := _link_in(base_dir, bot_data)) is not None:
                self.err(path + ("data",), f"expected a folder of the bot's own; {str(link)!r} is a symbolic link "
                                           "(the bot could write wherever it points)")
                bot_data = None
            elif bot_data is not None and (base_dir / bot_data).exists() and not (base_dir / bot_data).is_dir():
                self.err(path + ("data",), f"expected a folder; {str(base_dir / bot_data)!r} is not one")
                bot_data = None
            if cwd is not None and check_commands and (base_dir / cwd).is_dir():
                odd = odd_file(base_dir / cwd, skip=[base_dir / bot_data] if bot_data else [])
                if odd is not None:
                    self.err(path + ("cwd",), f"{str(odd[0])!r} is a {odd[1]}, not a file or folder; a bot's folder may "
                                              "hold only files and folders (reading it would hang): remove it")
            lim = self.table(b, "limits", path)
            self.unknown_keys(lim, _LIMIT_KEYS, path + ("limits",))
            limits = self.bot_limits(lim, path + ("limits",))
            if len(self.errors) == before:
                out.append(BotSpec(name=name, command=command, cwd=cwd, env=dict(env), transport=transport,
                                   limits=limits, data=bot_data))
        return tuple(out) if len(self.errors) == before else None

    def output_overlap(self, output: Path, base_dir: Path) -> str | None:
        """Why ``output`` may not be the results folder (it is or holds the tournament's folder or
        file: the run makes it private and writes over what is there), or None."""
        for what, path in (("the tournament's folder", base_dir),
                           *([("the tournament file", Path(os.path.abspath(self.file)))] if self.file else [])):
            how = datafolder.relation(output, path)
            if what == "the tournament file" and path.name == RESOLVED_FILE and how == "holds" \
                    and os.path.abspath(path.parent) == os.path.abspath(output):
                continue  # the results folder's own resolved copy (read_resolved)
            if how in ("is", "holds"):
                return (f"expected a results folder of its own; {str(output)!r} {how} {what} {str(path)!r} "
                        "(the run would make it private and write over its files)")
        return None

    def cwd_collisions(self, bots: tuple[BotSpec, ...], base_dir: Path, output: Path, deals: str | None) -> None:
        """Each bot's ``cwd`` (all its sandbox shows of the tournament) against what is not the bot's:
        it may not be, hold or lie in the results folder, nor be or hold the tournament file, the deal
        suite, another bot's data or program, or be inside or hold another bot's ``cwd`` (bots sharing
        one ``cwd`` see each other's files: that is the organiser's choice)."""
        memo: dict[str, tuple[str, ...]] = {}
        for i, b in enumerate(bots):
            if b.cwd is None:
                continue
            folder = b.workdir(base_dir)
            named: list[tuple[str, Path, tuple[str, ...]]] = [
                ("the results folder (output)", output, ("is", "holds", "is inside"))]
            if self.file:
                named.append(("the tournament file", Path(os.path.abspath(self.file)), ("is", "holds")))
            if deals:
                named.append(("the deal suite (deals)", Path(deals), ("is", "holds")))
            for j, other in enumerate(bots):
                if j == i:
                    continue
                if (theirs := other.datadir(base_dir)) is not None:
                    named.append((f"bots[{j}].data, the data folder of {other.name}", theirs, ("is", "holds")))
                if other.cwd is not None:
                    named.append((f"bots[{j}].cwd, the folder of {other.name}", other.workdir(base_dir),
                                  ("is inside", "holds")))
                elif not other.remote and not other.is_bundled() and (program := _settings.program_file(
                        other.command, other.workdir(base_dir), other.env)) is not None:
                    named.append((f"the program of bots[{j}] ({other.name})", program, ("is", "holds")))
            for what, path, refused in named:
                how = datafolder.relation(folder, path, memo)
                if how in refused:
                    self.err(("bots", i, "cwd"), f"expected a folder of the bot's own; {b.cwd!r} {how} {what} "
                                                 f"{str(path)!r} (the bot would see it)")
                    break

    def data_collisions(self, bots: tuple[BotSpec, ...], base_dir: Path, output: Path, deals: str | None) -> None:
        """Each bot's ``data`` against what else the tournament names: no results folder, tournament
        file, deal suite, other bot's folder or data, nor any bot's program in or around it."""
        named: list[tuple[str, Path]] = [("the results folder (output)", output)]
        if self.file:
            named.append(("the tournament file", Path(os.path.abspath(self.file))))
        if deals:
            named.append(("the deal suite (deals)", Path(deals)))
        programs: list[tuple[str, Path]] = []
        for j, other in enumerate(bots):
            program = None if other.remote or other.is_bundled() else \
                _settings.program_file(other.command, other.workdir(base_dir), other.env)
            if program is not None:
                programs.append((f"the program of bots[{j}] ({other.name})", program))
        memo: dict[str, tuple[str, ...]] = {}
        for i, b in enumerate(bots):
            folder = b.datadir(base_dir)
            if folder is None:
                continue
            forbidden = list(named)
            for j, other in enumerate(bots):
                if j != i and other.cwd is not None:
                    forbidden.append((f"bots[{j}].cwd, the folder of {other.name}", other.workdir(base_dir)))
                if j != i and (theirs := other.datadir(base_dir)) is not None:
                    forbidden.append((f"bots[{j}].data, the data folder of {other.name}", theirs))
            why = datafolder.collision(folder, forbidden + programs, own=[b.workdir(base_dir)], memo=memo) \
                or datafolder.existing_problem(folder)  # what it is: an organiser's folder is never a bot's
            if why is not None:
                self.err(("bots", i, "data"), f"expected a folder of the bot's own; {b.data!r} {why}")

    def deals(self, data: dict[str, Any], base_dir: Path) -> tuple[str | None, bytes | None]:
        """``deals``: a deal suite's path (made by the first run if missing) and its bytes if it exists;
        ``deals_id`` (the resolved copy's) must name that suite."""
        raw, claimed = data.get("deals", _MISSING), data.get("deals_id", _MISSING)
        if raw is _MISSING:
            if claimed is not _MISSING:
                self.err(("deals_id",), "is written by arena run beside deals = PATH only: leave it out")
            return None, None
        if not isinstance(raw, str) or not raw or "\0" in raw:
            self.err(("deals",), f"expected the path of a deal suite file, got {_describe(raw)}")
            return None, None
        path = Path(os.path.abspath(base_dir / raw))
        if path.exists() and not path.is_file():
            self.err(("deals",), f"expected a deal suite file; {str(path)!r} is not a file")
            return None, None
        suite = None
        if path.exists():
            try:
                suite = read_suite(path)
            except DealSuiteError as e:
                self.err(("deals",), str(e))
                return None, None
        if claimed is not _MISSING and (suite is None or fingerprint(suite) != claimed):
            self.err(("deals",), f"{path} is not the deal suite this results folder was dealt with (deals_id "
                                 f"{claimed}): put that file back, or start a new folder")
        return str(path), suite

    def executor(self, data: dict[str, Any]) -> Executor:
        ex = self.table(data, "executor", ())
        self.unknown_keys(ex, _EXECUTOR_KEYS, ("executor",))
        cluster = self.string(ex, "cluster", ("executor",), default=None)
        if cluster is not None and "://" not in cluster:
            self.err(("executor", "cluster"), f"expected a scheduler address such as \"tcp://host:8786\", got {cluster!r}")
        upload = []
        for i, b in enumerate(data.get("bots") or []):
            if not isinstance(b, dict):
                continue
            ship = self.string(b, "ship", ("bots", i), default="path", choices=SHIPS)
            if ship == "upload":
                if not b.get("cwd"):
                    self.err(("bots", i, "ship"), "expected a bot with a cwd folder to upload (ship = \"upload\" "
                                                  "sends that folder to every worker)")
                elif isinstance(b.get("name"), str):
                    upload.append(b["name"])
        listen = self.string(ex, "listen", ("executor",), default=Executor.listen)
        _host, _, port = (listen or ":").rpartition(":")
        if listen is not None and not (port.isdigit() and 0 < int(port) < 65536):
            self.err(("executor", "listen"), f"expected HOST:PORT with a port from 1 to 65535, got {listen!r}")
        wait = self.integer(ex, "remote_wait_s", ("executor",), default=Executor.remote_wait_s, minimum=1)
        return Executor(cluster=cluster, upload=tuple(upload), listen=listen or Executor.listen,
                        remote_wait_s=wait or Executor.remote_wait_s)

    def time(self, data: dict[str, Any]) -> TimeControl | None:
        t = self.table(data, "time", ())
        self.unknown_keys(t, _TIME_KEYS, ("time",))
        d = TOURNAMENT_TIME
        vals = {k: self.string(t, k, ("time",), default=getattr(d, k), choices=_TIME_CHOICES.get(k))
                if isinstance(getattr(d, k), str) else
                self.integer(t, k, ("time",), default=getattr(d, k),
                             minimum=1 if k in ("start_ms", "decision_ms") else 0) for k in _TIME_KEYS}
        return None if None in vals.values() else TimeControl(**vals)

    def failures(self, data: dict[str, Any]) -> FailurePolicy | None:
        f = self.table(data, "failures", ())
        self.unknown_keys(f, _FAILURE_KEYS, ("failures",))
        d = FailurePolicy()
        vals: dict[str, Any] = {k: self.string(f, k, ("failures",), default=getattr(d, k), choices=POLICIES)
                                for k in FAILURE_KINDS}
        vals["strikes"] = self.integer(f, "strikes", ("failures",), default=d.strikes, minimum=0)
        return None if None in vals.values() else FailurePolicy(**vals)
