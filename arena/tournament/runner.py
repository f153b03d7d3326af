"""Running a tournament: worker processes play games, the main process journals them.

The unit of work is one game, fully described by the resolved tournament (the
``tournament.toml`` in the results folder) and the game's index: a worker
needs nothing else, so the same games could run on another executor.  Each
worker owns one ``BotHost`` and keeps its bots alive across its games (a
fresh ``new_game`` each time), restarting a bot only after it crashed, timed
out or disconnected.  The main process hands out indices that the journal
does not hold yet, appends every finished game to the journal (fsync'd), and
shows progress; ``--resume`` after any interruption, ``kill -9`` included,
continues without losing or repeating a game.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from arena.tournament import schedule
from arena.tournament.config import RESOLVED_FILE, Tournament, read_resolved, write_resolved
from arena.tournament.journal import Journal, JournalEntry, done_indices, read

RESTART_AFTER = ("crash", "disconnect", "timeout", "resource")


class RunError(RuntimeError):
    """A run that cannot start (e.g. a results folder of another tournament)."""


@dataclass
class RunSummary:
    total: int
    played: int = 0
    skipped: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    bot_starts: int = 0
    elapsed_s: float = 0.0
    interrupted: bool = False


# -- worker side --------------------------------------------------------------------------------

def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)
        except OSError:
            pass


def play_indexed_game(t: Tournament, index: int, host: Any, peers: dict[str, Any], out: Path) -> tuple[JournalEntry, int]:
    """Play game ``index`` of ``t`` on ``host``; returns its journal entry and the bot starts it needed."""
    from arena.referee import play_one

    spec = schedule.game_at(t, index)
    starts = 0
    seat_peers = []
    for name in spec.seats:
        p = peers[name]
        if not p.ready or not p.alive():
            host.start(p)
            starts += 1
        seat_peers.append(p)
    record = out / "records" / f"{spec.game_id}.jsonl" if t.records else None
    began = time.monotonic()
    result = play_one(host, seat_peers, t.rules, spec.deal_seed, spec.game_id, t.time, t.failures, record)
    for p, fails in zip(seat_peers, result.failures):
        if any(fails.get(k) for k in RESTART_AFTER) and p.process is not None:
            host.stop_peer(p, "restarting after a failure", wait_s=0.2)
    entry = JournalEntry(
        index=index, game_id=spec.game_id, deal_seed=spec.deal_seed, table=spec.table, set=spec.set,
        seating=spec.seating, seats=list(spec.seats), placings=result.placings, totals=result.totals,
        failures=result.failures, forfeited=result.forfeited,
        record=str(record.relative_to(out)) if record else None, deals=result.deals,
        turn_capped=result.turn_capped > 0, duration_s=round(time.monotonic() - began, 4),
    )
    return entry, starts


def worker_main(out_dir: str, worker: int, tasks: Any, results: Any) -> None:
    """A worker process: plays the indices it is given until it gets None."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides when to stop
    from arena.bots import install_cleanup
    from arena.host import BotHost

    install_cleanup()
    out = Path(out_dir)
    t = read_resolved(out)
    host = BotHost(t.time, out / "logs" / f"worker{worker}")
    peers = {b.name: host.add(b, cwd=b.workdir(t.base_dir)) for b in t.bots}
    try:
        while True:
            index = tasks.get()
            if index is None:
                break
            results.put(("start", worker, index))
            try:
                entry, starts = play_indexed_game(t, index, host, peers, out)
                results.put(("done", worker, entry, starts))
            except Exception as e:  # noqa: BLE001 - a referee bug must not lose the run
                results.put(("error", worker, index, f"{type(e).__name__}: {e}"))
    finally:
        host.close("the tournament is over")
        results.put(("exit", worker))


# -- main side ----------------------------------------------------------------------------------

def prepare(t: Tournament, out: Path, resume: bool) -> None:
    """Check the results folder and write the resolved tournament into it."""
    existing = out / RESOLVED_FILE
    if existing.exists():
        done = done_indices(out)
        if not resume and done:
            raise RunError(f"{out} already holds {len(done)} finished game(s): use --resume to continue, "
                           f"or --out to start a new folder")
        if resume:
            old = read_resolved(out)
            if old.to_toml_data() | {"base_dir": ""} != t.to_toml_data() | {"base_dir": ""}:
                raise RunError(f"{out} holds a different tournament; --resume needs the same file "
                               f"(or run with --out to start a new folder)")
            return
    elif resume and (out / "journal.jsonl").exists():
        raise RunError(f"{out} has a journal but no {RESOLVED_FILE}; it cannot be resumed")
    write_resolved(t, out)


def _pending(t: Tournament, done: set[int]) -> Iterator[int]:
    for i in range(schedule.total_games(t)):
        if i not in done:
            yield i


def run(t: Tournament, out: Path, resume: bool = False,
        on_progress: Callable[[RunSummary, int], None] | None = None) -> RunSummary:
    """Play every game of ``t`` not yet in the journal of ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    prepare(t, out, resume)
    t = read_resolved(out)  # exactly what the workers will read
    done = done_indices(out)
    summary = RunSummary(total=schedule.total_games(t), skipped=len(done))
    for e in read(out).entries:
        for f in e.failures:
            summary.failures.update(f)
    started = time.monotonic()
    ctx = mp.get_context("spawn")
    tasks = ctx.Queue()
    results = ctx.Queue()
    workers = min(t.concurrency, max(1, summary.total - len(done)))
    procs = [ctx.Process(target=worker_main, args=(str(out), w, tasks, results), daemon=True) for w in range(workers)]
    pending = _pending(t, done)
    in_flight: dict[int, int | None] = {}  # index -> worker (None until it starts)
    exhausted = False
    try:
        for p in procs:
            p.start()
        with Journal(out) as journal:

            def feed() -> None:
                nonlocal exhausted
                while not exhausted and len(in_flight) < 2 * workers:
                    nxt = next(pending, None)
                    if nxt is None:
                        exhausted = True
                        break
                    in_flight[nxt] = None
                    tasks.put(nxt)

            feed()
            while in_flight:
                try:
                    msg = results.get(timeout=0.5)
                except queue.Empty:
                    dead = [w for w, p in enumerate(procs) if not p.is_alive()]
                    if dead and len(dead) == len(procs):
                        raise RunError("every worker process died; see the logs folder")
                    continue
                kind = msg[0]
                if kind == "start":
                    in_flight[msg[2]] = msg[1]
                elif kind == "done":
                    entry: JournalEntry = msg[2]
                    journal.append(entry)
                    in_flight.pop(entry.index, None)
                    summary.played += 1
                    summary.bot_starts += msg[3]
                    for f in entry.failures:
                        summary.failures.update(f)
                    if on_progress:
                        on_progress(summary, entry.index)
                    feed()
                elif kind == "error":
                    in_flight.pop(msg[2], None)
                    raise RunError(f"game {msg[2]} failed inside the referee: {msg[3]}")
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        for _ in procs:
            try:
                tasks.put_nowait(None)
            except Exception:  # noqa: BLE001
                pass
        deadline = time.monotonic() + (3 if not summary.interrupted else 0.5)
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                os.kill(p.pid, signal.SIGTERM)  # its handler kills its bots
                p.join(2)
            if p.is_alive():
                p.kill()
                p.join(1)
        tasks.close()
        results.close()
    summary.elapsed_s = time.monotonic() - started
    return summary
