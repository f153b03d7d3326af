#!/usr/bin/env python3
"""The sequential tests of ``arena match`` by simulation with known truth, and on real bots.

Usage: python3 bench/ab_test.py [--quick] [--tests N] [--real] [--seed S]

Model (stated, not fitted): a k-seat game gives seat j the score
``deal_j + skill_j + noise_j``.  ``deal_j`` ~ N(0, DEAL_SD) is the seat's luck
in the deal, shared by the two games of a duplicate pair (A's game and B's twin:
same deal, same seat, same opponents); ``noise_j`` is the play's own
variation, heavy-tailed (Student t with 3 degrees of freedom, scale NOISE),
drawn afresh in each game.  Placings rank the scores; a bot's margin is its
score minus the mean of the others' (points: x POINTS).  Opponents have skill
0, B has 0 and A has ``s``, where ``s`` makes A's heads-up expected score on a
random deal equal to the logistic Elo difference asked for (``skill_of_elo``).
With DEAL_SD 6 against NOISE 1 most heads-up games are decided by the deal
(a duplicate pair usually splits 1-1), which is where placings carry little;
``--deal-sd 2.5`` is a table where play matters more and placings keep up.

For each table size and true difference (0, 5, 10, 20 Elo) it runs the same
simulated pairs through both tests of the "10-Elo question" (H0: 0, H1: 10
Elo): the pentanomial on placings at elo1 = 10 logistic Elo, and the margin
test at elo1 = the nElo that a true 10 Elo has in its own units (measured here
on 400,000 pairs).  It prints the share of H1 verdicts (false-positive rate at
0, power at 10), mean and 95th-percentile pairs to a decision, and the
coverage of the margin test's 95% intervals after the stop: the naive one and
the one corrected for the stop (``arena.tournament.poststop``).  ``--real``
adds a few real ``arena match`` runs (greedy vs random, greedy-eps10 vs greedy).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.tournament import sprt  # noqa: E402
from arena.tournament.match import MARGIN, PENTA, Pairs, Test, report  # noqa: E402

DEAL_SD, NOISE, POINTS = 6.0, 1.0, 20.0
ALPHA = BETA = 0.05
ELOS = (0, 5, 10, 20)
QUESTION = 10.0
MARGIN_CAP = 5000   # pairs; the pentanomial gets up to 30,000 (2 seats) or 20,000 (4 seats)


def _noise(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return NOISE * rng.standard_t(3, size=shape)


def skill_of_elo(elo: float, rng: np.random.Generator, n: int = 400_000) -> float:
    """The skill shift whose heads-up expected score on a fresh deal is ``score_of_elo(elo)``."""
    if elo == 0:
        return 0.0
    base = rng.normal(0, DEAL_SD, n) - rng.normal(0, DEAL_SD, n) + _noise(rng, (n,)) - _noise(rng, (n,))
    base = np.concatenate([base, -base])   # exactly symmetric: 0 Elo is skill 0
    target = sprt.score_of_elo(elo)
    lo, hi = -5.0, 5.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ((base + mid > 0).mean() + 0.5 * (base + mid == 0).mean()) < target else (lo, mid)
    return (lo + hi) / 2


def simulate_pairs(k: int, skill: float, tests: int, pairs: int, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(score differences, placing-test outcome index) of ``pairs`` duplicate pairs for each of ``tests``.

    Two seats: ``arena match A B`` heads-up (A against B, then the deal again with the seats swapped).
    More: A in seat j % k against k - 1 opponents of skill 0, then B in that seat against them.
    """
    diffs = np.empty((tests, pairs))
    outcome = np.empty((tests, pairs), dtype=np.int16)
    for lo in range(0, pairs, 500):
        m = min(pairs, lo + 500) - lo
        deal = rng.normal(0, DEAL_SD, (tests, m, k))
        seat = np.zeros(m, dtype=int) if k == 2 else (lo + np.arange(m)) % k
        mine = np.zeros((1, m, k))
        mine[0, np.arange(m), seat] = 1.0
        if k == 2:   # A's game: A (seat 0) against B; B's twin: B in seat 0, A in seat 1
            bonuses = (skill * mine, skill * (1.0 - mine))
        else:        # A's game: A in the seat; B's twin: B (skill 0) there, the same opponents (skill 0)
            bonuses = (skill * mine, 0.0 * mine)
        res = []
        for bonus in bonuses:
            g = deal + bonus + _noise(rng, deal.shape)
            me = (g * mine).sum(-1)
            margin = me - (g.sum(-1) - me) / (k - 1)
            beat = ((me[..., None] > g).sum(-1) + 0.5 * ((me[..., None] == g).sum(-1) - 1)) / (k - 1)
            res.append((margin * POINTS, beat))
        diffs[:, lo:lo + m] = res[0][0] - res[1][0]
        outcome[:, lo:lo + m] = np.rint((res[0][1] + 1 - res[1][1]) * 2 * (k - 1)).astype(np.int16)
    return diffs, outcome


