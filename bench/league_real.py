"""A real league of many bot processes (README, Leagues): entrants of known order, killed and resumed.

``--bots`` entrants, each ``bench/league_eps_bot.py`` with its own probability of a random move (evenly
from 0 to ``--max-eps``: a lower one is a stronger bot), play an adaptive ``top = K`` league through
``arena run`` in ``--out``.  A sandboxed bot sees only its own folder and the client library, so the
entrants share one folder ``--out``/bot holding the bot and a copy of the engine's packages it imports
(compiled there first: the sandbox's view is read-only, so nothing could be cached at the first launch).  After ``--kill-after`` games the run is killed with SIGKILL (its whole
process group), then resumed with ``--resume``; the script prints both wall times, the standings' top K
against the true one (the K lowest epsilons) and each bot's games.

    python -m bench.league_real [--bots 100] [--games 800] [--top 10] [--kill-after 300] --out DIR
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tournament(n: int, games: int, top: int, max_eps: float, concurrency: int, sandbox: bool) -> str:
    bots = "".join(f'\n[[bots]]\nname = "eps{i:03d}"\ncommand = "python3 league_eps_bot.py"\n'
                   f'cwd = "bot"\nenv = {{ EPS = "{max_eps * i / max(1, n - 1):.4f}" }}\n' for i in range(n))
    return f"""\
name = "league-real"
variant = "basic"
seats = 4
format = "adaptive"
top = {top}
games = {games}
deal_sets = 1
seating = "rotate"
concurrency = {concurrency}
records = false
sandbox = {str(sandbox).lower()}
seed = 7
{bots}"""


def bot_folder(folder: Path) -> None:
    """The entrants' folder: the bot and the packages it imports, readable by the seats' users."""
    if folder.exists():
        return  # a resumed run keeps the folder its bots were hashed with
    skip = shutil.ignore_patterns("__pycache__", "node_modules", "js", "*.pyc")
    for package in ("arena", "protocol", "sample_bots"):
        shutil.copytree(ROOT / package, folder / package, ignore=skip)
    shutil.copy2(ROOT / "bench" / "league_eps_bot.py", folder / "league_eps_bot.py")
    compileall.compile_dir(folder, quiet=1)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def run(cmd: list[str], kill_after: int | None, journal: Path, log: Path) -> tuple[float, int]:
    """Run ``cmd`` in its own process group, its stderr to ``log``; with ``kill_after``, SIGKILL the
    group once that many games are journaled."""
    started = time.monotonic()
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        while proc.poll() is None and (kill_after is None or _lines(journal) < kill_after):
            time.sleep(0.2)
        if proc.poll() is None:
            _kill(proc.pid)
        elif proc.returncode:
            sys.exit(f"arena run failed (exit {proc.returncode}): {log.read_text(errors='replace')[-2000:]}")
        elif kill_after is not None:
            sys.exit(f"arena run finished before {kill_after} games were journaled: lower --kill-after")
    finally:
        _kill(proc.pid)  # the group: a bot or worker left behind by an error dies too
        proc.wait()
    return time.monotonic() - started, _lines(journal)


def _kill(group: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, default=100)
    ap.add_argument("--games", type=int, default=800)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-eps", type=float, default=0.6)
    ap.add_argument("--kill-after", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--sandbox", action="store_true", help="bubblewrap every bot (slower to start)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    bot_folder(args.out / "bot")
    file = args.out / "league.toml"
    file.write_text(tournament(args.bots, args.games, args.top, args.max_eps, args.concurrency, args.sandbox))
    results = args.out / "results"
    arena = [sys.executable, "-m", "arena.cli", "run", str(file), "--out", str(results), "--progress", "none"]
    first, done = run(arena, args.kill_after, results / "journal.jsonl", args.out / "run.err")
    print(f"killed (SIGKILL) after {first:.0f} s with {done} games journaled")
    second, total = run(arena + ["--resume"], None, results / "journal.jsonl", args.out / "resume.err")
    print(f"resumed: {second:.0f} s more, {total} games in all ({first + second:.0f} s wall)")
    st = json.loads(subprocess.run([sys.executable, "-m", "arena.cli", "standings", str(results), "--format",
                                    "json"], cwd=ROOT, capture_output=True, check=True).stdout)
    named = [r["bot"] for r in st["rows"][:args.top]]
    truth = [f"eps{i:03d}" for i in range(args.top)]
    print(f"named top {args.top}: {', '.join(named)}; {len(set(named) & set(truth))} of the true top {args.top}")
    for r in st["rows"][:args.top + 5]:
        print(f"  {r['rank']:>3} {r['bot']} games {r['games']:>4} top {100 * (r.get('top_pct') or 0):5.1f}%")
    games = sorted(r["games"] for r in st["rows"])
    print(f"games per bot: min {games[0]}, median {games[len(games) // 2]}, max {games[-1]}")


if __name__ == "__main__":
    main()
