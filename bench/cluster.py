"""Cluster benchmark: games/s of the local executor vs one and two Dask workers, in the same run.

The tournament of ``bench/tournament.py`` (6 sample bots at 2-seat basic tables,
``target`` 10, records off), played three ways on this machine:

1. the local executor at concurrency 2 (two worker processes);
2. a Dask cluster on loopback with one worker (``dask worker --nthreads 1``);
3. the same cluster with two workers;

taking turns (3 rounds, the median of each), each giving steady-state games/s
(first finished game to the last) and bot
starts per game against the ideal ``bots x workers / games``.  Then the
coordinator's memory (RSS of the ``arena run`` process: journal, Dask client,
futures in flight) with a schedule of 10,000 games on the two workers, after
``early`` and after ``late`` of its games (the run is stopped there): the
schedule is never a list, so memory must not grow with it.

Run: ``python bench/cluster.py [--quick]``; ``main()`` returns the figures.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.tournament import BOTS, GAMES_PER_SET, tournament_toml  # noqa: E402

SCHEDULED = 10_000


class _Enough(Exception):
    """Raised from the progress callback to end a run early (the runner stops its executor)."""


def play(games: int, cluster: str | None, checkpoints: tuple[int, ...] = (), stop_at: int | None = None,
         concurrency: int = 2) -> dict[str, Any]:
    """Run about ``games`` games (locally, or on ``cluster``); its figures and the RSS at ``checkpoints``."""
    from arena.tournament import config, runner

    deal_sets = max(1, math.ceil(games / GAMES_PER_SET))
    times: list[float] = []
    rss: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        file = Path(tmp) / "bench.toml"
        file.write_text(tournament_toml(deal_sets, concurrency))
        t = config.load(file)
        starts = [0]
        played = [0]

        def on_progress(summary: runner.RunSummary, _entry: runner.JournalEntry) -> None:
            times.append(time.monotonic())
            starts[0], played[0] = summary.bot_starts, summary.played
            if summary.played in checkpoints:
                rss[summary.played] = psutil.Process().memory_info().rss / 2**20
            if stop_at is not None and summary.played >= stop_at:
                raise _Enough

        try:
            summary = runner.run(t, t.output_dir, on_progress=on_progress, cluster=cluster)
            total = summary.total
        except _Enough:
            total = deal_sets * GAMES_PER_SET
    steady = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0
    return {"games": played[0], "scheduled": total, "games_per_s": steady, "bot_starts": starts[0], "rss": rss}


def main(quick: bool = False) -> dict[str, float]:
    """Every figure; the three executors take turns (``rounds`` times, median of each), so a machine that
    others load moves all three alike."""
    from tests.dask_cluster import LoopbackCluster

    games, rounds = (150, 1) if quick else (200, 3)
    early, late = (100, 300) if quick else (200, 1000)
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "one": [], "two": []}
    with tempfile.TemporaryDirectory(prefix="arena-bench-cluster-") as tmp, \
            LoopbackCluster(Path(tmp) / "one", workers=1) as c1, LoopbackCluster(Path(tmp) / "two", workers=2) as c2:
        for _ in range(rounds):
            runs["local"].append(play(games, None))
            runs["one"].append(play(games, c1.address))
            runs["two"].append(play(games, c2.address))
        mem = play(SCHEDULED, c2.address, checkpoints=(early, late), stop_at=late)
    local, one, two = (sorted(runs[k], key=lambda r: r["games_per_s"])[len(runs[k]) // 2] for k in ("local", "one", "two"))
    bots = len(BOTS)
    return {
        "bots": bots,
        "games": local["games"],
        "rounds": rounds,
        "games_per_s_local_c2": local["games_per_s"],
        "games_per_s_dask_1": one["games_per_s"],
        "games_per_s_dask_2": two["games_per_s"],
        "dask_2_over_1": two["games_per_s"] / one["games_per_s"] if one["games_per_s"] else 0.0,
        "dask_2_over_local": two["games_per_s"] / local["games_per_s"] if local["games_per_s"] else 0.0,
        "bot_starts_per_game_local": local["bot_starts"] / local["games"],
        "bot_starts_per_game_dask_1": one["bot_starts"] / one["games"],
        "bot_starts_per_game_dask_2": two["bot_starts"] / two["games"],
        "ideal_per_game_1": bots / one["games"],
        "ideal_per_game_2": 2 * bots / two["games"],
        "scheduled": mem["scheduled"],
        "rss_early_games": early,
        "rss_late_games": late,
        "rss_coordinator_early_mb": mem["rss"].get(early, 0.0),
        "rss_coordinator_late_mb": mem["rss"].get(late, 0.0),
        "rss_coordinator_ratio": mem["rss"].get(late, 0.0) / mem["rss"][early] if mem["rss"].get(early) else 0.0,
    }


def report(f: dict[str, float]) -> str:
    rows = [
        ("games/s, local executor, concurrency 2", f"{f['games_per_s_local_c2']:.1f}",
         f"{f['games']} games a run, median of {f['rounds']} run(s) each, taking turns"),
        ("games/s, Dask, 1 worker (1 thread)", f"{f['games_per_s_dask_1']:.1f}", ""),
        ("games/s, Dask, 2 workers (1 thread each)", f"{f['games_per_s_dask_2']:.1f}",
         f"{f['dask_2_over_1']:.2f}x one worker, {f['dask_2_over_local']:.2f}x local"),
        ("bot starts per game, local concurrency 2", f"{f['bot_starts_per_game_local']:.4f}",
         f"ideal {f['ideal_per_game_2']:.4f}"),
        ("bot starts per game, Dask 1 worker", f"{f['bot_starts_per_game_dask_1']:.4f}",
         f"ideal {f['ideal_per_game_1']:.4f} ({f['bots']} bots x 1 worker)"),
        ("bot starts per game, Dask 2 workers", f"{f['bot_starts_per_game_dask_2']:.4f}",
         f"ideal {f['ideal_per_game_2']:.4f} ({f['bots']} bots x 2 workers)"),
        (f"coordinator RSS, {f['scheduled']:,} games scheduled, after {f['rss_early_games']} / {f['rss_late_games']}",
         f"{f['rss_coordinator_early_mb']:.1f} / {f['rss_coordinator_late_mb']:.1f} MiB",
         f"ratio {f['rss_coordinator_ratio']:.3f}"),
    ]
    w = max(len(r[0]) for r in rows)
    v = max(len(r[1]) for r in rows)
    head = f"basic, {f['bots']} bots at 2-seat tables, target 10, records off; cluster on loopback, this machine"
    return head + "\n" + "\n".join(f"{a:<{w}}  {b:>{v}}  {c}" for a, b, c in rows)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer games")
    ns = ap.parse_args()
    print(report(main(ns.quick)))