def true_nelo(k: int, skill: float, rng: np.random.Generator) -> float:
    if skill == 0:
        return 0.0   # A and B alike: the pair difference is symmetric about 0
    d, _ = simulate_pairs(k, skill, 1, 400_000, rng)
    x = sprt.pair_values(d[0])
    return sprt.nelo_of_delta(float(x.mean() / x.std()))


def run_margin(diffs: np.ndarray, test: sprt.Sprt) -> tuple[np.ndarray, np.ndarray]:
    """(verdict 1/-1/0, pairs used) of the margin SPRT on each row."""
    tests, cap = diffs.shape
    verdict = np.zeros(tests, dtype=np.int8)
    length = np.full(tests, cap)
    for n in range(1, cap + 1):
        running = np.flatnonzero(verdict == 0)
        if running.size == 0:
            break
        value = np.asarray(sprt.margin_llr(diffs[running, :n], test.elo0, test.elo1))
        up, down = running[value >= test.upper], running[value <= test.lower]
        verdict[up], verdict[down] = 1, -1
        length[up], length[down] = n, n
    return verdict, length


def run_penta(outcome: np.ndarray, k: int, test: sprt.Sprt) -> tuple[np.ndarray, np.ndarray]:
    """The placing test; with opponents (k > 2) its hypotheses are halved as ``match.Test`` does."""
    tests, cap = outcome.shape
    values = 4 * (k - 1) + 1
    counts = np.zeros((tests, values))
    verdict = np.zeros(tests, dtype=np.int8)
    length = np.full(tests, cap)
    rows = np.arange(tests)
    for n in range(1, cap + 1):
        running = np.flatnonzero(verdict == 0)
        if running.size == 0:
            break
        counts[rows[running], outcome[running, n - 1]] += 1
        value = np.asarray(sprt.llr(counts[running], test.elo0, test.elo1))
        up, down = running[value >= test.upper], running[value <= test.lower]
        verdict[up], verdict[down] = 1, -1
        length[up], length[down] = n, n
    return verdict, length


def coverage(diffs: np.ndarray, verdict: np.ndarray, length: np.ndarray, test: sprt.Sprt, truth: float,
             sample: int) -> tuple[float, float, float, float]:
    """(naive coverage, corrected coverage, mean naive estimate, median corrected estimate) over ``sample`` stops."""
    naive_in = fixed_in = 0
    naive, fixed = [], []
    t = Test(MARGIN, test)
    for i in range(min(sample, len(verdict))):
        p = Pairs("A", "B")
        p.diffs = list(diffs[i, :length[i]])
        est = sprt.margin_estimate(p.diffs)
        r = report(p, "B", t, final=True, max_pairs=int(diffs.shape[1]))
        assert r.corrected is not None
        mid, lo, hi = r.corrected
        naive_in += bool(est.low is not None and est.high is not None and est.low <= truth <= est.high)
        fixed_in += lo <= truth <= hi
        naive.append(est.nelo)
        fixed.append(mid)
    m = min(sample, len(verdict))
    return naive_in / m, fixed_in / m, float(np.mean(naive)), float(np.median(fixed))


