"""The ladder folder's layout and its registry of entrants (``entrants.json``): paths, names, atomic writes.

A ladder is one folder (``DIR``); every path a reader sees is relative to it::

    DIR/ladder.toml                 the organiser's settings (arena.ladder.settings)
    DIR/state.json                  {"state": "open" | "frozen" | "final"}
    DIR/entrants.json               the registry: entrant -> versions (status, fingerprint, reason)
    DIR/registry.lock               held while the registry or the state changes
    DIR/history.jsonl               one line per finished batch: each version's [games, rating] then
    DIR/inbox/NAME/                 a watched folder: a bot dropped here is submitted as NAME
    DIR/entrants/NAME/vN/bot/       version N's files as submitted (copied, read-only)
    DIR/entrants/NAME/vN/check.txt  the check-bot report of that submission (the entrant may read it)
    DIR/batches/NNNNNN/             one batch of games: a tournament results folder (tournament.toml,
                                    secret.key, journal.jsonl, rounds.jsonl, records/, logs/; closed.txt
                                    when a version stopped starting part way through it)
    DIR/final/                      the final's tournament results folder (arena ladder final)
    DIR/exports/                    what arena ladder export writes

A version plays under the bot name ``NAME.vN`` (entrant names cannot hold a dot).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LADDER_FILE = "ladder.toml"
STATE_FILE = "state.json"
REGISTRY_FILE = "entrants.json"
LOCK = "registry.lock"
HISTORY_FILE = "history.jsonl"
INBOX = "inbox"
ENTRANTS = "entrants"
BATCHES = "batches"
FINAL = "final"
EXPORTS = "exports"
CHECK_FILE = "check.txt"
STATES = ("open", "frozen", "final")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
# a version's status: checking (at the door now), active (plays), retired (a newer version replaced it),
# suspended (failed in games), refused (did not pass the check at the door: never played)
STATUSES = ("checking", "active", "retired", "suspended", "refused")


class LadderError(ValueError):
    """Something about a ladder folder or a request that is wrong: one sentence."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be an entrant's name, or None."""
    if not NAME_RE.fullmatch(name):
        return (f"entrant name {name!r} is not allowed: use 1 to 32 letters, digits, '-' or '_', "
                "starting with a letter or digit")
    return None


def bot_id(entrant: str, version: int) -> str:
    """The bot name a version plays under."""
    return f"{entrant}.v{version}"


def split_bot_id(bot: str) -> tuple[str, int]:
    entrant, _, v = bot.rpartition(".v")
    return entrant, int(v)


def version_dir(root: Path, entrant: str, version: int) -> Path:
    return root / ENTRANTS / entrant / f"v{version}"


def batch_dirs(root: Path) -> list[Path]:
    """The batch folders, oldest first."""
    folder = root / BATCHES
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name.isdigit())


def write_json(path: Path, data: Any) -> None:
    """Replace ``path`` atomically (a reader sees the old file or the new one, never half)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as e:
        raise LadderError(f"{path} cannot be read ({e})") from None


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold the ladder's registry lock (submit, run and freeze change the registry one at a time)."""
    with open(root / LOCK, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def require_ladder(root: Path) -> None:
    if not (root / LADDER_FILE).is_file():
        raise LadderError(f"{root} is not a ladder (it has no {LADDER_FILE}); make one with: arena ladder init {root}")


def state(root: Path) -> str:
    s = read_json(root / STATE_FILE, {"state": "open"}).get("state", "open")
    return s if s in STATES else "open"


def set_state(root: Path, new: str) -> None:
    write_json(root / STATE_FILE, {"state": new})


def registry(root: Path) -> dict[str, list[dict[str, Any]]]:
    """entrant -> its versions (dicts, oldest first)."""
    data = read_json(root / REGISTRY_FILE, {"entrants": {}})
    out: dict[str, list[dict[str, Any]]] = data.get("entrants", {})
    return out


def save_registry(root: Path, entrants: dict[str, list[dict[str, Any]]]) -> None:
    write_json(root / REGISTRY_FILE, {"entrants": entrants})


def active_bots(entrants: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The bot names of the versions that play (status active), sorted."""
    return sorted(bot_id(name, v["version"]) for name, vs in entrants.items() for v in vs if v["status"] == "active")
