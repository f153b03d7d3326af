"""Engine benchmark: greedy-vs-greedy self-play speed per preset.

For each preset, plays a fixed number of 2-player games between two greedy
policies in this process (one core, no sockets), and measures:

- decisions/s (a decision is one draw or one play) and games/s, wall clock
  (and decisions per CPU second, less sensitive to other load on the machine);
- the share of time spent in the engine (``Game.draw``, ``Game.play``,
  ``Game.observation``: verify and apply) and in the policy
  (``policy.draw``, ``policy.play``), with ``time.perf_counter`` around each call.

Anchors (random-play decisions/s of other gin rummy engines, as published):
RLCard gin rummy ~12,500; OpenSpiel C++ gin rummy through Python ~41,000.
Target: >= 25,000 decisions/s greedy-vs-greedy for every preset, policy time
included (judged per CPU second, since wall-clock figures fall whenever other
work shares the machine).  Each row gives its ratio to the target and the
``sum(range(1000))`` calibration time measured just before it, which tells how
fast this Python ran at that moment (about 14 us on this machine when idle).

Where the engine runs compiled (``arena/compiled.py``), each preset is also played by the pure-Python
engine in a child process (``ARENA_PURE=1``, same games, right after it), and ``vs_pure`` is the ratio.

Usage: ``python bench/engine.py [--games N] [--preset NAME ...] [--json] [--no-pure]``.
``main()`` returns the figures as a dict (``bench/run`` imports it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/ itself, whose protocol.py would hide the protocol package

from arena import compiled  # noqa: E402
from arena.rules.game import Game, Phase  # noqa: E402
from arena.rules.options import resolve  # noqa: E402
from arena.rules.presets import PRESETS  # noqa: E402
from arena.selfplay import policies_for  # noqa: E402

ANCHORS = {"rlcard_gin_rummy_random": 12_500, "openspiel_gin_rummy_python": 41_000}
TARGET: dict[str, Any] = {"preset": "every", "decisions_per_s": 25_000}
DEFAULT_GAMES = 200
SEED = 1


def bench_preset(preset: str, games: int = DEFAULT_GAMES, seed: int = SEED, players: int = 2) -> dict[str, Any]:
    """Play ``games`` greedy-vs-greedy games of ``preset``; return the timings."""
    rules = resolve(preset)
    perf = time.perf_counter
    engine = policy = 0.0
    decisions = deals = 0
    cpu_start = time.process_time()
    start = perf()
    for i in range(games):
        s = seed + i
        t0 = perf()
        game = Game(rules, players, s)
        engine += perf() - t0
        pols = policies_for(rules, ["greedy"] * players, s)
        while not game.over:
            seat = game.current
            t0 = perf()
            obs = game.observation(seat)
            t1 = perf()
            if game.phase is Phase.DRAW:
                source = pols[seat].draw(obs)
                t2 = perf()
                game.draw(source)
            else:
                choice = pols[seat].play(obs)
                t2 = perf()
                game.play(choice)
            t3 = perf()
            engine += (t1 - t0) + (t3 - t2)
            policy += t2 - t1
            decisions += 1
        deals += game.deal_no
    wall = perf() - start
    cpu = time.process_time() - cpu_start
    return {
        "preset": preset,
        "players": players,
        "games": games,
        "deals": deals,
        "decisions": decisions,
        "seconds": round(wall, 4),
        "decisions_per_s": round(decisions / wall, 1),
        "games_per_s": round(games / wall, 2),
        "cpu_seconds": round(cpu, 4),
        "cpu_decisions_per_s": round(decisions / cpu, 1),
        "engine_share": round(engine / wall, 4),
        "policy_share": round(policy / wall, 4),
        "other_share": round(max(0.0, 1 - (engine + policy) / wall), 4),
        "vs_target": round(decisions / cpu / TARGET["decisions_per_s"], 2),
        "vs_rlcard": round(decisions / wall / ANCHORS["rlcard_gin_rummy_random"], 2),
        "vs_openspiel": round(decisions / wall / ANCHORS["openspiel_gin_rummy_python"], 2),
    }


def calibration() -> float:
    """Microseconds for ``sum(range(1000))`` (best of 5): how fast this Python is right now.

    Figures from different machines (or a loaded one) compare better divided by this.
    """
    import timeit

    return round(min(timeit.repeat("sum(range(1000))", number=2000, repeat=5)) / 2000 * 1e6, 2)


def openspiel_cpu_rate(steps: int = 40_000) -> float | None:
    """OpenSpiel gin_rummy random play, decisions per CPU second in this process (None without open-spiel)."""
    from bench.env import openspiel_rate

    r = openspiel_rate(steps, tensor=False)
    return None if r is None else round(r["steps_per_cpu_s"], 1)


def pure_row(preset: str, games: int) -> dict[str, Any]:
    """``bench_preset``'s figures for the same games with the pure-Python engine, from a child process."""
    out = subprocess.run([sys.executable, __file__, "--json", "--no-openspiel", "--no-pure", "--preset", preset,
                          "--games", str(games)], env={**os.environ, compiled.PURE_ENV: "1"},
                         check=True, capture_output=True, text=True, timeout=600).stdout
    result = json.loads(out)
    assert result["engine"] == "pure", result["engine"]
    return dict(result["presets"][preset])


