"""Hostile-bot figures: what a flooding or bloating bot costs its neighbours and the referee.

All in one run, each attack beside a control measured the same way:

1. honest-bot timeouts at a 20 ms limit (+50 ms grace) in a 3-seat game where
   one seat floods its endpoint from 50 extra sockets, on the wall clock and
   on the CPU clock, beside the same game with that seat honest (goal: 0 on
   the CPU clock, the tournaments' default);
2. the referee's peak memory while one bot sends a multipart message of
   384 x 1 MiB frames plus 4 MiB messages from 9 more sockets, and another
   writes 5 MiB lines on stdio, beside a control game (goal: under the bound
   stated in the README, 10 MiB per seat);
3. false timeouts of bots that compute for half of a 20 ms limit, at
   concurrency 4 on this machine's cores, CPU clock (goal: 0 in 10,000 decisions);
4. the referee's CPU per request of a bot that sends forty 1 MiB stale and
   out-of-turn replies before each reply, beside its CPU per decision of an
   honest game (goal: at most MAX_JUNK + 1 messages decoded per request).

Run: ``python bench/flood.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HOSTILE = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'hostile.py'}"
MISBEHAVE = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'misbehave.py'}"


class PeakRss:
    def __enter__(self) -> PeakRss:
        self.me = psutil.Process()
        self.base = self.peak = self.me.memory_info().rss
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.me.memory_info().rss)
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()

    @property
    def growth_mib(self) -> float:
        return (self.peak - self.base) / 2**20


def game(commands: list[str], clock: str, decision_ms: int, deals: int, seed: int,
         transports: dict[int, str] | None = None) -> tuple[list[dict[str, int]], int]:
    """Failures per seat and decisions of one game."""
    res = played(commands, clock, decision_ms, deals, seed, transports)
    return res.failures, res.decisions


def played(commands: list[str], clock: str, decision_ms: int, deals: int, seed: int,
           transports: dict[int, str] | None = None) -> Any:
    """The result of one game."""
    from arena.referee.game import play_one
    from arena.referee.host import BotHost
    from arena.rules.options import resolve
    from arena.settings import BotSpec, FailurePolicy, TimeControl

    tc = TimeControl(start_ms=20000, decision_ms=decision_ms, grace_ms=50, clock=clock)
    with tempfile.TemporaryDirectory() as tmp, BotHost(tc, Path(tmp) / "logs") as host:
        peers = [host.add(BotSpec(name=f"s{i}", command=c, transport=(transports or {}).get(i, "zmq")))
                 for i, c in enumerate(commands)]
        for p in peers:
            host.start(p)
        return play_one(host, peers, resolve("basic", {"deals": deals}), seed, f"flood-{seed}", tc, FailurePolicy())


def junk_figures() -> dict[str, float]:
    """The referee's CPU (this process's) per honest decision, and per request of the junk flooder."""
    spent = time.process_time()
    honest = played(["greedy", "greedy"], "cpu", 1000, 1, 46)
    honest_ms = (time.process_time() - spent) * 1000 / honest.decisions
    spent = time.process_time()
    junk = played([f"{HOSTILE} junk", "greedy"], "cpu", 1000, 1, 46)
    spent_ms = (time.process_time() - spent) * 1000
    fails = junk.failures[0]
    # each request ended answered, or in a failure (a stale one only when it was the flood's)
    requests = len(junk.latencies_ms[0]) + sum(fails.values()) - fails.get("stale", 0) + sum(
        1 for e in junk.failure_log if e.seat == 0 and e.kind == "stale" and "answering nothing" in e.reason)
    return {"junk_honest_ms": honest_ms, "junk_requests": requests,
            "junk_request_ms": (spent_ms - honest_ms * junk.decisions) / max(1, requests)}


def flood_figures(deals: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, first in (("control", f"{MISBEHAVE} honest"), ("flood", f"{HOSTILE} flood")):
        for clock in ("wall", "cpu"):
            fails, decisions = game([first, "greedy", "greedy"], clock, 20, deals, 7)
            out[f"{label}_{clock}_honest_timeouts"] = sum(f.get("timeout", 0) for f in fails[1:])
            out[f"{label}_{clock}_decisions"] = decisions
    return out


def memory_figures() -> dict[str, float]:
    with PeakRss() as control:
        game(["greedy", "greedy"], "wall", 5000, 1, 8)
    with PeakRss() as attack:
        game([f"{HOSTILE} multipart", "greedy"], "wall", 5000, 1, 8)
    with PeakRss() as lines:
        game([f"{sys.executable} {ROOT / 'tests' / 'bots' / 'stdio_lines.py'} huge", "greedy"], "wall", 5000, 1, 8,
             transports={0: "stdio"})
    return {"control_growth_mib": control.growth_mib, "multipart_growth_mib": attack.growth_mib,
            "stdio_lines_growth_mib": lines.growth_mib}


def fairness_figures(min_decisions: int) -> dict[str, float]:
    from arena.tournament.journal import read

    with tempfile.TemporaryDirectory() as tmp:
        bots = "\n".join(f'[[bots]]\nname = "half{i}"\ncommand = "{MISBEHAVE} halfcpu"\n' for i in range(4))
        deal_sets = max(1, -(-min_decisions // 3000))  # about 3,000 decisions per deal-set of 12 games
        file = Path(tmp) / "fair.toml"
        file.write_text(f'name = "fair"\nvariant = "basic"\nseats = 2\ndeal_sets = {deal_sets}\nconcurrency = 4\n'
                        f'records = false\noutput = "out"\n[rules]\ntarget = 20\n[time]\ndecision_ms = 20\n'
                        f'grace_ms = 50\nclock = "cpu"\n[failures]\ntimeout = "forfeit"\n{bots}')
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "arena", "run", str(file)], capture_output=True, check=True)
        wall = time.perf_counter() - t
        entries = read(Path(tmp) / "out").entries
    return {"fair_games": len(entries), "fair_decisions": sum(e.decisions for e in entries),
            "fair_timeouts": sum(f.get("timeout", 0) for e in entries for f in e.failures),
            "fair_wall_s": wall, "cores": os.cpu_count() or 1}


def main(quick: bool = False) -> dict[str, float]:
    return {**flood_figures(1 if quick else 3), **memory_figures(), **junk_figures(),
            **fairness_figures(3000 if quick else 10_000)}


def report(f: dict[str, float]) -> str:
    rows = [
        ("honest-bot timeouts, 20 ms, wall clock: control / flood",
         f"{f['control_wall_honest_timeouts']:.0f} / {f['flood_wall_honest_timeouts']:.0f}",
         f"over {f['control_wall_decisions']:.0f} / {f['flood_wall_decisions']:.0f} decisions"),
        ("honest-bot timeouts, 20 ms, CPU clock: control / flood",
         f"{f['control_cpu_honest_timeouts']:.0f} / {f['flood_cpu_honest_timeouts']:.0f}",
         f"goal 0; over {f['control_cpu_decisions']:.0f} / {f['flood_cpu_decisions']:.0f} decisions"),
        ("referee peak memory growth: control game", f"{f['control_growth_mib']:.1f} MiB", ""),
        ("... multipart 384 x 1 MiB + 4 MiB from 9 sockets", f"{f['multipart_growth_mib']:.1f} MiB",
         f"{f['multipart_growth_mib'] - f['control_growth_mib']:+.1f} MiB vs control; bound 10 MiB per seat"),
        ("... 5 MiB lines on stdio", f"{f['stdio_lines_growth_mib']:.1f} MiB",
         f"{f['stdio_lines_growth_mib'] - f['control_growth_mib']:+.1f} MiB vs control"),
        ("referee CPU: per honest decision / per request of a junk flooder",
         f"{f['junk_honest_ms']:.2f} / {f['junk_request_ms']:.1f} ms",
         f"over {f['junk_requests']:.0f} requests of forty 1 MiB stale replies each"),
        (f"false timeouts, half-limit CPU bots, concurrency 4 on {f['cores']:.0f} cores",
         f"{f['fair_timeouts']:.0f}", f"goal 0; over {f['fair_decisions']:.0f} decisions in {f['fair_games']:.0f} "
                                      f"games ({f['fair_wall_s']:.0f} s)"),
    ]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{w}}  {b:>12}  {c}" for a, b, c in rows)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer games")
    print(report(main(ap.parse_args().quick)))
