"""Tournament benchmark: games/s at concurrency 1 and 2, bot starts per game, referee memory.

A round robin of 6 sample bots (4 greedy, 2 random instances) at 2-seat basic
tables, run by the real tournament runner (worker processes, bots kept alive,
fsync'd journal) with ``records = false`` and ``[rules] target`` lowered so
games are short and thousands are cheap:

1. games/s at concurrency 1 and at concurrency 2, and the scaling ratio
   (steady state: from the first finished game to the last, start-up apart);
2. bot process starts per game, against the ideal ``bots x workers / games``
   (every worker starts each bot once and keeps it for all its games);
3. resident memory (RSS, psutil) of the referee side, i.e. the main runner
   process plus its worker processes (bots not included), after 1,000 and
   after 5,000 games of one run: it must stay flat (ratio close to 1).

Run: ``python bench/tournament.py [--quick]``.  The sample bots are bundled
bots, so they speak stdio (``BotSpec.speaks``); the same round robin is also played with the same
modules started as user commands, on ZeroMQ through their gates, for the ratio; ``main()`` returns the figures.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOTS = (("greedy", "greedy"), ("greedy-2", "greedy"), ("greedy-3", "greedy"), ("greedy-4", "greedy"),
        ("random", "random"), ("random-2", "random"))
TARGET = 10          # basic's target is 100: a game here is one to three deals
SEATS = 2
ZMQ_FOLDER = "user-bots"  # the copy the ZeroMQ round robin's bots run from
GAMES_PER_SET = math.comb(len(BOTS), SEATS) * 2  # every table, both seatings


def tournament_toml(deal_sets: int, concurrency: int, zmq: bool = False) -> str:
    """``zmq``: the same bots' modules as user commands, so they speak ZeroMQ (a bundled bot speaks
    stdio: ``BotSpec.speaks``), run from a copy of the package in the tournament's folder (a bot's
    folder lies inside it)."""
    from arena.settings import BUNDLED_BOT_MODULES

    def entry(name: str, bot: str) -> str:
        if not zmq:
            return f'\n[[bots]]\nname = "{name}"\ncommand = "{bot}"\n'
        return (f'\n[[bots]]\nname = "{name}"\ncommand = "{sys.executable} -m {BUNDLED_BOT_MODULES[bot]}"\n'
                f'cwd = "{ZMQ_FOLDER}"\n')
    bots = "".join(entry(n, c) for n, c in BOTS)
    return f"""\
name = "bench"
variant = "basic"
seats = {SEATS}
deal_sets = {deal_sets}
concurrency = {concurrency}
seed = 1
records = false
output = "out"

[rules]
target = {TARGET}

