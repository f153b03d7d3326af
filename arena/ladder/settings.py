"""The ladder's settings file (``ladder.toml``): its text for ``arena ladder init``, reading and checking it.

A ladder file is a tournament file without ``[[bots]]`` (entrants come by submission), ``format``,
``games``, ``challengers``, ``output`` or ``max_tables`` (the ladder chooses its own tables), plus two
tables of its own::

    [ladder]
    tables_per_batch = 8      # at most this many tables per batch (a batch: each version at most once)
    new_games = 30            # a version plays every batch until it has this many games ...
    settled_share = 0.5       # ... then it is drawn into a batch with this chance
    suspend_after = 3         # games with a failure of the version before it is suspended
    max_submission_mb = 50    # a submitted folder's size cap ...
    max_files = 5000          # ... and file count cap
    check = true              # run check-bot at the door (false: only the start-up check)
    limits = { memory_mb = 512, cpu_seconds = 600, processes = 16 }   # every entrant's bot
    [final]
    top = 8                   # arena ladder final --top N overrides it
    precision_elo = 50        # the final plays deal-sets until a typical 95% half width is this small ...
    max_deal_sets = 60        # ... or this many deal-sets per table

The shared keys (name, variant, seats, deal_sets, seating, twin_suits, concurrency, seed, records,
sandbox, [rules], [time], [failures]) are checked by the tournament file's own checker
(``arena.tournament.config.validate_text``) on the file's text with placeholder bots appended, so its
errors name this file's keys and lines.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import tomli_w

from arena.ladder.layout import LADDER_FILE, LadderError
from arena.settings import Limits
from arena.tournament.config import _HEADER, TOURNAMENT_TIME, ConfigError, Tournament, _KeyLines, validate_text

SHARED = ("name", "variant", "seats", "deal_sets", "seating", "twin_suits", "concurrency", "seed", "records",
          "sandbox", "rules", "time", "failures", "max_games")
OWN = ("ladder", "final")
LIMITS = tuple(f.name for f in fields(Limits))
MAX_FILE_BYTES = 1 << 20
DEFAULT_LIMITS = Limits(memory_mb=512, cpu_seconds=600, processes=16)


@dataclass(frozen=True)
class LadderSettings:
    base: Tournament                  # the shared settings, resolved (its bots are placeholders)
    tables_per_batch: int = 8
    new_games: int = 30
    settled_share: float = 0.5
    suspend_after: int = 3
    max_submission_mb: int = 50
    max_files: int = 5000
    check: bool = True
    limits: Limits = DEFAULT_LIMITS
    final_top: int = 8
    precision_elo: float = 50.0
    max_deal_sets: int = 60


_INTS = {("ladder", "tables_per_batch"): (1, 1000), ("ladder", "new_games"): (1, 100_000),
         ("ladder", "suspend_after"): (1, 1_000_000), ("ladder", "max_submission_mb"): (1, 10_000),
         ("ladder", "max_files"): (1, 1_000_000), ("final", "top"): (2, 1000),
         ("final", "max_deal_sets"): (1, 100_000)}
_FLOATS = {("ladder", "settled_share"): (0.0, 1.0), ("final", "precision_elo"): (1.0, 10_000.0)}
_BOOLS = {("ladder", "check")}


def starter_text(name: str, variant: str, seats: int, concurrency: int = 2) -> str:
    """The text ``arena ladder init`` writes: every setting at its default, ready to edit."""
    data: dict[str, Any] = {
        "name": name, "variant": variant, "seats": seats, "deal_sets": 2, "seating": "all",
        "concurrency": concurrency, "seed": 1, "records": True,
        "time": {k: v for k, v in vars(TOURNAMENT_TIME).items() if v is not None},
        "ladder": {"tables_per_batch": 8, "new_games": 30, "settled_share": 0.5, "suspend_after": 3,
                   "max_submission_mb": 50, "max_files": 5000, "check": True,
                   "limits": {"memory_mb": 512, "cpu_seconds": 600, "processes": 16}},
        "final": {"top": 8, "precision_elo": 50.0, "max_deal_sets": 60},
    }
    return ("# A ladder (arena ladder): a tournament file's shared settings plus [ladder] and [final].\n"
            "# README, Run a competition, says what each key does; entrants come by `arena ladder submit`.\n\n"
            + tomli_w.dumps(data))


def _placeholders(seats: int) -> str:
    return "".join(f'\n[[bots]]\nname = "ladder-seat-{i}"\ncommand = "random"\n' for i in range(max(seats, 2)))


def _without_own(text: str) -> str:
    """``text`` with the [ladder] and [final] tables commented out, line for line (so lines still match)."""
    out, own = [], False
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            own = header.group(2).strip().split(".")[0].strip("\"'") in OWN
        out.append(f"# {line}" if own else line)
    return "\n".join(out) + "\n"


def check_text(text: str, file: str) -> tuple[LadderSettings | None, list[ConfigError]]:
    """Every problem of a ladder file's text at once (the tournament checker's sentences for shared keys)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return None, [ConfigError("", None, f"not valid TOML: {e}", file)]
    lines = _KeyLines(text)
    errors: list[ConfigError] = []
    for key in data:
        if key not in SHARED and key not in OWN:
            errors.append(ConfigError(key, lines.find((key,)), "not a ladder setting (expected one of "
                                      f"{', '.join(SHARED + OWN)}; entrants come by submission)", file))
    seats = data.get("seats", 2)
    shared_text = _without_own(text) + _placeholders(seats if isinstance(seats, int) and 0 < seats < 100 else 2)
    base, shared_errors = validate_text(shared_text, base_dir=Path(file).parent, file=file)
    errors += [e for e in shared_errors if e.key.split(".")[0].split("[")[0] in SHARED or not e.key]
    if base is None and not errors:
        base_unusable = [e for e in shared_errors if e.key.split(".")[0] in OWN]
        errors += base_unusable or [ConfigError("", None, "the shared settings do not check", file)]
    values: dict[str, Any] = {}
    for table in OWN:
        got = data.get(table, {})
        if not isinstance(got, dict):
            errors.append(ConfigError(table, lines.find((table,)), "expected a table", file))
            continue
        for key, value in got.items():
            path = (table, key)
            where = lines.find(path)
            if path in _INTS:
                lo, hi = _INTS[path]
                if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                    errors.append(ConfigError(f"{table}.{key}", where, f"expected a whole number from {lo} to {hi}, "
                                              f"got {value!r}", file))
            elif path in _FLOATS:
                lo_f, hi_f = _FLOATS[path]
                if not isinstance(value, int | float) or isinstance(value, bool) or not lo_f <= value <= hi_f:
                    errors.append(ConfigError(f"{table}.{key}", where, f"expected a number from {lo_f} to {hi_f}, "
                                              f"got {value!r}", file))
            elif path in _BOOLS:
                if not isinstance(value, bool):
                    errors.append(ConfigError(f"{table}.{key}", where, f"expected true or false, got {value!r}", file))
            elif path == ("ladder", "limits"):
                errors += _limits_problems(value, lines, file)
                continue
            else:
                known = [k for t, k in (*_INTS, *_FLOATS, *_BOOLS) if t == table] + (["limits"] if table == "ladder" else [])
                errors.append(ConfigError(f"{table}.{key}", where, f"unknown key (expected one of {', '.join(sorted(known))})", file))
                continue
            values[f"{'final_' if table == 'final' and key == 'top' else ''}{key}"] = value
    if errors or base is None:
        return None, sorted(errors, key=lambda e: e.line if e.line is not None else 1 << 30)
    limits = data.get("ladder", {}).get("limits")
    if limits is not None:
        values["limits"] = Limits(**limits)
    return LadderSettings(base=base, **values), []


