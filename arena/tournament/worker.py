"""A tournament's worker process: plays the game indices it is given on its own ``BotHost``.

The unit of work is one game, fully described by the resolved tournament (the ``tournament.toml`` in
the results folder) and the game's index, so a worker needs nothing else.  It keeps its bots alive
across its games (a fresh ``new_game`` each time), restarting a bot only after a failure whose row says
so (``arena.failures.RESTART_AFTER``); it dies with the main process (``PR_SET_PDEATHSIG``), and its
bots with it.  A league game's tables are the ones the main process recorded for its round
(``arena.tournament.rounds``).  The local pool (``local_pool``) and the Dask executor both play games
through ``play_indexed_game``.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.integrity import folder_key
from arena.tournament import deals, rounds, schedule
from arena.tournament.config import Tournament, read_resolved
from arena.tournament.executor import Done, Failed, Started, entry_of, play_spec
from arena.tournament.journal import JournalEntry

if TYPE_CHECKING:
    from arena.referee.host import BotHost, Peer


def play_indexed_game(t: Tournament, index: int, host: BotHost, peers: dict[str, Peer], out: Path,
                      key: bytes) -> tuple[JournalEntry, int]:
    """Play game ``index`` of ``t`` on ``host``; returns its journal entry and the bot starts it needed."""
    spec = deals.game_at(t, index, key, recorded_tables(t, out, key, index))
    played = play_spec(t, spec, host, peers)
    return entry_of(t, spec, played, out, key), played.starts


_ROUNDS: dict[tuple[str, int], tuple[tuple[str, ...], ...]] = {}  # a worker's league rounds, chosen once each


def recorded_tables(t: Tournament, out: Path, key: bytes, index: int) -> tuple[tuple[str, ...], ...] | None:
    """A league game's round tables, as the main process recorded them before it gave the round out
    (``arena.tournament.rounds``); None for the other formats."""
    if not schedule.is_league(t):
        return None
    r = schedule.round_of(t, index)
    if (str(out), r) not in _ROUNDS:
        chosen = rounds.recorded(out, key, rounds.tag_of(t))
        if r not in chosen:
            raise RuntimeError(f"round {r} of the league is not in {out / rounds.ROUNDS_FILE}")
        _ROUNDS[(str(out), r)] = chosen[r]
    return _ROUNDS[(str(out), r)]


def worker_main(out_dir: str, worker: int, tasks: Any, results: Any, parent: int,
                remote: tuple[str, int] | None = None) -> None:
    """A worker process: plays the indices it is given until it gets None.  With ``remote``
    (listen address, wait in s) it hosts the tournament's remote seats (``remote_seats``, SPEC 12)."""
    from arena.referee.launch import RUN_MARKER, die_with_parent, install_cleanup

    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process decides when to stop
    from arena.referee.host import BotHost

    os.environ[RUN_MARKER] = out_dir  # every bot (and what it forks) carries the folder: see _sweep
    install_cleanup()
    out = Path(out_dir)
    t = read_resolved(out)
    key = folder_key(out)
    assert key is not None, "the runner makes the key before it starts workers"
    host = BotHost(t.time, out / "logs" / f"worker{worker}", sandbox=t.sandbox, hide=(out,),
                   remote_wait_ms=remote[1] * 1000 if remote else 120_000)
    peers = {b.name: host.add(b, cwd=b.workdir(t.base_dir), data=b.datadir(t.base_dir)) for b in t.bots}
    if remote is not None:
        from arena.tournament import remote_seats

        curve_secret = remote_seats.curve_keys(key)[1]
        for s in remote_seats.seats(t, key, remote[0]).values():
            peers[s.bot] = host.add(t.bot(s.bot), token=s.token, bind=s.bind, curve_secret=curve_secret)
    try:
        while True:
            index = tasks.get()
            if index is None:
                break
            results.put(Started(worker, index))
            try:
                entry, starts = play_indexed_game(t, index, host, peers, out, key)
                results.put(Done(worker, entry, starts))
            except Exception as e:  # noqa: BLE001 - a referee bug must not lose the run
                results.put(Failed(worker, index, f"{type(e).__name__}: {e}"))
    finally:
        host.close("the tournament is over")
