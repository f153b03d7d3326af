"""House bot strength, in process: each level against greedy on duplicate deals, the margin test's estimate.

Each deal seed is played twice, once with the house level in each seat and greedy in the
others (seats swapped, the same cards): the pair's difference is the house seat's deal
margin (its deal score minus the mean of the others', the way that wins) summed over the
two seatings, so the deal's luck cancels.  The estimate and its naive 95% interval are the
margin test's (``arena.tournament.sprt.margin_estimate``, what ``arena match`` reports),
by default per deal (the first deal of the game ``seed``); with ``--game`` per whole game, the
margin on the game's totals exactly as ``arena match`` scores a pair (every deal of a game
replays under any seating, so all of a game's deals are duplicated).  A game is several deals,
so a per-deal edge is a larger one per game.  The levels take turns deal by deal, so a stopped
run has measured all of them on the same deals, and each level is also compared with the one
listed before it: the seed-by-seed difference of their margins over the same greedy seats (the
order of the levels).  The house bot's CPU budget per decision binds exactly as in a bot (its
own ``time.process_time`` clock); ``--budget-cap`` halves it as ``arena match --time-ms 2*CAP``
would.  Much cheaper than ``arena match`` (no processes, one deal, not a
game), so it can reach an interval narrow enough to rank the levels on this machine.

Pairs run ``--jobs`` at a time in worker processes (each decision's budget is its own process's
CPU time, so a loaded machine slows the run, not the bot); a pair still running when ``--minutes``
have passed is finished, and only the seeds every level finished are counted.

Usage: ``python bench/house_strength.py [--variant basic] [--seats 2] [--pairs 40] [--minutes 20]
[--levels easy,medium,hard] [--budget-cap S] [--jobs N] [--first-seed K] [--game] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from itertools import pairwise
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.house import HousePolicy
from arena.policies import GreedyPolicy, Policy
from arena.rules.game import Game, Phase
from arena.rules.options import resolve
from arena.tournament.sprt import margin_estimate


def seat_margin(variant: str, seats: int, seed: int, level: str, house_seat: int, cap_s: float,
                game: bool = False) -> float:
    """One deal (or with ``game``, the whole game) with the house level at ``house_seat`` and greedy
    elsewhere: the house seat's margin, its score minus the mean of the others' (totals for a game)."""
    rules = resolve(variant, None)
    house = HousePolicy(rules, seed, level)
    house.cap_s = cap_s
    greedy = GreedyPolicy(rules)
    policies: list[Policy] = [house if s == house_seat else greedy for s in range(seats)]
    g = Game(rules, seats, seed)
    while not g.over and (game or g.deal_no == 1):
        p, o = policies[g.current], g.observation(g.current)
        if g.phase is Phase.DRAW:
            g.draw(p.draw(o))
        else:
            g.play(p.play(o))
    scores = g.totals if game else g.deal_scores[0]
    others = [scores[s] for s in range(seats) if s != house_seat]
    m = scores[house_seat] - sum(others) / len(others)
    return -m if rules.scoring == "penalty" else float(m)


def pair(variant: str, seats: int, seed: int, level: str, cap_s: float, game: bool = False) -> tuple[float, float]:
    """One duplicate pair (the house level in each seat in turn, on deal or game ``seed``): its margin and CPU seconds."""
    t = time.process_time()
    d = sum(seat_margin(variant, seats, seed, level, s, cap_s, game) for s in range(seats))
    return d, time.process_time() - t


def run(variant: str, seats: int, pairs: int, minutes: float, levels: list[str], cap_s: float,
        quiet: bool = False, jobs: int = 1, first: int = 0, game: bool = False) -> dict[str, Any]:
    diffs: dict[str, list[float]] = {lv: [] for lv in levels}
    cpu: dict[str, float] = dict.fromkeys(levels, 0.0)
    stop = time.monotonic() + 60 * minutes
    # pairs in seed order, the levels of a seed together, so a stopped run has them on the same deals
    tasks = [(seed, lv) for seed in range(first, first + pairs) for lv in levels]
    with ProcessPoolExecutor(jobs) as pool:
        running: dict[Future[tuple[float, float]], tuple[int, str]] = {}
        done: dict[tuple[int, str], tuple[float, float]] = {}
        while tasks or running:
            while tasks and len(running) < jobs and time.monotonic() < stop:
                seed, lv = tasks.pop(0)
                running[pool.submit(pair, variant, seats, seed, lv, cap_s, game)] = (seed, lv)
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in finished:
                key = running.pop(f)
                done[key] = f.result()
                if not quiet:
                    print(f"pair {key[0]} {key[1]}: {done[key][0]:+.0f} ({done[key][1]:.1f} CPU s)", flush=True)
    for seed in range(first, first + pairs):  # only seeds every level finished
        if all((seed, lv) in done for lv in levels):
            for lv in levels:
                d, c = done[seed, lv]
                diffs[lv].append(d)
                cpu[lv] += c
    out: dict[str, Any] = {"variant": variant, "seats": seats, "cap_s": cap_s, "unit": "game" if game else "deal",
                           "levels": {}}
    for lv in levels:
        e = margin_estimate(diffs[lv])
        out["levels"][lv] = {"pairs": e.pairs, "nelo": e.nelo, "low": e.low, "high": e.high,
                             "mean_diff": e.mean_diff, "cpu_s_per_pair": cpu[lv] / max(e.pairs, 1)}
    # each level against the one before it in ``levels``: the difference of their margins over the same
    # greedy seats on the same deals, seed by seed (the luck of the deal and of greedy's play cancels)
    out["order"] = []
    for lower, upper in pairwise(levels):
        e = margin_estimate([u - lo for u, lo in zip(diffs[upper], diffs[lower])])
        out["order"].append({"lower": lower, "upper": upper, "pairs": e.pairs, "nelo": e.nelo, "low": e.low,
                             "high": e.high, "mean_diff": e.mean_diff})
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="basic")
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=40, help="duplicate deal pairs at most (the bound)")
    ap.add_argument("--minutes", type=float, default=20.0, help="start no pair after this many minutes")
    ap.add_argument("--levels", default="easy,medium,hard")
    ap.add_argument("--budget-cap", type=float, default=float("inf"), help="CPU seconds a decision may take at most")
    ap.add_argument("--jobs", type=int, default=1, help="pairs played at once (processes)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--game", action="store_true",
                    help="whole games (the margin on totals, as arena match's margin test), not first deals")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.variant, a.seats, a.pairs, a.minutes, a.levels.split(","), a.budget_cap, quiet=a.json,
              jobs=a.jobs, first=a.first_seed, game=a.game)
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for lv, r in res["levels"].items():
            iv = f"{r['low']:+.0f} to {r['high']:+.0f}" if r["low"] is not None else "n/a"
            print(f"house-{lv} vs greedy, {a.variant} {a.seats} seats: {r['nelo']:+.0f} nElo per {res['unit']} "
                  f"(95% {iv}, {r['pairs']} pairs, mean margin {r['mean_diff']:+.1f}, "
                  f"{r['cpu_s_per_pair']:.1f} CPU s a pair)")
        for r in res["order"]:
            iv = f"{r['low']:+.0f} to {r['high']:+.0f}" if r["low"] is not None else "n/a"
            print(f"house-{r['upper']} over house-{r['lower']} (margins over greedy, same deals): {r['nelo']:+.0f} nElo "
                  f"per {res['unit']} (95% {iv}, {r['pairs']} pairs, mean {r['mean_diff']:+.1f} points)")
