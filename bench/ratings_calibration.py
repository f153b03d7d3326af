"""Do the standings' numbers mean what they say? Interval coverage, LOS false alarms, the noise note (README, Standings).

Games are simulated as the arena plays them: a table of k bots plays each duplicate deal-set under every
seating (all k! permutations); the deal gives each seat position a luck ``u ~ N(0, deal_sd)`` and each bot
a fit ``v ~ N(0, match_sd)`` (some deals suit some bots), both shared by every seating of that deal-set, and
a game's placings sort strength + u + v + Gumbel noise (Plackett-Luce given the luck).  Duplicate play
cancels u, not v: v is what makes a deal-set's games dependent.  The numbers are those of ``arena.tournament.ratings`` and
``arena.tournament.standings``, computed on these journal entries.

- Coverage: how often a bot's 95% interval holds its true rating, per scenario (goal 95% ±2).  The truth
  is what the fit converges to with unlimited deal-sets of the same design: seat luck flattens the
  pairwise logistic a little, so that is ``E sigmoid(d + e)``, ``e ~ N(0, 2 (deal_sd^2 + match_sd^2))``, fitted exactly on
  the design's pair counts, centred over the bots the run rated (a bot shown as a bound is checked
  against its bound instead, and counted apart).
- LOS false alarms: two bots of equal strength; how often the pair's LOS says >= 95% (goal <= 5%), for
  the LOS of deal-set sums the standings show and, beside it, the old one from W and L as if games were
  independent.
- The noise note: two adjacent bots a real gap apart; how often the note still calls them within noise,
  and for equal bots how often it does not (its level, goal <= 5%).

Seeded: the same command prints the same table.

    python -m bench.ratings_calibration [--quick] [--reps N] [--json FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import time
from dataclasses import dataclass

import numpy as np

from arena.tournament import ratings, standings_stats
from arena.tournament.journal import JournalEntry


@dataclass(frozen=True)
class Design:
    name: str
    theta: tuple[float, ...]          # true log-strengths
    tables: tuple[tuple[int, ...], ...]
    deal_sets: int
    deal_sd: float = 0.5    # seat luck of a deal-set (duplicate seatings cancel it)
    match_sd: float = 0.3   # how much a deal-set suits each bot, in every seating (duplicate cannot cancel it)


def names(n: int) -> list[str]:
    return [f"b{i:02d}" for i in range(n)]


def simulate(d: Design, rng: np.random.Generator) -> list[JournalEntry]:
    """The journal entries of one run of design ``d``."""
    bots = names(len(d.theta))
    theta = np.asarray(d.theta)
    out: list[JournalEntry] = []
    index = 0
    for t, table in enumerate(d.tables):
        k = len(table)
        perms = list(itertools.permutations(table))
        for s in range(d.deal_sets):
            luck = rng.normal(0.0, d.deal_sd, k)
            suits = dict(zip(table, rng.normal(0.0, d.match_sd, k), strict=True))
            for seating, seats in enumerate(perms):
                perf = theta[list(seats)] + [suits[b] for b in seats] + luck + rng.gumbel(size=k)
                order = np.argsort(-perf)
                placings = [0] * k
                for place, seat in enumerate(order):
                    placings[seat] = place + 1
                out.append(JournalEntry(index=index, game_id=f"g{index}", deal_seed=t * 1000 + s, table=t, set=s,
                                        seating=seating, seats=[bots[i] for i in seats], placings=placings,
                                        totals=[10 * (k - p) for p in placings]))
                index += 1
    return out


def pseudo_truth(d: Design) -> np.ndarray:
    """Log-strengths the fit converges to on design ``d`` with unlimited deal-sets (mean 0)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)  # E f(Z), Z ~ N(0, 1)
    weights = weights / weights.sum()
    theta = np.asarray(d.theta)
    counts: dict[tuple[int, int], float] = {}
    for table in d.tables:
        per_pair = math.factorial(len(table)) * d.deal_sets
        for a, b in itertools.combinations(sorted(table), 2):
            counts[(a, b)] = counts.get((a, b), 0.0) + per_pair
    pairs = np.array(list(counts), dtype=np.int64)
    n = np.array(list(counts.values()))
    delta = theta[pairs[:, 0]] - theta[pairs[:, 1]]
    sd = math.sqrt(2.0 * (d.deal_sd ** 2 + d.match_sd ** 2))  # of the luck in a comparison of two bots
    q = (weights[None, :] / (1.0 + np.exp(-(delta[:, None] + sd * nodes[None, :])))).sum(axis=1)
    est, _ = ratings._newton(pairs[:, 0], pairs[:, 1], n, n * q, len(theta), 1e-12)
    return est - est.mean()


