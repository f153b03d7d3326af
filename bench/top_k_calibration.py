"""Is the Top K% column calibrated?  Simulated leagues of known strengths (README, Leagues).

Fields of ``--bots`` bots (bench/league_sim.py: log-strengths N(0, spread), a table plays a duplicate
deal-set whose games share the seats' luck) are played by a uniform round robin (the balanced subset
of tables ``max_tables`` plays) and by the adaptive ``top = K`` league (its schedule depends on the
results so far: where a posterior's calibration can fail), and stopped at several budgets.  At each
stop every bot's printed chance of being in the top K is computed by the code that prints the
column (``standings_stats.top_chances`` of the league fit of all the games), and paired with the truth
(is it in the true top K?).

Reported: a reliability table (bins of the printed chance: how many bots, their mean printed chance,
the share truly in the top K with a 95% Wilson interval), the Brier score (against that of always
printing K/n), Spiegelhalter's z (about N(0, 1) when the chances are calibrated; positive when they are
too bold), and the figure README quotes: of the bots printed at 80-95%, the share truly in the
top K.

    python -m bench.top_k_calibration [--quick] [--fields 60] [--spreads 300,600,1000] [--budgets 400,1000,2500]
                                      [--formats subset,top] [--deal-sd 1] [--json FILE]

``--quick`` (4 fields, 600 Elo) takes about 3 s of CPU, the full run about 2 minutes (115 s for README's).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # a 100 x 100 solve on many threads is slower on a shared machine

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from arena.tournament import ratings  # noqa: E402
from arena.tournament.designs import balanced_subset  # noqa: E402
from arena.tournament.matchmaking import league_round  # noqa: E402
from arena.tournament.standings_stats import top_chances  # noqa: E402
from bench.league_sim import Field  # noqa: E402

BINS = (0.0, 0.01, 0.05, 0.2, 0.4, 0.6, 0.8, 0.95, 0.99, 1.0)
DEAL_SD = 1.0  # as bench/league.py


def snapshot(f: Field, top: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(printed chance, truly in the top ``top``) for every bot of ``f`` after its games so far."""
    strength, cov = f.fit()
    chance = top_chances(strength, cov, top, seed)
    truly = np.zeros(f.n, dtype=bool)
    truly[np.argsort(-f.truth, kind="stable")[:top]] = True
    return chance, truly


