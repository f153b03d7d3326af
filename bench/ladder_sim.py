"""How many games a new ladder version needs to be placed: the ladder's pairing and ratings on known truth.

    python3 -m bench.ladder_sim [--runs 3] [--batches 160]

No process: each run is a ladder of 2-seat tables whose games are drawn from a Bradley-Terry model of
known Elo (20 entrants at the start, true Elo evenly spread over 1200..1800; then a new version every
4 batches, 10 in all, at a random true Elo in the same range, retiring its entrant's old one), batches chosen by
``arena.ladder.pairing.choose`` with the default settings (8 tables a batch, new_games 30,
settled_share 0.5), each table a deal-set of two games, ratings by ``ratings.rate`` over every game
as ``arena ladder`` computes them after each batch.  For each new version it reports the games it
had played when its rating came, and stayed, within +-100 Elo of (a) its rating at the end of the
run and (b) its true Elo (shifted by the mean over the rated versions, as the ratings are centred).
Duplicate games in a real deal-set are correlated (the same cards), which this model leaves out; the
real 30-entrant run (bench/ladder_run.py) is too short on this machine to measure it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from typing import Any

from arena.ladder import pairing
from arena.tournament.journal import JournalEntry
from arena.tournament.ratings import rate


def placed_after(points: list[tuple[int, float]], target: float, within: float = 100.0) -> int | None:
    at = None
    for g, r in points:
        if abs(r - target) <= within:
            at = at if at is not None else g
        else:
            at = None
    return at


def one_run(seed: int, batches: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    truth = {f"e{i:02d}.v1": 1200 + 600 * i / 19 for i in range(20)}
    active = sorted(truth)
    entries: list[JournalEntry] = []
    history: dict[str, list[tuple[int, float]]] = {}
    shifted: dict[str, list[tuple[int, float]]] = {}
    new: list[str] = []
    index = table = 0
    for b in range(batches):
        if b >= 8 and b % 4 == 0 and len(new) < 10:
            old = rng.choice([x for x in active if x not in new])
            name, v = old.split(".v")
            bot = f"{name}.v{int(v) + 1}"
            truth[bot] = rng.uniform(1200, 1800)
            active = sorted([x for x in active if x != old] + [bot])
            new.append(bot)
        counts = {k: r.games for k, r in rate(entries).items()} if entries else {}
        for t in pairing.choose(active, counts, entries, 2, 8, 30, 0.5, seed * 100_000 + b):
            p = 1 / (1 + 10 ** ((truth[t[1]] - truth[t[0]]) / 400))
            for seating in range(2):
                win = rng.random() < p
                seats = list(t) if seating == 0 else [t[1], t[0]]
                first = t[0] if win else t[1]
                entries.append(JournalEntry(index=index, game_id=f"g{index}", table=table, set=0, seating=seating,
                                            seats=seats, placings=[1 if s == first else 2 for s in seats],
                                            totals=[0, 0]))
                index += 1
            table += 1
        ratings = rate(entries)
        rated = [k for k in ratings if ratings[k].bound is None]
        mean_truth = statistics.fmean(truth[k] for k in rated) if rated else 1500.0
        for bot in new:
            if bot in ratings:
                r = ratings[bot]
                history.setdefault(bot, []).append((r.games, r.rating))
                shifted.setdefault(bot, []).append((r.games, truth[bot] - mean_truth + 1500.0))
    final = rate(entries)
    out: list[dict[str, Any]] = []
    for bot in new:
        points = history.get(bot, [])
        true_target = shifted[bot][-1][1] if bot in shifted else math.nan
        out.append({"bot": bot, "games": final[bot].games if bot in final else 0,
                    "final": round(final[bot].rating, 1) if bot in final else None,
                    "true": round(true_target, 1),
                    "placed_vs_final": placed_after(points, final[bot].rating) if bot in final else None,
                    "placed_vs_truth": placed_after(points, true_target)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--batches", type=int, default=160)
    a = ap.parse_args()
    rows = [row for seed in range(1, a.runs + 1) for row in one_run(seed, a.batches)]

    def summary(key: str) -> dict[str, Any]:
        got = [int(r[key]) for r in rows if r[key] is not None]
        return {"versions": len(rows), "placed": len(got),
                "median_games": statistics.median(got) if got else None,
                "p90_games": sorted(got)[int(0.9 * (len(got) - 1))] if got else None}

    print(json.dumps({"vs_final": summary("placed_vs_final"), "vs_truth": summary("placed_vs_truth"),
                      "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