def bench_sim(tests: int, seed: int, cover_sample: int) -> None:
    rng = np.random.default_rng(seed)
    penta = sprt.Sprt(0, QUESTION, ALPHA, BETA)
    print(f"model: score = deal N(0, {DEAL_SD}) shared by the pair's twins + skill + play noise {NOISE} x t(3); "
          f"{tests} simulated matches per row; alpha = beta = {ALPHA}")
    for k in (2, 4):
        skills = {e: skill_of_elo(e, rng) for e in ELOS}
        targets = {e: true_nelo(k, skills[e], rng) for e in ELOS}
        margin = sprt.Sprt(0, targets[10], ALPHA, BETA)
        print(f"\n{k} seats: a true 10 Elo is {targets[10]:.1f} nElo on margins; the margin test runs "
              f"elo1 = {targets[10]:.1f} nElo, the pentanomial elo1 = {QUESTION:g} Elo")
        print(f"{'true Elo':>8} {'nElo':>6} | {'test':<7} {'H1 share':>8} {'mean pairs':>10} {'p95 pairs':>9} "
              f"{'undecided':>9} | {'naive cov':>9} {'corr cov':>8} {'naive est':>9} {'corr est':>8}")
        for e in ELOS:
            t0 = time.monotonic()
            cap = 30000 if k == 2 else 20000
            diffs, outcome = simulate_pairs(k, skills[e], tests, cap, rng)
            rows: list[tuple[str, np.ndarray, np.ndarray, tuple[float, float, float, float] | None]] = []
            v, n = run_margin(diffs[:, :MARGIN_CAP], margin)
            rows.append(("margin", v, n, coverage(diffs[:, :MARGIN_CAP], v, n, margin, targets[e], cover_sample)))
            v, n = run_penta(outcome, k, penta if k == 2 else sprt.Sprt(0, QUESTION / 2, ALPHA, BETA))
            rows.append(("penta", v, n, None))
            for name, v, n, cov in rows:
                tail = (f"{cov[0]:>9.1%} {cov[1]:>8.1%} {cov[2]:>+9.1f} {cov[3]:>+8.1f}" if cov else "")
                print(f"{e:>8} {targets[e]:>6.1f} | {name:<7} {(v == 1).mean():>8.1%} {n.mean():>10.0f} "
                      f"{np.percentile(n, 95):>9.0f} {(v == 0).mean():>9.1%} | {tail}")
            print(f"{'':>8} ({time.monotonic() - t0:.0f} s)")


def bench_default(tests: int, seed: int) -> None:
    """Pairs the default margin test (elo0 0, elo1 20 nElo) needs, by the true nElo of the pairs (any model)."""
    rng = np.random.default_rng(seed)
    test = sprt.Sprt(0, 20, ALPHA, BETA)
    print(f"\nthe default margin test (elo0 0, elo1 20 nElo, cap 5,000 pairs), {tests} matches per row; the pairs it"
          " needs depend only on the true nElo of the pairs (heavy-tailed differences here):")
    print(f"{'true nElo':>9} {'H1 share':>8} {'mean pairs':>10} {'p95 pairs':>9} {'undecided':>9}")
    base = rng.standard_t(3, size=400_000)
    for nelo in (0, 10, 20, 30, 50, 100, 200):
        lo, hi = 0.0, 3.0
        for _ in range(40 if nelo else 0):
            mid = (lo + hi) / 2
            x = sprt.pair_values(base + mid)
            lo, hi = (mid, hi) if sprt.nelo_of_delta(float(x.mean() / x.std())) < nelo else (lo, mid)
        shift = (lo + hi) / 2 if nelo else 0.0
        v, n = run_margin(rng.standard_t(3, size=(tests, 5000)) + shift, test)
        print(f"{nelo:>9} {(v == 1).mean():>8.1%} {n.mean():>10.0f} {np.percentile(n, 95):>9.0f} {(v == 0).mean():>9.1%}")


def bench_real(runs: int, max_pairs: int) -> None:
    print("\nreal bots (arena match, basic, --no-sandbox), pairs to a decision per run:")
    cases = [("greedy", "random", MARGIN, []), ("greedy", "random", PENTA, ["--elo1", "10"]),
             ("greedy", "greedy-eps10", MARGIN, []), ("greedy", "greedy-eps10", PENTA, ["--elo1", "10"])]
    for a, b, kind, extra in cases:
        got = []
        for r in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                out = subprocess.run([sys.executable, "-m", "arena.cli", "match", a, b, "--variant", "basic",
                                      "--test", kind, "--max-pairs", str(max_pairs), "--no-sandbox",
                                      "--out", str(Path(tmp) / f"m{r}"), *extra],
                                     cwd=ROOT, capture_output=True, text=True, timeout=3600)
                last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()[-200:]
                got.append(last)
        print(f"  {a} vs {b}, --test {kind}:")
        for line in got:
            print(f"    {line[:260]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer simulated matches (seconds to a minute)")
    p.add_argument("--tests", type=int, default=None, help="simulated matches per row")
    p.add_argument("--real", action="store_true", help="also run real `arena match` runs")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--deal-sd", type=float, default=DEAL_SD, help="the deal's share of a seat's score (model)")
    args = p.parse_args()
    globals()["DEAL_SD"] = args.deal_sd
    tests = args.tests or (100 if args.quick else 1000)
    bench_default(tests // 2, args.seed)
    bench_sim(tests, args.seed, 30 if args.quick else 300)
    if args.real:
        bench_real(1 if args.quick else 3, 300 if args.quick else 2500)


if __name__ == "__main__":
    main()