def main(games: int = DEFAULT_GAMES, presets: list[str] | None = None, quiet: bool = False,
         openspiel: bool = True, pure: bool = True) -> dict[str, Any]:
    """Run the benchmark; print a table unless ``quiet``; return the figures.

    With ``openspiel`` (and open-spiel installed) its gin_rummy random play is timed before and
    after the presets, and each row's ``vs_openspiel_measured`` is its CPU rate over their mean.
    """
    names = presets or list(PRESETS)
    calib = calibration()
    spiel = [openspiel_cpu_rate()] if openspiel else []
    rows = []
    for p in names:
        before = calibration()
        row = {**bench_preset(p, games), "calibration_us": before}
        if pure and compiled.ENGINE == "compiled":
            slow = pure_row(p, games)
            if (slow["decisions"], slow["deals"]) != (row["decisions"], row["deals"]):
                raise SystemExit(f"{p}: the pure engine played other games ({slow['decisions']} decisions, "
                                 f"not {row['decisions']})")
            row["pure_cpu_decisions_per_s"] = slow["cpu_decisions_per_s"]
            row["vs_pure"] = round(row["cpu_decisions_per_s"] / row["pure_cpu_decisions_per_s"], 2)
        rows.append(row)
    spiel.append(openspiel_cpu_rate() if openspiel else None)
    measured = [x for x in spiel if x is not None]
    spiel_rate = sum(measured) / len(measured) if measured else None
    for r in rows:
        r["vs_openspiel_measured"] = round(r["cpu_decisions_per_s"] / spiel_rate, 2) if spiel_rate else None
    result: dict[str, Any] = {
        "benchmark": "engine",
        "policies": "greedy vs greedy",
        "python": platform.python_version(),
        "engine": compiled.ENGINE,
        "engine_reason": compiled.REASON,
        "machine": platform.machine(),
        "calibration_us_sum_range_1000": calib,
        "anchors": ANCHORS,
        "target": TARGET,
        # judged on decisions per CPU second: wall-clock figures drop whenever other work
        # shares the machine (both are in the table)
        "target_met": all(r["cpu_decisions_per_s"] >= TARGET["decisions_per_s"] for r in rows),
        "target_met_wall_clock": all(r["decisions_per_s"] >= TARGET["decisions_per_s"] for r in rows),
        "openspiel_cpu_decisions_per_s": spiel_rate,
        "openspiel_met": spiel_rate is not None and all(r["cpu_decisions_per_s"] >= spiel_rate for r in rows),
        "presets": {r["preset"]: r for r in rows},
    }
    if not quiet:
        print_table(result)
    return result


def print_table(result: dict[str, Any]) -> None:
    head = (f"{'preset':<14}{'games':>6}{'decisions':>10}{'dec/s':>10}{'cpu dec/s':>10}{'vs target':>10}{'games/s':>9}"
            f"{'engine':>8}{'policy':>8}{'vs RLCard':>10}{'vs OpenSpiel':>13}{'calib us':>9}")
    print(f"engine benchmark: {result['policies']}, 2 players, one core, Python {result['python']}, "
          f"{result['engine']} engine ({result['engine_reason']}); "
          f"sum(range(1000)) takes {result['calibration_us_sum_range_1000']} us here")
    print(head)
    print("-" * len(head))
    for r in result["presets"].values():
        print(f"{r['preset']:<14}{r['games']:>6}{r['decisions']:>10}{r['decisions_per_s']:>10,.0f}"
              f"{r['cpu_decisions_per_s']:>10,.0f}{r['vs_target']:>9.2f}x{r['games_per_s']:>9.1f}"
              f"{r['engine_share']:>8.0%}{r['policy_share']:>8.0%}{r['vs_rlcard']:>9.2f}x{r['vs_openspiel']:>12.2f}x"
              f"{r['calibration_us']:>9.2f}")
    pure = [r for r in result["presets"].values() if "vs_pure" in r]
    if pure:
        print("compiled over pure-Python engine, same games, per CPU s: "
              + ", ".join(f"{r['preset']} {r['vs_pure']:.2f}x" for r in pure))
    spiel = result.get("openspiel_cpu_decisions_per_s")
    if spiel:
        print(f"OpenSpiel gin_rummy random play, timed in this run: {spiel:,.0f} decisions per CPU s; per preset "
              + ", ".join(f"{r['preset']} {r['vs_openspiel_measured']:.2f}x" for r in result["presets"].values())
              + f" ({'met' if result['openspiel_met'] else 'NOT met'}: goal >= 1x every preset)")
    print(f"anchors: RLCard gin rummy ~{ANCHORS['rlcard_gin_rummy_random']:,} random decisions/s, "
          f"OpenSpiel C++ gin rummy via Python ~{ANCHORS['openspiel_gin_rummy_python']:,}; "
          f"target >= {TARGET['decisions_per_s']:,} decisions/s for every preset: "
          f"{'met' if result['target_met'] else 'NOT met'} per CPU second, "
          f"{'met' if result['target_met_wall_clock'] else 'NOT met'} by the wall clock")


def _cli(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=DEFAULT_GAMES, help="games per preset")
    ap.add_argument("--preset", action="append", choices=list(PRESETS), help="preset(s) to run (default: all)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    ap.add_argument("--no-openspiel", action="store_true", help="do not time OpenSpiel's gin_rummy in the same run")
    ap.add_argument("--no-pure", action="store_true", help="do not time the pure-Python engine beside the compiled one")
    args = ap.parse_args(argv)
    result = main(args.games, args.preset, quiet=args.json, openspiel=not args.no_openspiel, pure=not args.no_pure)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(_cli())
