"""What it costs to start a bot: CPU and wall per start, broken down, and a small tournament's games/s.

Every game's seats are started afresh somewhere (a test's game, a tournament's worker, a
restart): as root, a bwrap building the view, the sandbox's bwrap, the gate, the log copier and
the bot, plus the referee's own launch work.  This bench measures each part by itself, the old
way and the current way in the same run where both still exist (old/new ratios):

1. Python starts: ``-c pass`` with ``site``, ``-S``, ``-I -S``.
2. Imports, each in a fresh ``-S`` interpreter (site's cost apart): the modules a bundled bot
   imports (zmq, zmq.utils.monitor, msgspec, the client library, the engine, the bot).
3. Processes, CPU from ``wait4``: the sandbox's bwraps (running ``true``), the gate (running
   ``true`` as its bot; ``-I`` as before, ``-I -S`` now), the log copier, and a bot from its
   exec to its ``hello`` (the bundled greedy the old way, ``python -m``, and the new way,
   ``launch.command_line``; a user bot ``python3 bot.py``).
4. A whole start through ``BotHost.start`` (launch to hello, handshake included), sandbox on and
   off: wall, the referee's CPU (its thread) split by step (identity, cgroup, environment,
   folders, the bwrap argv, the copier's and the bot's ``Popen``), and the compartment's CPU
   (its cgroup: bwraps, gate, bot, copier).
5. games/s of a small tournament (4 greedy at 4-seat basic tables, target 10, records off) at
   concurrency 1 and 2, start-up included (every worker starts each bot once).

Run: ``python bench/startup.py [--quick] [--before REV]`` (medians of N repetitions; CPU figures
hold on a loaded machine, wall figures do not; ``--before 3c6f969`` times the bundled bot and the
tournament of the code before this work too, from ``git archive``).

Figures before issues 24/25 (this machine, root, load average ~20 on 2 cores, CPU medians): python
``-c pass`` 46-58 ms (``-S`` 9-11 ms: the machine's .pth files and the editable install's finder);
the gate, ``-I``, 63-72 ms; greedy (``python -m``, the client importing ``zmq.utils.monitor`` and
so asyncio) 177 ms from exec to hello; a whole sandbox-off start of greedy 240 ms in its
compartment (bwraps, gate, copier, bot), 248 ms sandboxed; the referee's own CPU per start 9-11 ms
(29 ms sandboxed as root, 16 of it ``identity.allocate`` reading every process's /proc status).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PY = sys.executable
USER_BOT = """\
from protocol.client import Bot


class Lazy(Bot):
    name = "lazy"

    def play(self, obs):
        return {"actions": [], "discard": obs.drawn or obs.hand[0]}


if __name__ == "__main__":
    Lazy().run()
