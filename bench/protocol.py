"""Protocol benchmark: raw ZeroMQ round trip vs the referee's per-decision overhead.

All in one run on this machine:
1. the raw pyzmq ROUTER/DEALER round trip over TCP loopback for a message of
   the size of a typical decision request (an echo peer in another process);
2. the referee's per-decision overhead in real games of basic, greedy vs
   greedy, the bots on ZeroMQ (the endpoint the referee holds for each): wall time per decision minus the bots' own time (measured inside
   the bots from receiving a request to having sent its reply; the figure
   with only the policy call subtracted is printed too);
3. games/s of those games (bots kept alive, as in a tournament worker), and of
   whole ``arena play basic greedy greedy`` commands (process start included);
4. the client library's CPU to decode a request of a real game, against the
   strict decoder alone (what every request cost before the fast path).

5. the same games between the same bots on the stdio transport (no ZeroMQ in the bot: how the
   bundled bots run), and on ZeroMQ through a gate process (``ARENA_GATE=zmtp``: how a zmq bot was
   reached before the referee held its endpoint itself).

Goal: per-decision overhead at most 1.5x the raw round trip; the sandbox costs no
per-decision overhead and under 50 ms of start time (both measured here, with and without it).
Run: ``python bench/protocol.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zmq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _echo(endpoint: str, n: int) -> None:
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.ROUTING_ID, b"echo")
    s.connect(endpoint)
    s.send(b"ready")
    cpu0 = time.process_time()
    for _ in range(n):
        s.send(s.recv())
    s.send(repr(time.process_time() - cpu0).encode())  # this end's CPU (its I/O thread included)
    s.close()
    ctx.term()


def typical_request_size() -> int:
    from arena.rules.game import Game
    from arena.rules.options import resolve
    from arena.selfplay import play_game, policies_for

    rules = resolve("basic")
    _g, _ = play_game(rules, policies_for(rules, ["greedy", "greedy"], 1), 1)
    g2 = Game(rules, 2, 2)
    from arena.referee import wire
    from protocol.codec import encode

    request = encode(wire.request("basic-seed1", 17, "play", g2.observation(g2.current), 1000, 0))
    return len(json.dumps(json.loads(request)))  # with json.dumps' spaces, as this figure always was


def client_decode_us(repeat: int) -> tuple[float, float]:
    """Microseconds the client library takes to decode a request of a real basic game (greedy vs
    greedy), on average: its decoder, and the strict decoder alone (what it was before its fast path)."""
    from arena.referee import wire
    from arena.rules.game import Game, Phase
    from arena.rules.options import resolve
    from arena.selfplay import policies_for
    from protocol import codec as mc

    rules = resolve("basic")
    g = Game(rules, 2, 3)
    policies = policies_for(rules, ["greedy", "greedy"], 3)
    requests: list[bytes] = []
    while not g.over:
        obs = g.observation(g.current)
        decision = "draw" if g.phase is Phase.DRAW else "play"
        requests.append(mc.encode(wire.request("basic-seed3", len(requests), decision, obs, 1000, 0)))
        g.draw(policies[g.current].draw(obs)) if decision == "draw" else g.play(policies[g.current].play(obs))
    out = []
    for decode in (mc.decode_from_referee, lambda d: mc._decode(mc._referee_decoder, d, None)):
        best = float("inf")
        for _ in range(repeat):  # the best of a few passes: the least disturbed by other jobs
            t = time.process_time()
            for d in requests:
                decode(d)
            best = min(best, time.process_time() - t)
        out.append(best / len(requests) * 1e6)
    return out[0], out[1]


def raw_round_trip(size: int, n: int) -> tuple[float, float, float]:
    """Median and mean microseconds of a ROUTER -> DEALER -> ROUTER round trip of ``size`` bytes, and
    the CPU microseconds of one (both processes, their I/O threads included)."""
    ctx = zmq.Context()
    r = ctx.socket(zmq.ROUTER)
    r.setsockopt(zmq.LINGER, 0)
    port = r.bind_to_random_port("tcp://127.0.0.1")
    p = mp.get_context("spawn").Process(target=_echo, args=(f"tcp://127.0.0.1:{port}", n + 200))
    p.start()
    ident, _ = r.recv_multipart()
    payload = b"x" * size
    times = []
    cpu0 = time.process_time()
    for i in range(n + 200):
        t = time.perf_counter()
        r.send_multipart([ident, payload])
        r.recv_multipart()
        if i >= 200:  # warm-up
            times.append(time.perf_counter() - t)
    cpu = time.process_time() - cpu0 + float(r.recv_multipart()[1])
    p.join(5)
    r.close()
    ctx.term()
    return statistics.median(times) * 1e6, statistics.fmean(times) * 1e6, cpu / (n + 200) * 1e6


def referee_overhead(games: int, sandbox: bool = True, transport: str = "zmq", gate: str = "") -> dict[str, float]:
    """Games of basic, greedy vs greedy, between two timing bots on ``transport`` (zmq: on the endpoint the
    referee holds, or through a gate process with ``gate`` = ``zmtp`` or ``libzmq``, the ``ARENA_GATE``
    values; stdio: the client library's ``--stdio`` loop on the referee's pipes, as the bundled bots run)."""
    import os

    before = os.environ.pop("ARENA_GATE", None)
    if gate:
        os.environ["ARENA_GATE"] = gate
    try:
        return _referee_overhead(games, sandbox, transport)
    finally:
        os.environ.pop("ARENA_GATE", None)
        if before is not None:
            os.environ["ARENA_GATE"] = before


def _referee_overhead(games: int, sandbox: bool, transport: str) -> dict[str, float]:
    from arena.referee.game import play_one
    from arena.referee.host import BotHost
    from arena.rules.options import resolve
    from arena.settings import BotSpec, FailurePolicy, TimeControl

    rules = resolve("basic")
    tc = TimeControl(start_ms=20000, decision_ms=5000)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = f"{sys.executable} -m bench.timed_bot greedy" + (" --stdio" if transport == "stdio" else "")
        host = BotHost(tc, Path(tmp) / "logs", sandbox=sandbox)
        try:
            # cwd given: the sandbox shows the bot this checkout (bench.timed_bot is not a bundled bot)
            peers = [host.add(BotSpec(name=f"greedy{i}", command=cmd, cwd=".", transport=transport), cwd=ROOT) for i in range(2)]
            starts = []
            for p in peers:
                t = time.perf_counter()
                host.start(p)
                starts.append(time.perf_counter() - t)
            decisions = 0
            per_decision_latency: list[float] = []
            # CPU of the whole game: the referee (this process) and each compartment (gate, bot)
            ref_cpu0 = time.process_time()
            bots_cpu0 = sum(p.process.cpu_seconds() for p in peers if p.process is not None)
            start = time.perf_counter()
            for i in range(games):
                res = play_one(host, peers, rules, 1000 + i, f"bench-{i}", tc, FailurePolicy())
                decisions += res.decisions
                for lat in res.latencies_ms:
                    per_decision_latency.extend(lat)
            wall = time.perf_counter() - start
            ref_cpu = time.process_time() - ref_cpu0
            bots_cpu = sum(p.process.cpu_seconds() for p in peers if p.process is not None) - bots_cpu0
        finally:
            host.close()
        compute_s = busy_s = bot_cpu_s = 0.0
        for log in (Path(tmp) / "logs").glob("*.log"):
            for line in log.read_text().splitlines():
                if line.startswith("BENCH "):
                    compute_s += float(line.split()[2])
                    busy_s += float(line.split()[3])
                    bot_cpu_s += float(line.split()[4])
    return {
        "games": games,
        "decisions": decisions,
        "wall_s": wall,
        "bot_start_ms": statistics.median(starts) * 1000,
        "games_per_s": games / wall,
        "wall_per_decision_us": wall / decisions * 1e6,
        "bot_compute_per_decision_us": compute_s / decisions * 1e6,
        "bot_busy_per_decision_us": busy_s / decisions * 1e6,
        "overhead_per_decision_us": (wall - busy_s) / decisions * 1e6,
        "overhead_incl_bot_decoding_us": (wall - compute_s) / decisions * 1e6,
        "median_latency_us": statistics.median(per_decision_latency) * 1000,
        "referee_cpu_per_decision_us": ref_cpu / decisions * 1e6,
        "compartments_cpu_per_decision_us": bots_cpu / decisions * 1e6,
        "game_cpu_per_decision_us": (ref_cpu + bots_cpu) / decisions * 1e6,
        "bots_cpu_per_decision_us": bot_cpu_s / decisions * 1e6,
        # the per-decision path's CPU: the referee and the gates (the compartments less the bots' own)
        "path_cpu_per_decision_us": (ref_cpu + bots_cpu - bot_cpu_s) / decisions * 1e6,
    }


def cli_games_per_s(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        for i in range(n):
            subprocess.run([sys.executable, "-m", "arena", "play", "basic", "greedy", "greedy", "--seed", str(i),
                            "--quiet", "--record", str(Path(tmp) / f"{i}.jsonl")],
                           check=True, capture_output=True, cwd=ROOT)
        return n / (time.perf_counter() - start)


def main(quick: bool = False) -> dict[str, float]:
    size = typical_request_size()
    rtt, rtt_mean, rtt_cpu = raw_round_trip(size, 2000 if quick else 10000)
    ref = referee_overhead(10 if quick else 40)
    bare = referee_overhead(10 if quick else 40, sandbox=False)
    stdio = referee_overhead(10 if quick else 40, transport="stdio")
    gated = referee_overhead(10 if quick else 40, gate="zmtp")
    cli = cli_games_per_s(2 if quick else 5)
    decode_us, strict_decode_us = client_decode_us(5 if quick else 20)
    figures = {
        "request_bytes": size,
        "raw_rtt_us": rtt,
        "raw_rtt_mean_us": rtt_mean,
        "raw_rtt_cpu_us": rtt_cpu,
        **ref,
        "overhead_ratio": ref["overhead_per_decision_us"] / rtt,
        "overhead_ratio_vs_mean": ref["overhead_per_decision_us"] / rtt_mean,
        "cli_games_per_s": cli,
        "client_decode_us": decode_us,
        "client_strict_decode_us": strict_decode_us,
        "nosandbox_overhead_per_decision_us": bare["overhead_per_decision_us"],
        "nosandbox_bot_start_ms": bare["bot_start_ms"],
        "nosandbox_overhead_ratio": bare["overhead_per_decision_us"] / rtt,
        "nosandbox_game_cpu_per_decision_us": bare["game_cpu_per_decision_us"],
        "nosandbox_path_cpu_per_decision_us": bare["path_cpu_per_decision_us"],
        **{f"stdio_{k}": v for k, v in stdio.items()},
        "stdio_overhead_ratio": stdio["overhead_per_decision_us"] / rtt,
        **{f"gate_{k}": v for k, v in gated.items()},
        "gate_overhead_ratio": gated["overhead_per_decision_us"] / rtt,
    }
    return figures


def report(f: dict[str, float]) -> str:
    rows = [
        ("typical request size", f"{f['request_bytes']:.0f} B", ""),
        ("raw ZeroMQ ROUTER/DEALER round trip (median)", f"{f['raw_rtt_us']:.0f} us", "anchor: ~90 us measured here before"),
        ("raw ZeroMQ ROUTER/DEALER round trip (mean)", f"{f['raw_rtt_mean_us']:.0f} us", ""),
        ("referee wall time per decision", f"{f['wall_per_decision_us']:.0f} us", ""),
        ("bots' time per decision, policy only", f"{f['bot_compute_per_decision_us']:.0f} us", ""),
        ("bots' time per decision, receive to reply sent", f"{f['bot_busy_per_decision_us']:.0f} us",
         "policy + decoding the request + encoding the reply, in the bot"),
        ("referee overhead per decision (wall - bot's time)", f"{f['overhead_per_decision_us']:.0f} us",
         f"{f['overhead_ratio']:.2f}x the median raw round trip (target <= 1.5x); "
         f"{f['overhead_ratio_vs_mean']:.2f}x the mean"),
        ("... counting the bot's decoding as overhead too", f"{f['overhead_incl_bot_decoding_us']:.0f} us",
         f"{f['overhead_incl_bot_decoding_us'] / f['raw_rtt_us']:.2f}x raw round trip"),
        ("client library: decoding a request of a real game (CPU)",
         f"{f['client_decode_us']:.1f} us", f"{f['client_strict_decode_us']:.1f} us with the strict decoder alone, "
         f"{f['client_strict_decode_us'] / f['client_decode_us']:.1f}x"),
        ("median decision latency seen by the referee", f"{f['median_latency_us']:.0f} us", ""),
        ("CPU per decision: referee / compartments (bots; gates, if any) / bots",
         f"{f['referee_cpu_per_decision_us']:.0f} / {f['compartments_cpu_per_decision_us']:.0f} / "
         f"{f['bots_cpu_per_decision_us']:.0f} us", ""),
        ("CPU per decision of the path (referee, and gates if any)", f"{f['path_cpu_per_decision_us']:.0f} us",
         f"{f['path_cpu_per_decision_us'] / f['raw_rtt_cpu_us']:.2f}x the raw round trip's CPU "
         f"({f['raw_rtt_cpu_us']:.0f} us, both ends)"),
        ("the same on stdio (the bundled bots' transport): overhead", f"{f['stdio_overhead_per_decision_us']:.0f} us",
         f"{f['stdio_overhead_ratio']:.2f}x the median raw round trip (target <= 1.5x)"),
        ("... on stdio: CPU per decision, referee / bots' compartments",
         f"{f['stdio_referee_cpu_per_decision_us']:.0f} / {f['stdio_compartments_cpu_per_decision_us']:.0f} us",
         f"a game's {f['stdio_game_cpu_per_decision_us']:.0f} us, "
         f"{f['game_cpu_per_decision_us'] / f['stdio_game_cpu_per_decision_us']:.2f}x less than on zmq"),
        ("... on stdio: games/s, bots kept alive", f"{f['stdio_games_per_s']:.1f}",
         f"{f['stdio_games_per_s'] / f['games_per_s']:.2f}x zmq's"),
        ("the same through a gate process (ARENA_GATE=zmtp): overhead", f"{f['gate_overhead_per_decision_us']:.0f} us",
         f"{f['gate_overhead_ratio']:.2f}x the median raw round trip; the endpoint's "
         f"{f['overhead_per_decision_us'] / f['gate_overhead_per_decision_us']:.2f}x of it"),
        ("... through a gate: CPU per decision of the path, a game's",
         f"{f['gate_path_cpu_per_decision_us']:.0f} / {f['gate_game_cpu_per_decision_us']:.0f} us",
         f"the endpoint's {f['path_cpu_per_decision_us'] / f['gate_path_cpu_per_decision_us']:.2f}x / "
         f"{f['game_cpu_per_decision_us'] / f['gate_game_cpu_per_decision_us']:.2f}x of them; games/s "
         f"{f['gate_games_per_s']:.1f} (the endpoint's {f['games_per_s'] / f['gate_games_per_s']:.2f}x)"),
        ("same overhead without the sandbox", f"{f['nosandbox_overhead_per_decision_us']:.0f} us",
         f"sandboxed / bare {f['overhead_per_decision_us'] / f['nosandbox_overhead_per_decision_us']:.2f}x"),
        ("bot start to welcome, sandboxed / bare", f"{f['bot_start_ms']:.0f} / {f['nosandbox_bot_start_ms']:.0f} ms",
         f"sandbox costs {f['bot_start_ms'] - f['nosandbox_bot_start_ms']:+.0f} ms (goal < 50 ms)"),
        ("games/s, basic greedy vs greedy, bots kept alive", f"{f['games_per_s']:.1f}", ""),
        ("games/s, whole `arena play` commands", f"{f['cli_games_per_s']:.2f}", "includes Python and bot start-up"),
    ]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{w}}  {b:>10}  {c}" for a, b, c in rows)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ns = ap.parse_args()
    print(report(main(ns.quick)))