def _limits_problems(value: Any, lines: _KeyLines, file: str) -> list[ConfigError]:
    where = lines.find(("ladder", "limits"))
    if not isinstance(value, dict):
        return [ConfigError("ladder.limits", where, "expected a table such as { memory_mb = 512 }", file)]
    out = []
    for k, v in value.items():
        where = lines.find(("ladder", "limits", k))
        if k not in LIMITS:
            out.append(ConfigError(f"ladder.limits.{k}", where, f"unknown limit (expected one of {', '.join(LIMITS)})", file))
        elif not isinstance(v, int) or isinstance(v, bool) or v < 1:
            out.append(ConfigError(f"ladder.limits.{k}", where, f"expected a whole number of at least 1, got {v!r}", file))
    return out


def load(root: Path) -> LadderSettings:
    """The ladder's settings; LadderError with the first problem (file:line: key: what) otherwise."""
    path = root / LADDER_FILE
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise LadderError(f"{path}: larger than 1 MiB; a ladder file is a few KiB")
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise LadderError(f"{root} is not a ladder (it has no {LADDER_FILE}); make one with: arena ladder init {root}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LadderError(f"cannot read {path}: {e}") from None
    s, errors = check_text(text, str(path))
    if errors or s is None:
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise LadderError(f"{errors[0]}{more}")
    return s


def problems(root: Path) -> list[str]:
    """Every problem of the ladder file, one sentence each (``arena ladder init --check``, the tests)."""
    path = root / LADDER_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return [f"cannot read {path}: {e}"]
    return [str(e) for e in check_text(text, str(path))[1]]