def round_robin(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    return tuple(itertools.combinations(range(n), k))


def scenarios(rng: np.random.Generator) -> list[Design]:
    elo = ratings.ELO_SCALE
    spread6 = tuple(x / elo for x in np.linspace(-200, 200, 6))
    # unbalanced: 8 bots at 3 seats, a random third of all tables, so bots play very different numbers of games
    all3 = round_robin(8, 3)
    pick = sorted(rng.choice(len(all3), size=len(all3) // 3, replace=False).tolist())
    unbalanced = tuple(all3[i] for i in pick)
    wide = tuple(x / elo for x in rng.normal(0.0, 250.0, 24))
    dominant = (700.0 / elo,) + tuple(x / elo for x in np.linspace(-100, 100, 5))
    return [
        Design("balanced: 6 bots, 2 seats, 10 sets", spread6, round_robin(6, 2), 10),
        Design("balanced: 6 bots, 4 seats, 4 sets", spread6, round_robin(6, 4), 4),
        Design("unbalanced: 8 bots, 3 seats, 1/3 of tables", tuple(x / elo for x in np.linspace(-250, 250, 8)),
               unbalanced, 6),
        Design("wide: 24 bots, 2 seats, 5 sets", wide, round_robin(24, 2), 5),
        Design("one dominant (+700): 6 bots, 2 seats", dominant, round_robin(6, 2), 10),
    ]


def coverage(d: Design, reps: int, seed: int) -> dict[str, float]:
    """Share of intervals that hold the truth; bounds that hold it; the strongest bot's own coverage."""
    rng = np.random.default_rng(seed)
    truth = pseudo_truth(d)
    bots = names(len(d.theta))
    top = int(np.argmax(d.theta))
    hits = total = bound_ok = bounds = top_hits = top_total = 0
    widths = []
    for _ in range(reps):
        r = ratings.rate(simulate(d, rng), bots)
        rated = [i for i, b in enumerate(bots) if r[b].bound is None]
        centre = truth[rated].mean()
        for i, b in enumerate(bots):
            x = r[b]
            true_elo = ratings.ELO_MEAN + ratings.ELO_SCALE * (truth[i] - centre)
            if x.bound is not None:
                bounds += 1
                bound_ok += (true_elo >= x.rating) if x.bound == ">" else (true_elo <= x.rating)
                continue
            if x.plus_minus is None or x.low is None or x.high is None:
                continue
            inside = x.low <= true_elo <= x.high
            hits += inside
            total += 1
            widths.append(x.high - x.low)
            if i == top:
                top_hits += inside
                top_total += 1
    return {"coverage": hits / max(total, 1), "intervals": total, "bounds": bounds,
            "bounds_hold": bound_ok / bounds if bounds else float("nan"),
            "top_coverage": top_hits / top_total if top_total else float("nan"),
            "mean_width": float(np.mean(widths)) if widths else float("nan")}


def pair_designs() -> list[Design]:
    """Two bots of equal strength, b00 and b01, under each seating design, with strong deal effects."""
    return [
        Design("2 seats: heads-up, 20 sets", (0.0, 0.0), ((0, 1),), 20, deal_sd=1.0, match_sd=0.7),
        Design("2 seats: heads-up, 5 sets", (0.0, 0.0), ((0, 1),), 5, deal_sd=1.0, match_sd=0.7),
        Design("3 seats: +1 other, 10 sets", (0.0, 0.0, 0.3), ((0, 1, 2),), 10, deal_sd=1.0, match_sd=0.7),
        Design("4 seats: +2 others, 10 sets", (0.0, 0.0, 0.5, -0.5), ((0, 1, 2, 3),), 10, deal_sd=1.0, match_sd=0.7),
        Design("4 seats: 6 bots round robin, 3 sets", (0.0, 0.0, 0.4, -0.4, 0.2, -0.2), round_robin(6, 4), 3,
               deal_sd=1.0, match_sd=0.7),
    ]


def set_sums(entries: list[JournalEntry], a: str, b: str) -> tuple[list[float], int, int]:
    """Per deal-set, a's wins minus losses against b; and a's wins and losses over all games."""
    sums: dict[tuple[int, int], float] = {}
    wins = losses = 0
    for e in entries:
        if a in e.seats and b in e.seats:
            pa, pb = e.placings[e.seats.index(a)], e.placings[e.seats.index(b)]
            x = (pa < pb) - (pa > pb)
            wins += x > 0
            losses += x < 0
            sums[(e.table, e.set)] = sums.get((e.table, e.set), 0.0) + x
    return list(sums.values()), wins, losses


def old_los(wins: int, losses: int) -> float | None:
    if wins + losses == 0:
        return None
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def los_alarms(d: Design, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    new = old = 0
    for _ in range(reps):
        entries = simulate(d, rng)
        sums, w, lo = set_sums(entries, "b00", "b01")
        new += (standings_stats.los(sums) or 0.0) >= 0.95
        old += (old_los(w, lo) or 0.0) >= 0.95
    return {"los_alarm": new / reps, "old_los_alarm": old / reps}


def noise_rates(gap_elo: float, deal_sets: int, reps: int, seed: int) -> dict[str, float]:
    """Heads-up pair b00, b01 ``gap_elo`` apart in a 4-bot 2-seat round robin: how often the note's test
    does not separate them (gap > 0: wrongly 'within noise'; gap 0: rightly)."""
    d = Design(f"gap {gap_elo:.0f}", (gap_elo / ratings.ELO_SCALE, 0.0, 0.6, -0.6), round_robin(4, 2), deal_sets)
    rng = np.random.default_rng(seed)
    noise = overlap = 0
    for _ in range(reps):
        f = ratings.rating_fit(simulate(d, rng), names(4))
        upper, lower = ("b00", "b01") if f.ratings["b00"].rating >= f.ratings["b01"].rating else ("b01", "b00")
        noise += standings_stats.within_noise(f, upper, lower)
        hi, lo = f.ratings[upper], f.ratings[lower]
        overlap += (lo.high or math.inf) >= (hi.low or -math.inf)  # the old rule: the 95% intervals overlap
    return {"noise_rate": noise / reps, "overlap_rate": overlap / reps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (about a minute)")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per row (default 400, --quick 100)")
    ap.add_argument("--json", help="write the figures to this file as well")
    args = ap.parse_args()
    reps = args.reps or (100 if args.quick else 400)
    started = time.process_time()
    out: dict[str, dict[str, float]] = {}
    print(f"Interval coverage (95% intervals, {reps} runs each; goal 95% ±2)")
    print(f"{'scenario':46} {'coverage':>9} {'intervals':>9} {'width':>7} {'top bot':>8} {'bounds':>7} {'hold':>6}")
    for i, d in enumerate(scenarios(np.random.default_rng(1))):
        c = coverage(d, reps, seed=100 + i)
        out[d.name] = c
        print(f"{d.name:46} {100 * c['coverage']:8.1f}% {c['intervals']:9.0f} {c['mean_width']:7.0f} "
              f"{100 * c['top_coverage']:7.1f}% {c['bounds']:7.0f} {100 * c['bounds_hold']:5.1f}%")
    print(f"\nLOS >= 95% for two equal bots, seat luck sd 1.0, bot fit sd 0.7 ({reps} runs each; goal <= 5%)")
    print(f"{'design':46} {'deal-set LOS':>13} {'old W/L LOS':>12}")
    for i, d in enumerate(pair_designs()):
        a = los_alarms(d, reps, seed=200 + i)
        out[d.name] = a
        print(f"{d.name:46} {100 * a['los_alarm']:12.1f}% {100 * a['old_los_alarm']:11.1f}%")
    print(f"\nThe noise note ({standings_stats.NOISE_TEST}), heads-up 4-bot round robin ({reps} runs each)")
    print(f"{'true gap of the pair':46} {'deal-sets':>9} {'called noise':>13} {'old: overlap':>13}")
    for gap, sets in ((0.0, 10), (69.0, 10), (69.0, 40), (150.0, 10)):
        n = noise_rates(gap, sets, reps, seed=300 + int(gap) + sets)
        out[f"noise gap {gap:.0f}, {sets} sets"] = n
        print(f"{f'{gap:.0f} Elo':46} {sets:9d} {100 * n['noise_rate']:12.1f}% {100 * n['overlap_rate']:12.1f}%")
    print(f"\n{time.process_time() - started:.0f} s CPU")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
