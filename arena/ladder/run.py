"""``arena ladder run``: batches of games until stopped, each a tournament folder the runner plays.

One loop, one batch at a time (docs/ARCHITECTURE.md, "The ladder"):

1. take the inbox (``submit.take_inbox``);
2. an unfinished batch (the last one, after a kill) is resumed (``runner.run(..., resume=True)``:
   its signed journal loses nothing and repeats nothing); otherwise the next batch's tables are
   chosen (``pairing.choose``) and written as ``batches/NNNNNN/``: a one-round ``swiss`` tournament
   of exactly the chosen versions whose round's tables are recorded (``rounds.jsonl``) before the
   runner starts, so the runner plays the ladder's tables, each table a duplicate deal-set played
   under every seating;
3. after the batch: each version's games with a failure are counted over the ladder, and a version
   with ``suspend_after`` of them is suspended with the reason; a version that did not start at all
   (the runner's start-up check) is suspended at once and the batch is chosen again without it (a
   batch resumed after a kill keeps the games it has and is closed: ``closed.txt``), so a broken
   version never stalls the ladder; each version's own log of the batch is copied to
   ``entrants/NAME/vN/logs/NNNNNN.log`` (what the entrant may see); the ratings of every version
   are appended to ``history.jsonl``; that line marks the batch done, so a run killed between a
   batch's last game and its line does this bookkeeping when it starts again.

SIGINT and SIGTERM stop it cleanly (the runner stops its workers and their bots; the batch's
journal holds every finished game); ``kill -9`` loses nothing either: the next run resumes the batch.

On a Dask cluster (``Where``, ``arena ladder run --cluster``) a batch is played by the runner's Dask
executor as a tournament's games are: the ladder stays the coordinator (key, journal, bookkeeping) and
the workers only play (each version's folder uploaded to them, unless ``--ship path``).  The runner
takes a league to a cluster only when all its rounds are recorded, which a batch's one round is before
it starts; a kill of the coordinator is resumed as on the local pool (a game is journaled once).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any

from arena.integrity import make_key
from arena.ladder import pairing, submit
from arena.ladder.games import ladder_games
from arena.ladder.layout import (
    BATCHES,
    HISTORY_FILE,
    LadderError,
    active_bots,
    batch_dirs,
    bot_id,
    locked,
    registry,
    require_ladder,
    save_registry,
    split_bot_id,
    state,
    version_dir,
)
from arena.ladder.settings import LadderSettings, load
from arena.settings import BotSpec
from arena.tournament import rounds, schedule
from arena.tournament.config import Tournament, read_resolved, write_resolved
from arena.tournament.journal import read
from arena.tournament.ratings import rate

LOG_CAP = 256 << 10   # of a version's log kept per batch
IDLE_S = 1.0          # between looks at the inbox while too few versions can play


@dataclass
class RunStats:
    batches: int = 0
    games: int = 0
    suspended: list[str] | None = None
    interrupted: bool = False


def _batch_tournament(root: Path, s: LadderSettings, number: int, tables: list[tuple[str, ...]],
                      entrants: dict[str, list[dict[str, Any]]]) -> Tournament:
    bots = []
    for bot in [b for t in tables for b in t]:
        name, version = split_bot_id(bot)
        v = next(x for x in entrants[name] if x["version"] == version)
        cwd = (version_dir(root, name, version) / "bot").relative_to(root).as_posix()
        bots.append(BotSpec(name=bot, command=v["command"], cwd=cwd, transport=v.get("transport", "zmq"),
                            limits=s.limits))
    per_round = len(tables) * schedule.seatings_per_set(replace(s.base, bots=tuple(bots))) * s.base.deal_sets
    return replace(s.base, name=f"{s.base.name}-batch-{number:06d}", bots=tuple(bots), format="swiss",
                   games=per_round, seed=number, base_dir=str(root), output=str(root / BATCHES / f"{number:06d}"),
                   max_tables=None, challengers=(), history=(), limits=s.limits)


def new_batch(root: Path, s: LadderSettings, number: int, tables: list[tuple[str, ...]],
              entrants: dict[str, list[dict[str, Any]]]) -> Path:
    """Write batch ``number``'s folder: its tournament, key and recorded tables (nothing played yet)."""
    folder = root / BATCHES / f"{number:06d}"
    if folder.exists():
        shutil.rmtree(folder)  # a batch that never got as far as its tables: chosen again
    tmp = root / BATCHES / f".{number:06d}.new"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    t = _batch_tournament(root, s, number, tables, entrants)
    write_resolved(t, tmp)
    key = make_key(tmp)
    resolved = read_resolved(tmp)
    rounds.record(tmp, key, 0, tuple(tuple(x) for x in tables), rounds.tag_of(resolved))
    os.replace(tmp, folder)  # the batch exists whole or not at all
    return folder