"""


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def spawn_cpu(argv: list[str], env: dict[str, str] | None = None, hold: bool = True) -> tuple[float, float]:
    """(CPU seconds of the process and what it waited for, wall seconds) of one run to its end;
    its stdin a pipe held open until it ends (the gate polls it; not ``hold``: at its end at once),
    its stdout discarded."""
    read, write = os.pipe()
    t0 = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, env if env is not None else dict(os.environ), setpgroup=0,
                              file_actions=[(os.POSIX_SPAWN_DUP2, read, 0), (os.POSIX_SPAWN_CLOSE, write),
                                            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    finally:
        os.close(read)
        if not hold:
            os.close(write)
    try:
        _, status, ru = os.wait4(pid, 0)
    except BaseException:
        _kill_group(pid)
        os.waitpid(pid, 0)
        raise
    finally:
        if hold:
            os.close(write)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:4]} exited with {os.waitstatus_to_exitcode(status)}")
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0


def hello_cpu(argv: list[str], env: dict[str, str], folder: Path) -> tuple[float, float]:
    """(CPU, wall) of a bot from its exec to its hello: the bench binds the ROUTER it connects to."""
    import zmq

    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    endpoint = f"ipc://{folder}/hello.sock"
    sock.bind(endpoint)
    t0 = time.perf_counter()
    # in the bench's folder: ``python -m`` puts its working folder first on the path
    proc = subprocess.Popen([*argv, "--endpoint", endpoint], env={**env, "ARENA_TOKEN": "bench"}, cwd=folder,
                            stdout=subprocess.DEVNULL, process_group=0)
    pid = proc.pid
    try:
        if not sock.poll(60_000):
            raise RuntimeError(f"{argv[:4]} said no hello within 60 s")
        frames = sock.recv_multipart()
        wall = time.perf_counter() - t0
        assert b"hello" in frames[-1], frames
    finally:
        _kill_group(pid)
        _, status, ru = os.wait4(pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        sock.close(0)
    return ru.ru_utime + ru.ru_stime, wall


def median(fn: Callable[[], tuple[float, float]], n: int) -> tuple[float, float]:
    runs = [fn() for _ in range(n)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def interleaved(fns: Mapping[str, Callable[[], tuple[float, float]]], n: int) -> dict[str, tuple[float, float]]:
    """Medians of each, run in turns so a change of load moves them all alike."""
    runs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(n):
        for name, fn in fns.items():
            runs[name].append(fn())
    return {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items()}


def old_bundled(module: str) -> list[str]:
    return [PY, "-m", module]  # the command line before issue 24


def python_starts(n: int) -> dict[str, tuple[float, float]]:
    return interleaved({f"python {' '.join(f)} -c pass": partial(spawn_cpu, [PY, *f, "-c", "pass"])
                        for f in ((), ("-S",), ("-I", "-S"))}, n)


def imports(n: int) -> dict[str, tuple[float, float]]:
    """CPU of importing each module in an ``-S`` interpreter (the bare start taken off)."""
    from arena.referee.launch import bundled_path

    first, after = bundled_path()
    boot = f"import sys; sys.path[:0] = {list(first)!r}; sys.path += {list(after)!r}"
    mods = ("zmq", "zmq.utils.monitor", "msgspec", "protocol.messages", "protocol.client", "arena.rules.melds",
            "arena.policies", "sample_bots.policy_bot")
    fns = {m: partial(spawn_cpu, [PY, "-S", "-c", f"{boot}; import {m}"])
           for m in ("sys", *mods)}
    got = interleaved(fns, n)
    bare = got.pop("sys")
    return {m: (c - bare[0], w - bare[1]) for m, (c, w) in got.items()}


def processes(n: int, folder: Path, before: Path | None = None) -> dict[str, tuple[float, float]]:
    from arena.referee import identity, launch, sandbox
    from arena.referee.botlog import LOG_CAP_BYTES
    from arena.referee.cleanup import MARKER, SESSION

    out: dict[str, tuple[float, float]] = {}
    if sandbox.problem() is None:
        who = identity.allocate("arena-bench-startup") if identity.needed() else None
        argv = sandbox.wrap(["true"], Path("/"), (), (), identity=who)
        label = "bwrap x2 (root's view, then the sandbox), running true" if who else "bwrap, running true"
        out[label] = median(lambda: spawn_cpu(argv, sandbox.environment({})), n)
    gate_env = {**os.environ, "ARENA_TOKEN": "bench", "ARENA_GATE_BIND": f"ipc://{folder}/gate.sock", MARKER: SESSION}
    gates = {"gate -I (before), bot true": [PY, "-I", launch.GATE, "true"],
             "gate -I -S (now), bot true": [*launch.gate_argv(sandbox=True), "true"]}
    out.update(interleaved({k: partial(spawn_cpu, a, gate_env) for k, a in gates.items()}, n))
    log = folder / "copy.log"
    out["log copier (-I -S), to EOF"] = median(
        lambda: spawn_cpu([PY, "-I", "-S", str(Path(launch.__file__).with_name("logcopy.py")), str(log),
                           str(LOG_CAP_BYTES)], hold=False), n)
    (folder / "bot.py").write_text(USER_BOT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    old_env = {**env, "PYTHONPATH": str(before or ROOT)}
    cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(folder / "pyc")
    old = "greedy, python -m, " + ("the --before tree" if before else "this tree's client") + ", to hello"
    bots: dict[str, tuple[list[str], dict[str, str]]] = {
        old: (old_bundled("sample_bots.greedy"), old_env),
        "greedy, command_line (now), to hello": (launch.command_line("greedy"), env),
        "greedy, command_line, with .pyc files, to hello": (launch.command_line("greedy"), cached),
        "user bot: python3 bot.py, to hello": ([PY, str(folder / "bot.py")], env),
        "user bot: python3 bot.py, with .pyc files, to hello": ([PY, str(folder / "bot.py")], cached)}
    hello_cpu(*bots["greedy, command_line, with .pyc files, to hello"], folder)  # fills the .pyc cache
    hello_cpu(*bots["user bot: python3 bot.py, with .pyc files, to hello"], folder)
    out.update(interleaved({k: partial(hello_cpu, a, e, folder) for k, (a, e) in bots.items()}, n))
    return out


@contextmanager
def step_clock() -> Iterator[dict[str, float]]:
    """The referee thread's CPU per launch step, by wrapping the functions that do them."""
    from arena.referee import compartment, identity, launch, sandbox

    spent: dict[str, float] = defaultdict(float)
    patches = [(identity, "allocate", "identity"), (compartment, "_compartment", "cgroup made"),
               (launch, "_bot_environment", "environment"), (launch, "_bot_folders", "folders"),
               (launch, "_data_folder", "data folder"), (sandbox, "wrap", "bwrap argv"),
               (compartment, "_start_copier", "copier Popen"), (subprocess.Popen, "__init__", "all Popen")]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]

    def timed(fn: Any, label: str) -> Any:
        def inner(*a: Any, **k: Any) -> Any:
            t0 = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                spent[label] += time.thread_time() - t0
        return inner

    for (obj, name, label), (_, _, fn) in zip(patches, saved):
        setattr(obj, name, timed(fn, label))
    try:
        yield spent
    finally:
        for obj, name, fn in saved:
            setattr(obj, name, fn)