[time]
decision_ms = 5000
{bots}"""


def referee_rss() -> tuple[int, int]:
    """RSS in bytes of this (the main runner) process and of its worker processes."""
    me = psutil.Process()
    workers = 0
    for child in me.children():
        try:
            if any("spawn_main" in part for part in child.cmdline()):
                workers += child.memory_info().rss
        except psutil.Error:
            continue
    return me.memory_info().rss, workers


def run_tournament(games: int, concurrency: int, checkpoints: tuple[int, ...] = (), zmq: bool = False) -> dict[str, Any]:
    """Run about ``games`` games; figures of the run, RSS at each checkpoint (games played)."""
    from arena.tournament import config, runner

    deal_sets = max(1, math.ceil(games / GAMES_PER_SET))
    marks: dict[int, tuple[int, int]] = {}
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        file = Path(tmp) / "bench.toml"
        file.write_text(tournament_toml(deal_sets, concurrency, zmq))
        if zmq:
            for package in ("arena", "protocol", "sample_bots"):
                shutil.copytree(ROOT / package, Path(tmp) / ZMQ_FOLDER / package,
                                ignore=shutil.ignore_patterns("__pycache__"))
        t = config.load(file)

        def on_progress(summary: runner.RunSummary, _entry: runner.JournalEntry) -> None:
            times.append(time.monotonic())
            if summary.played in checkpoints:
                marks[summary.played] = referee_rss()

        started = time.monotonic()
        summary = runner.run(t, t.output_dir, on_progress=on_progress)
    steady = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0
    workers = min(concurrency, summary.total)
    return {
        "games": summary.played,
        "workers": workers,
        "wall_s": summary.elapsed_s,
        "startup_s": times[0] - started if times else 0.0,
        "games_per_s": steady,
        "bot_starts": summary.bot_starts,
        "ideal_bot_starts": len(BOTS) * workers,
        "failures": dict(summary.failures),
        "rss": marks,
    }


def main(quick: bool = False) -> dict[str, float]:
    """Every figure of the benchmark, all numbers (``--quick``: fewer games, memory after 200 vs 1,000)."""
    early, late = (200, 1000) if quick else (1000, 5000)
    one = run_tournament(300 if quick else 600, concurrency=1)
    two = run_tournament(late, concurrency=2, checkpoints=(early, late))
    zmq_one = run_tournament(300 if quick else 600, concurrency=1, zmq=True)
    zmq_two = run_tournament(300 if quick else 600, concurrency=2, zmq=True)
    main_early, workers_early = two["rss"][early]
    main_late, workers_late = two["rss"][late]
    return {
        "bots": len(BOTS),
        "target": TARGET,
        "games_c1": one["games"],
        "games_per_s_c1": one["games_per_s"],
        "startup_s_c1": one["startup_s"],
        "games_c2": two["games"],
        "games_per_s_c2": two["games_per_s"],
        "startup_s_c2": two["startup_s"],
        "zmq_games_per_s_c1": zmq_one["games_per_s"],
        "zmq_games_per_s_c2": zmq_two["games_per_s"],
        "zmq_failures": sum(zmq_one["failures"].values()) + sum(zmq_two["failures"].values()),
        "scaling_c2_over_c1": two["games_per_s"] / one["games_per_s"] if one["games_per_s"] else 0.0,
        "bot_starts_c1": one["bot_starts"],
        "bot_starts_c2": two["bot_starts"],
        "bot_starts_per_game_c1": one["bot_starts"] / one["games"],
        "bot_starts_per_game_c2": two["bot_starts"] / two["games"],
        "ideal_bot_starts_per_game_c1": one["ideal_bot_starts"] / one["games"],
        "ideal_bot_starts_per_game_c2": two["ideal_bot_starts"] / two["games"],
        "failures": sum(one["failures"].values()) + sum(two["failures"].values()),
        "rss_early_games": early,
        "rss_late_games": late,
        "rss_main_early_mb": main_early / 2**20,
        "rss_main_late_mb": main_late / 2**20,
        "rss_workers_early_mb": workers_early / 2**20,
        "rss_workers_late_mb": workers_late / 2**20,
        "rss_total_ratio": (main_late + workers_late) / (main_early + workers_early),
        "rss_main_ratio": main_late / main_early,
        "rss_workers_ratio": workers_late / workers_early if workers_early else 0.0,
    }


def report(f: dict[str, float]) -> str:
    early, late = f["rss_early_games"], f["rss_late_games"]
    rows = [
        (f"games/s, concurrency 1 ({f['games_c1']} games)", f"{f['games_per_s_c1']:.1f}",
         f"start-up {f['startup_s_c1']:.1f} s"),
        (f"games/s, concurrency 2 ({f['games_c2']} games)", f"{f['games_per_s_c2']:.1f}",
         f"start-up {f['startup_s_c2']:.1f} s"),
        ("games/s, concurrency 1 / 2, the same bots on ZeroMQ (through gates)",
         f"{f['zmq_games_per_s_c1']:.1f} / {f['zmq_games_per_s_c2']:.1f}",
         f"stdio (above) over ZeroMQ: {f['games_per_s_c1'] / f['zmq_games_per_s_c1']:.2f}x / "
         f"{f['games_per_s_c2'] / f['zmq_games_per_s_c2']:.2f}x"),
        ("scaling, concurrency 2 / 1", f"{f['scaling_c2_over_c1']:.2f}x", "ideal 2x (needs a free core per game)"),
        ("bot starts per game, concurrency 1", f"{f['bot_starts_per_game_c1']:.4f}",
         f"{f['bot_starts_c1']} starts; ideal {f['ideal_bot_starts_per_game_c1']:.4f} ({f['bots']} bots x 1 worker)"),
        ("bot starts per game, concurrency 2", f"{f['bot_starts_per_game_c2']:.4f}",
         f"{f['bot_starts_c2']} starts; ideal {f['ideal_bot_starts_per_game_c2']:.4f} ({f['bots']} bots x 2 workers)"),
        (f"RSS main runner process, after {early} / {late} games",
         f"{f['rss_main_early_mb']:.1f} / {f['rss_main_late_mb']:.1f} MiB", f"ratio {f['rss_main_ratio']:.3f}"),
        (f"RSS 2 worker processes, after {early} / {late} games",
         f"{f['rss_workers_early_mb']:.1f} / {f['rss_workers_late_mb']:.1f} MiB", f"ratio {f['rss_workers_ratio']:.3f}"),
        ("RSS referee side in all, late / early", f"{f['rss_total_ratio']:.3f}", "flat = close to 1"),
        ("failures (timeouts, crashes, ...), all runs", f"{f['failures']}", "expected 0"),
    ]
    w = max(len(r[0]) for r in rows)
    v = max(len(r[1]) for r in rows)
    head = f"basic, {f['bots']} bots (4 greedy, 2 random) at 2-seat tables, target {f['target']}, records off"
    return head + "\n" + "\n".join(f"{a:<{w}}  {b:>{v}}  {c}" for a, b, c in rows)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer games: memory after 200 vs 1,000 games")
    ns = ap.parse_args()
    print(report(main(ns.quick)))