def play(fmt: str, n: int, k: int, sd: float, seed: int, budgets: list[int], top: int,
         deal_sd: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """One field played by ``fmt`` (``subset`` or ``top``), a snapshot at every budget."""
    out = []
    if fmt == "subset":
        for games in budgets:
            f = Field.make(n, k, sd, seed, deal_sd, f"calibration-subset{games}")
            for table in balanced_subset(n, k, games // k, seed):
                f.play(table)
            out.append(snapshot(f, top, seed))
        return out
    f = Field.make(n, k, sd, seed, deal_sd, f"calibration-{fmt}")
    byes, idle, r = [0] * n, [0] * n, 0
    for games in budgets:
        while f.games < games:
            fit = f.round_fit() if r else None
            tables = league_round("adaptive", n, k, seed, r, fit, f.tables, byes,
                                  top=top if fmt == "top" else None, idle=idle)
            seated = {b for t in tables for b in t}
            for b in range(n):
                byes[b] += b not in seated
                idle[b] = 0 if b in seated else idle[b] + 1
            for table in tables:
                f.play(table)
            r += 1
        out.append(snapshot(f, top, seed))
    return out


def wilson(hits: int, count: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial share (95% by default)."""
    if count == 0:
        return (0.0, 1.0)
    p = hits / count
    centre = (p + z * z / (2 * count)) / (1 + z * z / count)
    half = z * math.sqrt(p * (1 - p) / count + z * z / (4 * count * count)) / (1 + z * z / count)
    return (max(0.0, centre - half), min(1.0, centre + half))


def spiegelhalter(chance: np.ndarray, truly: np.ndarray) -> float:
    """Spiegelhalter's z of calibration: about N(0, 1) if the printed chances are the true ones; large and
    positive when they are too bold (too near 0 and 1), negative when too timid."""
    var = float(((1 - 2 * chance) ** 2 * chance * (1 - chance)).sum())
    return float(((truly - chance) ** 2 - chance * (1 - chance)).sum() / np.sqrt(var)) if var > 0 else 0.0


def reliability(chance: np.ndarray, truly: np.ndarray) -> list[dict]:
    """Per bin of the printed chance: count, mean printed, observed share and its interval."""
    rows = []
    for lo, hi in itertools.pairwise(BINS):
        inside = (chance >= lo) & ((chance < hi) if hi < 1.0 else (chance <= hi))
        count = int(inside.sum())
        hits = int(truly[inside].sum())
        rows.append({"bin": [lo, hi], "count": count, "printed": float(chance[inside].mean()) if count else None,
                     "observed": hits / count if count else None, "interval": wilson(hits, count)})
    return rows


def summary(chance: np.ndarray, truly: np.ndarray, top: int, n: int) -> dict:
    band = (chance >= 0.8) & (chance < 0.95)
    low = (chance >= 0.05) & (chance < 0.2)
    return {"pairs": len(chance), "brier": float(np.mean((chance - truly) ** 2)),
            "z": spiegelhalter(chance, truly),
            "brier_base": float(np.mean((top / n - truly) ** 2)),
            "band_80_95": {"count": int(band.sum()), "printed": float(chance[band].mean()) if band.any() else None,
                           "observed": float(truly[band].mean()) if band.any() else None,
                           "interval": wilson(int(truly[band].sum()), int(band.sum()))},
            "band_5_20": {"count": int(low.sum()), "printed": float(chance[low].mean()) if low.any() else None,
                          "observed": float(truly[low].mean()) if low.any() else None,
                          "interval": wilson(int(truly[low].sum()), int(low.sum()))},
            "reliability": reliability(chance, truly)}


def print_summary(title: str, s: dict) -> None:
    print(f"\n{title}: {s['pairs']} (bot, league) pairs; Brier {s['brier']:.4f} (always K/n: {s['brier_base']:.4f}), "
          f"Spiegelhalter z {s['z']:+.2f}")
    print(f"{'printed':>12} {'bots':>6} {'mean printed':>13} {'in top K':>9}  95% interval")
    for row in s["reliability"]:
        lo, hi = row["bin"]
        if not row["count"]:
            print(f"{100 * lo:5.0f}-{100 * hi:<4.0f}% {0:>6}")
            continue
        a, b = row["interval"]
        print(f"{100 * lo:5.0f}-{100 * hi:<4.0f}% {row['count']:>6} {100 * row['printed']:12.1f}% "
              f"{100 * row['observed']:8.1f}%  [{100 * a:.1f}, {100 * b:.1f}]")
    for name, label in (("band_80_95", "80-95%"), ("band_5_20", "5-20%")):
        band = s[name]
        if band["count"]:
            a, b = band["interval"]
            print(f"of {band['count']} bots printed at {label} (mean {100 * band['printed']:.1f}%), "
                  f"{100 * band['observed']:.1f}% [{100 * a:.1f}, {100 * b:.1f}] were truly in the top K")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fields", type=int, default=60, help="fields per spread (seeds 0..fields-1)")
    ap.add_argument("--spreads", default="300,600,1000", help="sd of the true strengths, in Elo")
    ap.add_argument("--budgets", default="400,1000,2500", help="games at which every league is looked at")
    ap.add_argument("--formats", default="subset,top")
    ap.add_argument("--bots", type=int, default=100)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--deal-sd", type=float, default=DEAL_SD)
    ap.add_argument("--quick", action="store_true", help="4 fields at 600 Elo")
    ap.add_argument("--json", type=Path, help="write every summary here")
    args = ap.parse_args()
    if args.quick:
        args.fields, args.spreads = 4, "600"
    started = time.process_time()
    budgets = [int(b) for b in args.budgets.split(",")]
    formats = args.formats.split(",")
    pooled: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    report: dict[str, dict] = {}
    for spread in (float(s) for s in args.spreads.split(",")):
        sd = spread / ratings.ELO_SCALE
        for fmt in formats:
            snaps = [s for seed in range(args.fields)
                     for s in play(fmt, args.bots, args.seats, sd, seed, budgets, args.top, args.deal_sd)]
            pooled.setdefault(fmt, []).extend(snaps)
            chance = np.concatenate([c for c, _ in snaps])
            truly = np.concatenate([t for _, t in snaps])
            key = f"{fmt} {spread:g} Elo"
            report[key] = summary(chance, truly, args.top, args.bots)
            print_summary(f"{key}, {args.fields} fields x budgets {budgets}", report[key])
    everything = [s for snaps in pooled.values() for s in snaps]
    for key, snaps in [*pooled.items(), ("all", everything)]:
        chance = np.concatenate([c for c, _ in snaps])
        truly = np.concatenate([t for _, t in snaps])
        report[f"{key} pooled"] = summary(chance, truly, args.top, args.bots)
        print_summary(f"{key}, every spread and budget", report[f"{key} pooled"])
    print(f"\n{time.process_time() - started:.0f} s of CPU")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