CLOSED = "closed.txt"  # in a batch that cannot go on (a version did not start once it had begun): why


def _unfinished(root: Path) -> Path | None:
    """The last batch when games of it are left to play (and it was not closed)."""
    for folder in reversed(batch_dirs(root)):
        try:
            t = read_resolved(folder)
        except (ValueError, OSError):
            return None
        if (folder / CLOSED).exists():
            return None
        return folder if len(read(folder).entries) < schedule.total_games(t) else None
    return None


def _failing(root: Path, s: LadderSettings) -> dict[str, str]:
    """Active versions with ``suspend_after`` games with a failure: version -> the reason."""
    counts: dict[str, list[str]] = {}
    for g in ladder_games(root):
        for bot, fails in zip(g.entry.seats, g.entry.failures):
            kinds = [k for k, n in fails.items() if n]
            if kinds:
                counts.setdefault(bot, []).append(kinds[0])
    return {b: f"{len(k)} games with a failure (the last: {k[-1]}); suspended after {s.suspend_after}"
            for b, k in counts.items() if len(k) >= s.suspend_after}


def suspend(root: Path, why: dict[str, str]) -> list[str]:
    """Suspend these versions (when active) with their reasons; returns the ones suspended now."""
    done = []
    with locked(root):
        entrants = registry(root)
        for bot, reason in why.items():
            name, version = split_bot_id(bot)
            for v in entrants.get(name, []):
                if v["version"] == version and v["status"] == "active":
                    v["status"], v["reason"] = "suspended", reason
                    done.append(bot)
        save_registry(root, entrants)
    return done


def _keep_logs(root: Path, folder: Path) -> None:
    """Each version's own output in this batch (all workers), for its entrant: capped."""
    for bot in {b.name for b in read_resolved(folder).bots}:
        name, version = split_bot_id(bot)
        logs = sorted((folder / "logs").glob(f"worker*/{bot}.log")) + sorted((folder / "logs").glob(f"startup/{bot}.log"))
        if not logs:
            continue
        dest = version_dir(root, name, version) / "logs"
        dest.mkdir(parents=True, exist_ok=True)
        with open(dest / f"{folder.name}.log", "wb") as out:
            left = LOG_CAP
            for log in logs:
                with open(log, "rb") as f:
                    chunk = f.read(left)
                out.write(chunk)
                left -= len(chunk)
                if left <= 0:
                    break


