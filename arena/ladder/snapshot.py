"""The ladder as the leaderboard server shows it: ``snapshot(dir)``, a JSON-ready dict, read-only.

The one thing ``arena ladder serve`` reads (docs/ARCHITECTURE.md, "The ladder").  Its shape, stable::

    {"ladder": {"name", "variant", "seats", "state": "open" | "frozen" | "final", "games", "updated"},
     "leaderboard": [{"rank", "entrant", "version", "rating", "low", "high", "games", "provisional",
                      "bound", "status"}],   # one row per entrant: its newest version that played or may
                                                  # play (active or suspended); bound: null, ">" (never lost:
                                                  # the rating is a lower bound) or "<" (never won: an upper one)
     "entrants": {NAME: {"versions": [{"version", "submitted", "fingerprint", "status", "reason", "games",
                                       "rating_history": [[games_so_far, rating], ...],
                                       "check_report"}],   # entrants/NAME/vN/check.txt (the entrant's), or null
                         "recent_games": [{"game", "record", "placings", "finished"}],   # newest first
                         "failures": [{"game", "kind", "reason", "log"}]}},                # newest first
     "final": null | {"games", "standings": [{"rank", "entrant", "version", "rating", "low", "high",
                                              "games", "provisional"}]}}

Ratings are ``arena.tournament.ratings.rate`` over every game of the ladder (the footing of the
standings: 95% intervals, bounds, provisional marks); ``low``/``high`` are null where the rating is a
bound.  Paths (``record``, ``log``) are relative to the ladder folder; ``log`` is the entrant's own
bot's output (``entrants/NAME/vN/logs/``) or null.  Nothing here is secret: no key, no deal seed, no
host path, no bot's command or environment, no other entrant's log.  Entrant-made text is in it as
it came: a version's ``reason`` may quote its bot's own output (a check's FAIL line), and names are
the entrants' choice within ``layout.NAME_RE``: a page escapes every string (``arena.untrusted``).

Cached: a snapshot is kept with the ``games.stamp`` of every file it is made from (ladder.toml, the
state, the registry, the history, each batch's and the final's journal and key, the batch list), and
handed out again while none changed; a page load with nothing new reads no journal and fits nothing.
What else it shows is written before one of those changes (a check's report before the registry
entry, a batch's logs before its history line, a record before its journal line).  The dict is
shared between callers: read it, never change it.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import tomllib
from pathlib import Path
from typing import Any

from arena.failures import KINDS
from arena.ladder.games import LadderGame, Stamp, ladder_games, record_of, stamp
from arena.ladder.layout import (
    CHECK_FILE,
    FINAL,
    HISTORY_FILE,
    LADDER_FILE,
    REGISTRY_FILE,
    STATE_FILE,
    batch_dirs,
    bot_id,
    registry,
    split_bot_id,
    state,
    version_dir,
)
from arena.tournament.journal import JOURNAL_FILE
from arena.tournament.ratings import Rating, rate

RECENT = 20       # recent games kept per entrant
FAILURES = 50     # failures kept per entrant


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="seconds")


def _mtime(p: Path) -> float | None:
    try:
        return p.stat().st_mtime
    except OSError:
        return None


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def rating_row(r: Rating | None) -> dict[str, Any]:
    if r is None:
        return {"rating": None, "low": None, "high": None, "games": 0, "provisional": True, "bound": None}
    return {"rating": _r(r.rating), "low": _r(r.low), "high": _r(r.high), "games": r.games,
            "provisional": r.provisional, "bound": r.bound}


def ranked(ratings: dict[str, Rating], bots: list[str]) -> list[str]:
    """Best first, as the standings rank: settled bots by ``order_key``, then provisional ones, then unplayed."""
    played = [b for b in bots if b in ratings]
    played.sort(key=lambda b: (ratings[b].provisional, ratings[b].order_key(), b))
    return played + sorted(b for b in bots if b not in ratings)


def _history(root: Path) -> dict[str, list[list[float]]]:
    out: dict[str, list[list[float]]] = {}
    try:
        lines = (root / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            data = json.loads(line)
            for bot, (games, rating) in data["ratings"].items():
                out.setdefault(bot, []).append([int(games), round(float(rating), 1)])
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line
    return out


def _own_log(root: Path, g: LadderGame, bot: str) -> str | None:
    entrant, version = split_bot_id(bot)
    log = version_dir(root, entrant, version) / "logs" / f"{Path(g.batch).name}.log"
    return log.relative_to(root).as_posix() if log.exists() else None


def _final(root: Path) -> dict[str, Any] | None:
    folder = root / FINAL
    if not (folder / "secret.key").exists():
        return None
    games = [g.entry for g in ladder_games(root, [folder])]
    ratings = rate(games)
    rows = []
    for rank, bot in enumerate(ranked(ratings, list(ratings)), start=1):
        entrant, version = split_bot_id(bot)
        rows.append({"rank": rank, "entrant": entrant, "version": version, **rating_row(ratings.get(bot))})
    return {"games": len(games), "standings": rows}


_lock = threading.Lock()
_cached: dict[str, tuple[tuple[tuple[str, ...], Stamp], dict[str, Any]]] = {}  # ladder -> (its stamp, snapshot)
MAX_LADDERS = 16  # ladders whose snapshot is kept (a process serves one, tests make many)


def _stamp(root: Path) -> tuple[tuple[str, ...], Stamp]:
    batches = batch_dirs(root)
    files = [root / LADDER_FILE, root / STATE_FILE, root / REGISTRY_FILE, root / HISTORY_FILE]
    for folder in [*batches, root / FINAL]:
        files += [folder / JOURNAL_FILE, folder / "secret.key"]
    return tuple(b.name for b in batches), stamp(*files)


def snapshot(dir: Path) -> dict[str, Any]:
    """The ladder in ``dir`` as one JSON-ready dict (the shape above); the cached one while nothing changed."""
    root = Path(dir)
    where = str(root.resolve())
    now = _stamp(root)  # taken before reading: a change while it is made makes the next call read again
    with _lock:
        held = _cached.get(where)
    if held is not None and held[0] == now:
        return held[1]
    snap = compute(root)
    with _lock:
        if len(_cached) >= MAX_LADDERS:
            _cached.clear()
        _cached[where] = (now, snap)
    return snap


def compute(root: Path) -> dict[str, Any]:
    """The snapshot made now (``snapshot`` without its own cache; each batch's games are still cached)."""
    with open(root / LADDER_FILE, "rb") as f:
        settings = tomllib.load(f)
    entrants = registry(root)
    games = ladder_games(root)
    ratings = rate([g.entry for g in games])
    history = _history(root)
    times = [_mtime(root / REGISTRY_FILE)] + [_mtime(b / "journal.jsonl") for b in batch_dirs(root)]
    seen = [t for t in times if t is not None]

    by_entrant: dict[str, list[LadderGame]] = {}
    for g in games:
        for bot in dict.fromkeys(g.entry.seats):
            by_entrant.setdefault(split_bot_id(bot)[0], []).append(g)

    board: list[str] = []
    people: dict[str, Any] = {}
    for name, versions in sorted(entrants.items()):
        rows = []
        for v in versions:
            bot = bot_id(name, v["version"])
            r = ratings.get(bot)
            report = version_dir(root, name, v["version"]) / CHECK_FILE
            rows.append({"version": v["version"], "submitted": v.get("submitted"), "fingerprint": v.get("fingerprint"),
                         "status": v["status"], "reason": v.get("reason"), "games": r.games if r else 0,
                         "rating_history": history.get(bot, []),
                         "check_report": report.relative_to(root).as_posix() if report.exists() else None})
        playing = [v for v in versions if v["status"] in ("active", "suspended")]
        if playing:
            board.append(bot_id(name, playing[-1]["version"]))
        mine = by_entrant.get(name, [])
        recent = []
        for g in reversed(mine[-RECENT:]):
            rec = record_of(g)
            recent.append({"game": g.entry.game_id, "record": rec,
                           "placings": dict(zip(g.entry.seats, g.entry.placings)),
                           "finished": _iso(_mtime(root / rec)) if rec else None})
        failures: list[dict[str, Any]] = []
        for g in reversed(mine):
            for bot, fails in zip(g.entry.seats, g.entry.failures):
                if split_bot_id(bot)[0] != name:
                    continue
                for kind, count in sorted(fails.items()):
                    if count:
                        row = KINDS.get(kind)
                        failures.append({"game": g.entry.game_id, "kind": kind,
                                         "reason": row.what if row else kind, "log": _own_log(root, g, bot)})
            if len(failures) >= FAILURES:
                break
        people[name] = {"versions": rows, "recent_games": recent, "failures": failures[:FAILURES]}

    status = {bot_id(n, v["version"]): v["status"] for n, vs in entrants.items() for v in vs}
    leaderboard = []
    for rank, bot in enumerate(ranked(ratings, board), start=1):
        entrant, version = split_bot_id(bot)
        leaderboard.append({"rank": rank, "entrant": entrant, "version": version, **rating_row(ratings.get(bot)),
                            "status": status[bot]})
    return {
        "ladder": {"name": str(settings.get("name", root.name)), "variant": str(settings.get("variant", "")),
                   "seats": int(settings.get("seats", 2)), "state": state(root), "games": len(games),
                   "updated": _iso(max(seen) if seen else None)},
        "leaderboard": leaderboard,
        "entrants": people,
        "final": _final(root),
    }