def whole_start(command: str, sandbox: bool, folder: Path, data: bool = False) -> dict[str, float]:
    """One start through ``BotHost.start``: wall to hello, the referee's CPU by step, the compartment's CPU."""
    from arena.referee.host import BotHost
    from arena.settings import BotSpec, TimeControl

    with BotHost(TimeControl(start_ms=60_000), folder / "logs", sandbox=sandbox) as host:
        peer = host.add(BotSpec(name="b", command=command), cwd=folder / "cwd",
                        data=folder / "data" if data else None)
        with step_clock() as spent:
            t0, c0 = time.perf_counter(), time.thread_time()
            ok = host.start(peer)
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        if not ok:
            raise RuntimeError(f"{command!r} did not start: {peer.problem}")
        assert peer.process is not None
        group = peer.process.cgroup
        inside = group.cpu_seconds() if group is not None else float("nan")
    steps = dict(spent)
    steps["bot Popen"] = steps.pop("all Popen", 0.0) - steps.get("copier Popen", 0.0)
    return {"wall": wall, "referee": cpu, "compartment": inside, **steps}


def whole_starts(n: int, folder: Path) -> dict[str, dict[str, float]]:
    from arena.referee import sandbox

    cases = [("greedy", False), ("python3 bot.py", False)]
    if sandbox.problem() is None:
        cases += [("greedy", True), ("python3 bot.py", True)]
    (folder / "cwd").mkdir(exist_ok=True)
    (folder / "cwd" / "bot.py").write_text(USER_BOT)
    os.chmod(folder, 0o755)
    os.chmod(folder / "cwd", 0o755)
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    for _ in range(n):
        for command, box in cases:
            runs[f"{command}, sandbox {'on' if box else 'off'}"].append(whole_start(command, box, folder))
    return {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in runs.items()}


