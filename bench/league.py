"""How fast each format finds the ranking of a large field: a simulation in seconds (README, Leagues).

A field of synthetic bots of known strengths (log-strengths drawn from N(0, sd), sd given in Elo);
a table's placings are drawn from the Plackett-Luce model (strength plus Gumbel noise, sorted),
each table playing its seatings (4 games at 4 seats, ``rotate``).  After G games every format
is fitted the same way, by the league fit (``ratings.league_fit``), so the figures compare
schedules, not fits; the figure is Kendall's tau between the true order and the fitted one.
Formats: the seeded balanced subset of all tables (what ``max_tables`` gives a round robin),
Swiss rounds and adaptive rounds (``arena.tournament.matchmaking``), the last two re-fitted after
every round of n/k tables, as the runner does (warm-started here, to keep the bench short).

The information ratio: no schedule can beat the information a game carries.  A game tells the most about a
bot when its three rivals are as strong as it is (``best_information``); a table of the uniform
subset is four bots from anywhere in the field (``subset_information``, averaged over the field).
Their ratio is about the most games any schedule can save at a given spread (an estimate: it
ignores what rounds spend before they know the field), and it is printed beside the figures.

Fields and draws are seeded: the same command prints the same table.

    python -m bench.league [--bots 100] [--seats 4] [--games 1000,2000,2667,4000,8000]
                           [--spreads 300,600,1000] [--repeats 4] [--json FILE] [--html FILE]

``--html`` draws the curves with the HTML report's chart (``arena.report.charts``), tau x 100.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

from arena.tournament import ratings
from arena.tournament.journal import JournalEntry
from arena.tournament.matchmaking import league_round
from arena.tournament.schedule import balanced_subset

GAMES_PER_TABLE = 4
FORMATS = ("subset", "swiss", "adaptive")


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors (O(n^2): fine for a few hundred bots)."""
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    iu = np.triu_indices(len(a), 1)
    x, y = da[iu], db[iu]
    denom = np.sqrt(float(np.count_nonzero(x)) * float(np.count_nonzero(y)))
    return float((x * y).sum() / denom) if denom else 0.0


class League:
    """A simulated field: plays tables, keeps the journal entries, fits the standings."""

    def __init__(self, n: int, k: int, seed: int, spread: float) -> None:
        self.n, self.k = n, k
        self.rng = np.random.default_rng(seed)
        self.truth = self.rng.normal(0.0, spread, n)
        self.names = [f"bot{i:03d}" for i in range(n)]
        self.entries: list[JournalEntry] = []
        self.tables: list[tuple[int, ...]] = []
        self.strength = np.zeros(n)
        self.cov = np.eye(n)

    def play(self, table: tuple[int, ...]) -> None:
        t = len(self.tables)
        self.tables.append(table)
        idx = np.array(table)
        for g in range(GAMES_PER_TABLE):
            score = self.truth[idx] + self.rng.gumbel(size=len(idx))
            places = np.empty(len(idx), dtype=int)
            places[np.argsort(-score)] = np.arange(1, len(idx) + 1)
            i = len(self.entries)
            self.entries.append(JournalEntry(index=i, game_id=f"g{i}", deal_seed=0, table=t, set=0, seating=g,
                                             seats=[self.names[b] for b in table], placings=places.tolist(),
                                             totals=[0] * len(table)))

    def fit(self) -> None:
        if self.entries:
            self.strength, self.cov = ratings.league_fit(self.entries, self.names, start=self.strength)

    def tau(self) -> float:
        self.fit()
        return kendall_tau(self.strength, self.truth)