def _history(root: Path, batch: str) -> None:
    ratings = rate([g.entry for g in ladder_games(root)])
    line = {"batch": batch, "ratings": {b: [r.games, round(r.rating, 1)] for b, r in sorted(ratings.items())}}
    path = root / HISTORY_FILE
    torn = path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n")
    with open(path, "a", encoding="utf-8") as f:
        f.write(("\n" if torn else "") + json.dumps(line, separators=(",", ":")) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _in_history(root: Path) -> set[str]:
    try:
        lines = (root / HISTORY_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return set()
    done = set()
    for line in lines:
        try:
            done.add(str(json.loads(line)["batch"]))
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line
    return done


def _after_batch(root: Path, s: LadderSettings, folder: Path, stats: RunStats, say: Callable[[str], None]) -> None:
    """A finished batch's bookkeeping: its logs, the suspensions, the history line (last: its mark of done)."""
    _keep_logs(root, folder)
    now = suspend(root, _failing(root, s))
    if now:
        say(f"suspended (failing in games): {', '.join(now)}")
        stats.suspended = [*(stats.suspended or []), *now]
    _history(root, folder.name)


def _did_not_start(problems: list[str], bots: list[str]) -> dict[str, str]:
    out = {}
    for why in problems:
        for b in bots:
            if f"'{b}'" in why:
                out[b] = f"did not start: {why.split(' did not start: ', 1)[-1]}"[:500]
    return out


def _said(outcome: submit.Outcome | str) -> str:
    if isinstance(outcome, str):
        return outcome
    verdict = "accepted" if outcome.accepted else f"refused: {outcome.reason}"
    return f"{outcome.entrant} version {outcome.version}: {verdict}"


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@dataclass(frozen=True)
class Where:
    """Where the batches are played: the local worker pool, or the Dask cluster at ``cluster`` with each
    version's folder uploaded to the workers (``ship = "upload"``) or found at the same path (``"path"``)."""

    cluster: str | None = None
    ship: str = "upload"


LOCAL = Where()


def play_batch(root: Path, folder: Path, resume: bool, where: Where = LOCAL) -> tuple[int, bool, list[str]]:
    """Play (or resume) one batch: (games played, interrupted, bots that did not start)."""
    from arena.tournament.runner import BotProblems, RunError, run

    t = read_resolved(folder)
    if where.cluster is not None:
        upload = tuple(b.name for b in t.bots) if where.ship == "upload" else ()
        t = replace(t, executor=replace(t.executor, cluster=where.cluster, upload=upload))
    try:
        summary = run(t, folder, resume=resume, cluster=where.cluster)
    except BotProblems as e:
        failed = _did_not_start(e.problems, [b.name for b in t.bots])
        if not failed:
            raise LadderError(f"batch {folder.name}: {e}") from None
        if not read(folder).entries:
            shutil.rmtree(folder)  # nothing played: the batch is chosen again without them
        else:  # its games count; the rest of it is not played (the next batch is chosen without them)
            (folder / CLOSED).write_text(f"closed: {', '.join(sorted(failed))} did not start\n", encoding="utf-8")
        suspend(root, failed)
        return 0, False, sorted(failed)
    except RunError as e:
        raise LadderError(f"batch {folder.name}: {e}") from None
    return summary.played, summary.interrupted, []


def run_ladder(root: Path, max_batches: int | None = None, max_games: int | None = None,
               say: Callable[[str], None] = lambda _m: None, idle_exit: bool = False, where: Where = LOCAL) -> RunStats:
    """Run batches until stopped (SIGINT, SIGTERM), ``max_batches`` batches, or ``max_games`` games;
    ``idle_exit``: stop instead of waiting when too few versions can play; ``where``: the pool or a cluster."""
    require_ladder(root)
    s = load(root)
    stats = RunStats(suspended=[])
    with _sigterm_stops():
        try:
            while (max_batches is None or stats.batches < max_batches) and (max_games is None or stats.games < max_games):
                if state(root) == "final":
                    raise LadderError("the ladder is final (arena ladder final played): it plays no more batches")
                if state(root) == "open":
                    for outcome in submit.take_inbox(root):
                        say(f"inbox: {_said(outcome)}")
                folder = _unfinished(root)
                resume = folder is not None
                last = batch_dirs(root)[-1] if batch_dirs(root) else None
                if folder is None and last is not None and last.name not in _in_history(root):
                    _after_batch(root, s, last, stats, say)  # killed between its last game and this
                if folder is None:
                    entrants = registry(root)
                    games = ladder_games(root)
                    counts = {b: r.games for b, r in rate([g.entry for g in games]).items()}
                    tables = pairing.choose(active_bots(entrants), counts, [g.entry for g in games], s.base.seats,
                                            s.tables_per_batch, s.new_games, s.settled_share,
                                            seed=len(batch_dirs(root)) + 1)
                    if not tables:
                        if idle_exit:
                            break
                        time.sleep(IDLE_S)
                        continue
                    number = int(batch_dirs(root)[-1].name) + 1 if batch_dirs(root) else 1
                    folder = new_batch(root, s, number, tables, entrants)
                    say(f"batch {number:06d}: {len(tables)} table(s): " + "; ".join(" v ".join(t) for t in tables))
                played, interrupted, broken = play_batch(root, folder, resume, where)
                stats.games += played
                if broken:
                    say(f"suspended (did not start): {', '.join(broken)}")
                    stats.suspended = [*(stats.suspended or []), *broken]
                    continue
                if interrupted:
                    stats.interrupted = True
                    break
                stats.batches += 1
                _after_batch(root, s, folder, stats, say)
                say(f"batch {folder.name}: {played} game(s) played")
        except KeyboardInterrupt:
            stats.interrupted = True
    return stats


__all__ = ["LOCAL", "RunStats", "Where", "bot_id", "new_batch", "play_batch", "run_ladder", "suspend"]