def tournament(concurrency: int, deal_sets: int, tree: Path = ROOT) -> dict[str, float]:
    """A small 4-seat greedy tournament run by ``arena run`` (the CLI of ``tree``), records off:
    wall from the command's start to its end, so every start (the CLI's, the workers', the bots') counts."""
    bots = "".join(f'\n[[bots]]\nname = "g{i}"\ncommand = "greedy"\n' for i in range(4))
    text = (f'name = "startup"\nvariant = "basic"\nseats = 4\ndeal_sets = {deal_sets}\nconcurrency = {concurrency}\n'
            f'seed = 1\nrecords = false\noutput = "out"\n\n[rules]\ntarget = 10\n\n[time]\ndecision_ms = 5000\n{bots}')
    with tempfile.TemporaryDirectory(prefix="arena-bench-", dir="/var/tmp") as tmp:
        os.chmod(tmp, 0o755)
        file = Path(tmp) / "t.toml"
        file.write_text(text)
        t0 = time.perf_counter()
        done = subprocess.run([PY, "-m", "arena", "run", str(file), "--format", "json"], cwd=tmp, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(tree)}, timeout=3600,
                              start_new_session=True)
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"arena run failed ({done.returncode}): {done.stderr[-2000:]}")
    games = deal_sets * 24  # one table of 4, its 24 seatings per deal set
    return {"games": games, "wall": wall, "games_per_s": games / wall}


@contextmanager
def tree_of(rev: str | None) -> Iterator[Path | None]:
    """The project's files at ``rev`` (``git archive``) in a folder of their own, for the same run's
    "before" figures; None without ``rev``."""
    if rev is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="arena-before-", dir="/var/tmp") as tmp:
        os.chmod(tmp, 0o755)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


def main(quick: bool = False, before: str | None = None) -> dict[str, Any]:
    n = 3 if quick else 7
    sets = 1 if quick else 2
    with tempfile.TemporaryDirectory(prefix="arena-startup-") as tmp, tree_of(before) as old:
        folder = Path(tmp)
        figures: dict[str, Any] = {"python": python_starts(n), "imports": imports(n),
                                   "processes": processes(n, folder, old), "starts": whole_starts(max(3, n // 2), folder)}
        figures["tournament"] = {}
        for c in (1, 2):  # this tree and REV's in turns, so a change of load moves both
            figures["tournament"][f"concurrency {c}"] = tournament(c, sets)
            if old is not None:
                figures["tournament"][f"concurrency {c}, {before}"] = tournament(c, sets, old)
    return figures


def report(f: dict[str, Any]) -> str:
    ms = 1000.0
    lines = ["Python starts (CPU / wall, ms)"]
    lines += [f"  {k:<52} {c * ms:7.1f} {w * ms:8.1f}" for k, (c, w) in f["python"].items()]
    lines.append("Imports in an -S interpreter, the bare start taken off (CPU / wall, ms)")
    lines += [f"  {k:<52} {c * ms:7.1f} {w * ms:8.1f}" for k, (c, w) in f["imports"].items()]
    lines.append("Processes, each by itself (CPU / wall, ms)")
    p = f["processes"]
    lines += [f"  {k:<52} {c * ms:7.1f} {w * ms:8.1f}" for k, (c, w) in p.items()]
    greedy_old = next((k for k in p if k.startswith("greedy, python -m")), "")
    for old, new in (("gate -I (before), bot true", "gate -I -S (now), bot true"),
                     (greedy_old, "greedy, command_line (now), to hello")):
        if old in p and new in p:
            lines.append(f"  {'  before / now, CPU: ' + old.split(',')[0]:<52} {p[old][0] / p[new][0]:6.2f}x")
    lines.append("A whole start, BotHost.start to hello (ms; referee = its thread's CPU, by step)")
    for k, s in f["starts"].items():
        steps = ", ".join(f"{name} {v * ms:.1f}" for name, v in s.items()
                          if name not in ("wall", "referee", "compartment"))
        lines.append(f"  {k:<30} wall {s['wall'] * ms:6.0f}  compartment CPU {s['compartment'] * ms:6.0f}  "
                     f"referee CPU {s['referee'] * ms:5.1f} ({steps})")
    lines.append("Small tournament (arena run): 4 greedy, 4 seats, basic to 10, records off, start-up included")
    for c, t in f["tournament"].items():
        lines.append(f"  {c}: {t['games']} games in {t['wall']:.1f} s = {t['games_per_s']:.2f} games/s")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 repetitions instead of 7, fewer games")
    ap.add_argument("--before", metavar="REV", help="also time REV's bundled bot and tournament (git archive)")
    ns = ap.parse_args()
    print(report(main(ns.quick, ns.before)))
