"""Helpers the test modules share (import them from here, never from another test module): paths of the
test bots, real games between bot processes, the processes this pytest process started, and the small
tournament several runner tests play."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import psutil

from arena.referee.game import GameResult, play_one
from arena.referee.host import BotHost
from arena.referee.launch import MARKER, SESSION
from arena.rules.options import resolve
from arena.settings import BotSpec, FailurePolicy, Limits, TimeControl

ROOT = Path(__file__).resolve().parent.parent
MISBEHAVE = str(ROOT / "tests" / "bots" / "misbehave.py")


HOSTILE = str(ROOT / "tests" / "bots" / "hostile.py")


def misbehave(mode: str) -> str:
    return f"{sys.executable} {MISBEHAVE} {mode}"


def hostile(mode: str) -> str:
    return f"{sys.executable} {HOSTILE} {mode}"


def arena_processes() -> list[psutil.Process]:
    """Live processes started from this test run (they carry its ARENA_SESSION marker)."""
    found = []
    me = os.getpid()
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if p.pid == me or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if p.environ().get(MARKER) == SESSION:
                found.append(p)
        except (psutil.Error, OSError):
            continue
    return found


def cmdline_of(p: psutil.Process) -> str:
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return str(p.pid)


def run_game(
    variant: str,
    commands: list[str],
    tmp_path: Path,
    seed: int = 1,
    policy: FailurePolicy = FailurePolicy(),
    time_control: TimeControl = TimeControl(start_ms=10000, decision_ms=1000, grace_ms=50),
    env: dict[int, dict[str, str]] | None = None,
    other_token_of: dict[int, int] | None = None,
    overrides: dict | None = None,
    transports: dict[int, str] | None = None,
    limits: dict[int, Limits] | None = None,
    sandbox: bool = True,
    seat_times: dict[int, TimeControl] | None = None,
) -> tuple[GameResult, list[str]]:
    """Play one game between real bot processes; returns the result and the seats' tokens."""
    rules = resolve(variant, overrides or {})
    with BotHost(time_control, tmp_path / "logs", sandbox=sandbox) as host:
        peers = [host.add(BotSpec(name=f"s{i}", command=c, transport=(transports or {}).get(i, "zmq"),
                                  limits=(limits or {}).get(i, Limits())))
                 for i, c in enumerate(commands)]
        for i, peer in enumerate(peers):
            extra = dict((env or {}).get(i, {}))
            if other_token_of and i in other_token_of:
                extra["OTHER_TOKEN"] = peers[other_token_of[i]].token
            if extra:
                peer.spec = replace(peer.spec, env=extra)
        for peer in peers:
            host.start(peer)
        result = play_one(host, peers, rules, seed, f"test-{seed}", time_control, policy, tmp_path / "record.jsonl",
                          seat_times=[(seat_times or {}).get(i) for i in range(len(peers))])
        tokens = [p.token for p in peers]
    return result, tokens


# A small tournament for runner and cluster tests, 3 bots heads-up: 3 tables x 4 deal-sets x 2 seatings = 24 games.  No random-vs-random
# table (those games are long); a 10 s decision clock so a busy machine cannot turn a
# move into a timeout and make two runs differ.
SMALL = """\
name = "small"
variant = "basic"
seats = 2
deal_sets = 4
concurrency = 2
seed = 7
records = false

[time]
decision_ms = 10000

[[bots]]
name = "greedy"
command = "greedy"

[[bots]]
name = "greedy-2"
command = "greedy"

[[bots]]
name = "random"
command = "random"
"""
SMALL_GAMES = 24
