"""What each league format costs, as a multiple of the best possible schedule (README, Leagues).

For every spread of true strengths, ``--fields`` fields of ``--bots`` bots (the same fields for every
format: paired) are played by every format up to 8,000 games (bench/league_sim.py: a table plays a
duplicate deal-set, its games correlated by the seats' shared luck; every format fitted by the league
fit).  Two errors are measured at every budget G: ``1 - tau`` (Kendall's tau against the true order)
and the number of the true top K missing from the fitted top K.

The games a format needs to reach a target are read off its error curve, fitted over all budgets
as a power law (``log err = a + b log G``: 1 - tau falls about as G^-1/2), not interpolated between
two budgets; the target is the uniform subset's fitted error at 8,000 games.  Each figure's 90%
interval comes from a bootstrap over the fields (the same resample for every format).  Every cost is
also given as a multiple of the oracle's (bench/league_oracle.py: the design that knows the true
strengths, played the same way).

The information ratio printed beside them (what a game among equals tells against a subset table)
is a rule of thumb for the most a schedule can save, not a limit: the oracle is the yardstick.

    python -m bench.league [--quick] [--fields 20] [--spreads 300,600,1000] [--bots 100] [--top 10]
                           [--jobs 2] [--json FILE] [--html FILE]

``--quick`` (4 fields, 600 Elo) takes about 45 s of CPU; the full run's time is printed at the end.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # a 100 x 100 solve on many threads is 10x slower on a shared machine

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from arena.tournament import ratings  # noqa: E402
from bench import league_oracle, league_sim  # noqa: E402
from bench.league_sim import kendall_tau  # noqa: E402,F401  (the tests' import)

FORMATS = ("subset", "swiss", "adaptive", "uneven", "top", "oracle-tau", "oracle-top")
BUDGETS = (200, 300, 400, 600, 800, 1100, 1600, 2300, 3200, 4500, 6400, 8000)
DESIGN_GAMES = {"tau": 3000.0, "top": 1000.0}  # the G each oracle design is optimised for (about its need)
PAPER_FIELDS = 5  # fields whose oracle need in the normal approximation is averaged (about 5 s each)
DEAL_SD = 1.0  # sd of a seat's luck in a deal-set, beside the Gumbel noise of a game (sd 1.28)


def ranking_information(theta: np.ndarray) -> float:
    """Expected Fisher information about ``theta[0]`` from one Plackett-Luce ranking of these bots (exact)."""
    return float(league_oracle.table_information(np.asarray(theta, dtype=float)[None, :])[0, 0, 0])


def subset_information(k: int, spread: float, samples: int = 400, seed: int = 0) -> float:
    """A game's information about a bot of the field (log-strengths N(0, spread)) at a table drawn from it."""
    rng = np.random.default_rng(seed)
    return float(np.mean(league_oracle.table_information(rng.normal(0.0, spread, (samples, k)))[:, 0, 0]))


def fit_curve(budgets: np.ndarray, err: np.ndarray, target: float | None = None,
              points: int = 4) -> tuple[float, float] | None:
    """(a, b) of ``log err = a + b log G`` by least squares, over the ``points`` budgets whose (positive)
    error is closest to ``target`` (all of them without one)."""
    keep = np.flatnonzero(err > 0)
    if target is not None and len(keep) > points:
        keep = keep[np.argsort(np.abs(np.log(err[keep]) - np.log(target)), kind="stable")[:points]]
    if len(keep) < 2:
        return None
    b, a = np.polyfit(np.log(budgets[keep]), np.log(err[keep]), 1)
    return float(a), float(b)


def games_to(curve: tuple[float, float] | None, target: float) -> float:
    """The G at which a fitted curve reaches ``target`` (inf if it never falls)."""
    if curve is None or curve[1] > -1e-6 or target <= 0:
        return float("inf")
    a, b = curve
    log_g = (np.log(target) - a) / b
    return float(np.exp(log_g)) if log_g < 30 else float("inf")