def run_format(fmt: str, n: int, k: int, budgets: list[int], seed: int, spread: float) -> list[float]:
    """Tau after each budget (games) for one format on one field."""
    taus: list[float] = []
    if fmt == "subset":
        for games in budgets:
            league = League(n, k, seed, spread)
            for table in balanced_subset(n, k, games // GAMES_PER_TABLE, seed):
                league.play(table)
            taus.append(league.tau())
        return taus
    league = League(n, k, seed, spread)
    byes = [0] * n
    r = 0
    for games in budgets:
        while len(league.entries) < games:
            league.fit()
            per_game = [t for t in league.tables for _ in range(GAMES_PER_TABLE)]
            tables = league_round(fmt, n, k, seed, r, (league.strength, league.cov) if r else None, per_game, byes)
            seated = {b for t in tables for b in t}
            for b in range(n):
                byes[b] += b not in seated
            for table in tables[:max(1, (games - len(league.entries)) // GAMES_PER_TABLE)]:
                league.play(table)
            r += 1
        taus.append(league.tau())
    return taus


def ranking_information(theta: np.ndarray) -> float:
    """Expected Fisher information about ``theta[0]`` from one Plackett-Luce ranking of these bots (exact)."""
    total = 0.0
    for perm in itertools.permutations(range(len(theta))):
        e = np.exp(theta[list(perm)])
        chance, info = 1.0, 0.0
        for i in range(len(theta) - 1):
            rest = e[i:].sum()
            chance *= e[i] / rest
            if 0 in perm[i:]:
                p = np.exp(theta[0]) / rest
                info += p * (1.0 - p)
        total += chance * info
    return total


def best_information(k: int) -> float:
    """A game's information about a bot whose ``k - 1`` rivals are exactly as strong (the most there is)."""
    return ranking_information(np.zeros(k))


def subset_information(k: int, spread: float, samples: int = 400, seed: int = 0) -> float:
    """A game's information about a bot of the field (log-strengths N(0, spread)) at a table drawn from it."""
    rng = np.random.default_rng(seed)
    return float(np.mean([ranking_information(rng.normal(0.0, spread, k)) for _ in range(samples)]))


def first_reaching(budgets: list[int], taus: np.ndarray, target: float) -> int | None:
    """The smallest budget whose tau is at least ``target``, linearly interpolated between budgets."""
    for i, (g, t) in enumerate(zip(budgets, taus)):
        if t >= target:
            if i == 0:
                return g
            g0, t0 = budgets[i - 1], taus[i - 1]
            return round(float(g0 + (g - g0) * (target - t0) / (t - t0)))
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, default=100)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--games", default="1000,2000,2667,4000,8000")
    ap.add_argument("--spreads", default="300,600,1000", help="sd of the true strengths, in Elo")
    ap.add_argument("--repeats", type=int, default=4, help="fields per spread (seeds 0..repeats-1)")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--html", type=Path, help="also draw the curves on a page in the report's style")
    args = ap.parse_args()
    budgets = sorted(int(g) for g in args.games.split(","))
    started = time.perf_counter()
    figures = []
    for spread in (float(s) for s in args.spreads.split(",")):
        res = {f: np.mean([run_format(f, args.bots, args.seats, budgets, seed, spread / ratings.ELO_SCALE)
                           for seed in range(args.repeats)], axis=0) for f in FORMATS}
        print(f"\nKendall tau vs the true order: {args.bots} bots, {args.seats}-seat tables, true strengths "
              f"sd {spread:g} Elo, mean of {args.repeats} fields")
        print(f"{'games':>8} " + " ".join(f"{f:>9}" for f in FORMATS))
        for i, g in enumerate(budgets):
            print(f"{g:>8} " + " ".join(f"{res[f][i]:>9.3f}" for f in FORMATS))
        target = float(res["subset"][-1])
        bound = best_information(args.seats) / subset_information(args.seats, spread / ratings.ELO_SCALE)
        print(f"  information ratio: a game of rivals as strong as the bot carries {bound:.2f}x a subset table's, "
              f"so a schedule saves at most about that: {1 / bound:.2f} of the subset's games (an estimate)")
        reach = {}
        for f in ("swiss", "adaptive"):
            need = first_reaching(budgets, res[f], target)
            reach[f] = need
            ratio = f"{need / budgets[-1]:.2f} of the games" if need else "not within these budgets"
            print(f"  {f} reaches the subset's tau at {budgets[-1]} games ({target:.3f}) with {need} games: {ratio}")
        figures.append({"spread_elo": spread, "budgets": budgets, "tau": {f: res[f].tolist() for f in FORMATS},
                        "reach": reach, "bound": 1 / bound})
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.json:
        args.json.write_text(json.dumps({"bots": args.bots, "seats": args.seats, "repeats": args.repeats,
                                         "figures": figures}, indent=1), encoding="utf-8")
    if args.html:
        args.html.write_text(html_page(figures, args.bots, args.seats, args.repeats), encoding="utf-8")


def html_page(figures: list[dict], bots: int, seats: int, repeats: int) -> str:
    """The curves, one chart per spread, drawn by the report's ``history_chart`` (tau x 100 against G)."""
    from html import escape

    from arena.report.charts import color, history_chart

    css = (Path(__file__).resolve().parent.parent / "arena" / "report" / "static" / "report.css").read_text()
    parts = [f"<!doctype html><meta charset=utf-8><title>League formats</title><style>{css}</style><main>",
             f"<h1>Kendall tau x 100 vs games: {bots} bots, {seats}-seat tables, mean of {repeats} fields</h1>",
             "<p>" + ", ".join(f'<span style="color:{color(i)}">{fmt}</span>' for i, fmt in enumerate(FORMATS))
             + "</p>"]
    for f in figures:
        series = {fmt: [100.0 * v for v in f["tau"][fmt]] for fmt in FORMATS}
        parts.append(f"<h2>true strengths sd {escape(str(f['spread_elo']))} Elo</h2>")
        parts.append(history_chart({"games": f["budgets"], "bots": series}))
    return "".join(parts) + "</main>\n"


if __name__ == "__main__":
    main()
