"""Env benchmark: arena.env steps/s against OpenSpiel's gin_rummy, timed in the same run; house bot strength.

Speed: uniform random play over the action mask in the raw AEC env (``agent_iter`` and
``last()``, so every step builds the observation tensor and the candidate plays), basic
and german at 2 and 4 seats; OpenSpiel's ``gin_rummy`` (``open-spiel`` from PyPI, the
``bench`` extra) with uniform random legal actions, chance outcomes sampled, counted by
decisions only, with and without its observation tensor at each decision (our env always
builds one).  Both are wall clock and per CPU second in this process, one core.
RLCard's gin rummy random play is cited at ~12,500 steps/s (bench/engine.py's anchor);
it is not timed here (RLCard is not installed).

Strength (``--strength``, minutes of CPU): ``arena match`` of each house level against
greedy (duplicate pairs, the margin SPRT), niced, with ``--max-pairs`` as the bound; the
figure is the match's own estimate and interval as it stopped.

Usage: ``python bench/env.py [--quick] [--json] [--strength [--no-speed] [--pairs N] [--variant V] [--seats S]
[--levels easy,medium,hard] [--time-ms MS]]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # before bench/ itself, whose protocol.py would hide the protocol package

import numpy as np  # noqa: E402

import arena.env  # noqa: E402

CASES = (("basic", 2), ("basic", 4), ("german", 2), ("german", 4))


def env_rate(variant: str, players: int, steps: int, seed: int = 0) -> dict[str, float]:
    """Random masked play in the raw env until ``steps`` live steps; steps/s wall and per CPU second."""
    e = arena.env.raw_env(variant, players=players)
    rng = random.Random(seed)  # as for OpenSpiel below (numpy's choice costs more than a step's share)
    done = games = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while done < steps:
        e.reset(seed=seed + games)
        games += 1
        for _agent in e.agent_iter():
            obs, _r, term, trunc, _info = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            done += 1
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"steps": done, "games": games, "steps_per_s": done / wall, "steps_per_cpu_s": done / cpu}


def openspiel_rate(steps: int, tensor: bool, seed: int = 0) -> dict[str, float] | None:
    """OpenSpiel gin_rummy, uniform random legal actions; None if open-spiel is not installed."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    done = games = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while done < steps:
        state = game.new_initial_state()
        games += 1
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            if tensor:
                state.observation_tensor(state.current_player())
            state.apply_action(rng.choice(state.legal_actions()))
            done += 1
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"steps": done, "games": games, "steps_per_s": done / wall, "steps_per_cpu_s": done / cpu}


def strength(level: str, variant: str, seats: int, pairs: int, time_ms: int) -> dict[str, Any]:
    """``arena match house-LEVEL greedy``, niced, at most ``pairs`` duplicate pairs; its summary line."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nice", "-n", "19", sys.executable, "-m", "arena", "match", f"house-{level}", "greedy",
               "--variant", variant, "--seats", str(seats), "--max-pairs", str(pairs), "--time-ms", str(time_ms),
               "--out", str(Path(tmp) / "m"), "--no-sandbox"]
        if seats > 2:
            cmd += ["--opponents", ",".join(["greedy"] * (seats - 1))]
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, start_new_session=True)
        lines = [x for x in (p.stdout + p.stderr).splitlines() if x.strip()]
        return {"level": level, "variant": variant, "seats": seats, "pairs": pairs, "rc": p.returncode,
                "seconds": round(time.perf_counter() - t, 1), "summary": lines[-6:]}


def main(quick: bool = False, quiet: bool = False) -> dict[str, Any]:
    steps = 3_000 if quick else 20_000
    out: dict[str, Any] = {"env": {}, "openspiel": {}}
    for variant, players in CASES:
        r = env_rate(variant, players, steps)
        out["env"][f"{variant}/{players}"] = r
        if not quiet:
            print(f"arena.env {variant:7} {players} seats: {r['steps_per_s']:8.0f} steps/s  "
                  f"({r['steps_per_cpu_s']:.0f} per CPU s, {r['games']} games)")
    for tensor in (False, True):
        r2 = openspiel_rate(steps, tensor)
        key = "gin_rummy+tensor" if tensor else "gin_rummy"
        out["openspiel"][key] = r2
        if not quiet:
            if r2 is None:
                print("OpenSpiel: not installed (pip install -e .[bench])")
                break
            print(f"OpenSpiel {key:17}: {r2['steps_per_s']:8.0f} steps/s  ({r2['steps_per_cpu_s']:.0f} per CPU s)")
    anchor, with_tensor = out["openspiel"].get("gin_rummy"), out["openspiel"].get("gin_rummy+tensor")
    slowest = min(v["steps_per_cpu_s"] for v in out["env"].values())
    if anchor:
        out["slowest_vs_openspiel"] = slowest / anchor["steps_per_cpu_s"]
        if not quiet:
            print(f"slowest env case / OpenSpiel random play, per CPU s: {out['slowest_vs_openspiel']:.2f}x "
                  "(goal: >= 1)")
    if with_tensor:
        # like for like: an env step always builds its observation, so does OpenSpiel's here
        out["slowest_vs_openspiel_tensor"] = slowest / with_tensor["steps_per_cpu_s"]
        if not quiet:
            print(f"slowest env case / OpenSpiel random play building its observation tensor: "
                  f"{out['slowest_vs_openspiel_tensor']:.2f}x")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3,000 steps a case instead of 20,000")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--strength", action="store_true", help="also arena match of each house level against greedy")
    ap.add_argument("--pairs", type=int, default=8, help="duplicate pairs per strength match (the bound)")
    ap.add_argument("--variant", action="append", help="strength: variants (default basic)")
    ap.add_argument("--seats", type=int, action="append", help="strength: table sizes (default 2)")
    ap.add_argument("--levels", default="easy,medium,hard")
    ap.add_argument("--time-ms", type=int, default=2000, help="strength: the match's decision limit")
    ap.add_argument("--no-speed", action="store_true", help="strength only")
    a = ap.parse_args()
    os.nice(5)
    res = {} if a.no_speed else main(a.quick, quiet=a.json)
    if a.strength:
        res["strength"] = []
        for variant in a.variant or ["basic"]:
            for seats in a.seats or [2]:
                for level in a.levels.split(","):
                    s = strength(level, variant, seats, a.pairs, a.time_ms)
                    res["strength"].append(s)
                    if not a.json:
                        print(f"house-{level} vs greedy, {variant} {seats} seats, <= {a.pairs} pairs "
                              f"({s['seconds']} s):\n  " + "\n  ".join(s["summary"]))
    if a.json:
        print(json.dumps(res, indent=2))