def reach(budgets: np.ndarray, err: dict[str, np.ndarray], fields: np.ndarray) -> dict[str, float]:
    """Games each format needs to reach the subset's fitted error at the largest budget, on ``fields``."""
    mean = {f: e[fields].mean(axis=0) for f, e in err.items()}
    last = float(np.log(budgets[-1]))
    sub = fit_curve(budgets, mean["subset"], float(mean["subset"][-1]) or None)
    if sub is None:
        return {f: float("nan") for f in err}
    target = float(np.exp(sub[0] + sub[1] * last))
    return {f: games_to(fit_curve(budgets, m, target), target) for f, m in mean.items()}


def describe(budgets: list[int], err: dict[str, np.ndarray], oracle: str, boots: int,
             seed: int) -> dict[str, dict[str, float]]:
    """Per format: games to the subset's target, as a share of the largest budget and as a multiple of
    ``oracle``'s, each with its 90% interval from a bootstrap over the fields (paired across formats)."""
    g = np.array(budgets, dtype=float)
    fields = len(next(iter(err.values())))
    rng = np.random.default_rng(seed)
    point = reach(g, err, np.arange(fields))
    samples = [reach(g, err, rng.integers(0, fields, fields)) for _ in range(boots)]
    out = {}
    for f in err:
        share = np.array([s[f] for s in samples]) / budgets[-1]
        vs = np.array([s[f] / s.get(oracle, np.nan) for s in samples])  # nan: the oracle was not played
        out[f] = {"games": point[f], "share": point[f] / budgets[-1], "vs_oracle": point[f] / point.get(oracle, np.nan),
                  "share_lo": _pct(share, 5), "share_hi": _pct(share, 95),
                  "vs_lo": _pct(vs, 5), "vs_hi": _pct(vs, 95)}
    return out


def analytic_oracle(n: int, k: int, sd: float, seed: int, top: int, last: int) -> dict[str, float]:
    """The oracle's need as a share of the subset's ``last`` games in the normal approximation alone (the
    expected misordered pairs of ``league_oracle``, no games played): the issue's yardstick."""
    from scipy.optimize import brentq

    from arena.tournament.designs import balanced_subset

    truth = league_sim.Field.make(n, k, sd, seed, DEAL_SD, "analytic").truth
    subset = np.array(balanced_subset(n, k, last // k, seed))
    even = np.full(len(subset), 1.0 / len(subset))
    out = {}
    for objective in ("tau", "top"):
        cand, w = league_oracle.design(truth, k, objective, top, DESIGN_GAMES[objective])
        target = league_oracle.expected_error(truth, subset, even, last, objective, top)
        def gap(g: float, cand: np.ndarray = cand, w: np.ndarray = w, objective: str = objective,
                target: float = target) -> float:
            return league_oracle.expected_error(truth, cand, w, g, objective, top) - target

        need = brentq(gap, 10.0, 4.0 * last)
        out[objective] = float(need) / last
    return out


def _task(args: tuple[str, int, int, float, int, list[int], int, float]) -> tuple[list[float], list[float]]:
    fmt, n, k, sd, seed, budgets, top, deal_sd = args
    designs = cand = None
    if fmt.startswith("oracle"):
        truth = league_sim.Field.make(n, k, sd, seed, deal_sd, fmt).truth
        objective = fmt.split("-")[1]
        cand, w = league_oracle.design(truth, k, objective, top, DESIGN_GAMES[objective])
        designs = {fmt: w}
    return league_sim.play_format(fmt, n, k, sd, seed, budgets, top, deal_sd, designs, cand)


def measure(n: int, k: int, spread_elo: float, fields: int, budgets: list[int], top: int, deal_sd: float,
            jobs: int, formats: tuple[str, ...] = FORMATS) -> dict[str, dict[str, np.ndarray]]:
    """err[kind][fmt]: fields x budgets arrays, kind ``tau`` (1 - tau) or ``top`` (true top K missing)."""
    sd = spread_elo / ratings.ELO_SCALE
    tasks = [(f, n, k, sd, seed, budgets, top, deal_sd) for f in formats for seed in range(fields)]
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_task, tasks, chunksize=1)
    else:
        results = [_task(t) for t in tasks]
    out: dict[str, dict[str, np.ndarray]] = {"tau": {}, "top": {}}
    for i, f in enumerate(formats):
        rows = results[i * fields:(i + 1) * fields]
        out["tau"][f] = np.array([r[0] for r in rows])
        out["top"][f] = np.array([r[1] for r in rows], dtype=float)
    return out


def _listed(x: np.ndarray) -> list[float | None]:
    """Means per budget, None where a league had stopped (json and the chart skip them)."""
    return [None if np.isnan(v) else float(v) for v in x]


def _pct(x: np.ndarray, q: float) -> float:
    """A percentile that keeps inf (a resample whose curve never reaches the target) as inf."""
    x = np.where(np.isnan(x), np.inf, x)
    return float(np.percentile(x, q, method="nearest"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, default=100)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--top", type=int, default=10, help="K of the top-K error and of the top format")
    ap.add_argument("--spreads", default="300,600,1000", help="sd of the true strengths, in Elo")
    ap.add_argument("--fields", type=int, default=20, help="paired fields per spread (seeds 0..fields-1)")
    ap.add_argument("--deal-sd", type=float, default=DEAL_SD, help="sd of a seat's luck in a deal-set")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2, help="processes")
    ap.add_argument("--quick", action="store_true", help="4 fields at 600 Elo: about 45 s of CPU")
    ap.add_argument("--json", type=Path, help="also write the figures to this file")
    ap.add_argument("--html", type=Path, help="also draw the curves on a page in the report's style")
    ap.add_argument("--raw", type=Path, help="keep every field's errors in FILE-SPREAD.npz (read them if there)")
    ap.add_argument("--formats", default=",".join(FORMATS),
                    help="formats to play, subset among them")
    args = ap.parse_args()
    formats = tuple(args.formats.split(","))
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown or "subset" not in formats:
        ap.error(f"--formats: {', '.join(unknown) or 'subset (the target) is needed'}")
    if args.quick:
        args.fields, args.spreads = 4, "600"
    budgets = list(BUDGETS)
    started = time.perf_counter()
    figures = []
    for spread in (float(s) for s in args.spreads.split(",")):
        raw = args.raw.with_name(f"{args.raw.stem}-{spread:g}.npz") if args.raw else None
        if raw is not None and raw.exists():  # the games of an earlier run: only the analysis again
            with np.load(raw) as z:
                err: dict[str, dict[str, np.ndarray]] = {kind: {f: z[f"{kind}/{f}"] for f in formats}
                                                         for kind in ("tau", "top")}
        else:
            err = measure(args.bots, args.seats, spread, args.fields, budgets, args.top, args.deal_sd, args.jobs,
                          formats)
            if raw is not None:
                arrays = {f"{kind}/{f}": err[kind][f] for kind in err for f in err[kind]}
                np.savez(raw, **arrays)  # type: ignore[arg-type]  # the stub reads a keyword as allow_pickle
        print(f"\n{args.bots} bots, {args.seats}-seat tables, true strengths sd {spread:g} Elo, "
              f"{args.fields} paired fields, deal-sets with seat luck sd {args.deal_sd:g}")
        fig: dict = {"spread_elo": spread, "budgets": budgets}
        sd = spread / ratings.ELO_SCALE
        seeds = range(min(PAPER_FIELDS, args.fields))
        paper = {kind: float(np.mean([analytic_oracle(args.bots, args.seats, sd, seed, args.top, budgets[-1])[kind]
                                      for seed in seeds])) for kind in ("tau", "top")}
        for kind, title, oracle in (("tau", "1 - Kendall tau", "oracle-tau"),
                                    ("top", f"true top {args.top} missing from the named top {args.top}",
                                     "oracle-top")):
            print(f"  {title} (mean over fields)")
            print(f"  {'games':>7} " + " ".join(f"{f:>10}" for f in formats))
            for i, g in enumerate(budgets):
                print(f"  {g:>7} " + " ".join(f"{err[kind][f][:, i].mean():>10.4f}" for f in formats))
            fit = describe(budgets, err[kind], oracle, args.bootstrap, int(spread))
            print(f"  games to the subset's {budgets[-1]}-game {kind} error (fitted curves; 90% interval over fields):")
            for f in formats:
                r = fit[f]
                print(f"    {f:>10}: {r['games']:>6.0f} = {r['share']:.2f} of {budgets[-1]} "
                      f"[{r['share_lo']:.2f}, {r['share_hi']:.2f}], {r['vs_oracle']:.2f}x the oracle "
                      f"[{r['vs_lo']:.2f}, {r['vs_hi']:.2f}]")
            print(f"  the oracle in the normal approximation (no games played; mean of {len(seeds)} fields): "
                  f"{paper[kind]:.2f} of {budgets[-1]}; as a multiple of it: "
                  + ", ".join(f"{f} {fit[f]['share'] / paper[kind]:.2f}x" for f in formats))
            fig[kind] = {"error": {f: _listed(err[kind][f].mean(axis=0)) for f in formats}, "reach": fit,
                         "normal_approximation": paper[kind]}
        exact = {f: _listed(np.where(np.isnan(err["top"][f]), np.nan, err["top"][f] == 0).mean(axis=0))
                 for f in formats}
        fig["top_exact"] = exact
        ratio = league_oracle_ratio(args.seats, spread / ratings.ELO_SCALE)
        print(f"  rule of thumb: a game among equals carries {ratio:.2f}x a subset table's information "
              f"about a bot, so a schedule might save down to about {1 / ratio:.2f} of the games (not a limit)")
        fig["information_ratio"] = ratio
        figures.append(fig)
    took = time.perf_counter() - started
    print(f"({took:.0f} s, {args.jobs} processes)")
    if args.json:
        args.json.write_text(json.dumps({"bots": args.bots, "seats": args.seats, "fields": args.fields,
                                         "top": args.top, "deal_sd": args.deal_sd, "seconds": took,
                                         "figures": figures}, indent=1), encoding="utf-8")
    if args.html:
        args.html.write_text(html_page(figures, args.bots, args.seats, args.fields, args.top), encoding="utf-8")


def league_oracle_ratio(k: int, spread: float) -> float:
    return ranking_information(np.zeros(k)) / subset_information(k, spread)


def html_page(figures: list[dict], bots: int, seats: int, fields: int, top: int) -> str:
    """The error curves, per spread a chart of 1 - tau and one of the top-K error (x 100), by the report's
    ``history_chart``."""
    from html import escape

    from arena.report.charts import color, history_chart

    css = (Path(__file__).resolve().parent.parent / "arena" / "report" / "static" / "report.css").read_text()
    names = list(figures[0]["tau"]["error"]) if figures else []
    parts = [f"<!doctype html><meta charset=utf-8><title>League formats</title><style>{css}</style><main>",
             f"<h1>Error x 100 vs games: {bots} bots, {seats}-seat tables, mean of {fields} paired fields</h1>",
             "<p>" + ", ".join(f'<span style="color:{color(i)}">{escape(f)}</span>' for i, f in enumerate(names))
             + "</p>"]
    for f in figures:
        for kind, title in (("tau", "1 - Kendall tau"), ("top", f"true top {top} missing")):
            series = {fmt: [100.0 * v for v in vals] for fmt, vals in f[kind]["error"].items()}
            parts.append(f"<h2>{title}: true strengths sd {escape(str(f['spread_elo']))} Elo</h2>")
            parts.append(history_chart({"games": f["budgets"], "bots": series}))
    return "".join(parts) + "</main>\n"


if __name__ == "__main__":
    main()
