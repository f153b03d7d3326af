"""The ladder's figures (README, Run a competition): 30 submissions over a bounded run, two kill -9s.

    python3 -m bench.ladder_run --out /tmp/ladder-bench --minutes 15

Entrants are real sandboxed bots of known relative strength: greedy with a share ``eps`` of random
decisions (eps 0 is greedy, eps 1 the random bot), carrying a copy of the arena package (a
submission holds all its files); a few broken ones (never say hello: refused at the door) and a few
that pass the door and crash in games (suspended).  The submissions come in three waves: a third
by ``arena ladder submit`` before the run, a third through the inbox after the first ``kill -9``, a
third (new versions of some entrants among them) after the second.  Prints one JSON object:

- games/s over the run's wall time (the door's checks of the inbox waves included);
- for each version entered while the ladder ran: the games it had played when its rating came, and
  stayed, within +-100 Elo of its final rating (``history.jsonl``, one point per batch);
- the runner's and the workers' memory (journal ``runner_rss_mb``, ``worker_rss_mb``), first tenth
  of the games against the last tenth;
- nothing lost: every batch's journal holds each of its games once, none lost across the kills;
- the server (``arena ladder serve``, loaded every 0.25 s by a poller) SIGKILLed half way through the
  first phase and started again once the ladder has journaled a game without it: how long it was
  down, the games played meanwhile and their median time against all games', the poller's errors while
  it was up, and whether what it serves at the end equals the snapshot made from the folder.

    python3 -m bench.ladder_run --out /tmp/ladder-snap --snapshot-games 20000

times ``snapshot`` alone on a ladder of that many signed games made by hand (20 entrants, 100 games a
batch): the first call (every journal read and verified, the fit), a call with nothing new (the
cache), and a call after one more game (that batch's journal read again, the fit).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from arena.integrity import folder_key, make_key
from arena.ladder import games as ladder_games_module
from arena.ladder import layout
from arena.ladder.serve_pages import board_view
from arena.ladder.snapshot import snapshot
from arena.tournament import schedule
from arena.tournament.config import read_resolved
from arena.tournament.journal import Journal, JournalEntry, read

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "arena.cli", "ladder"]
ENTRANT = '''import sys
from arena.policies import EpsilonGreedyPolicy
from sample_bots.policy_bot import PolicyBot
import zlib
from arena.rules.options import rules_from_data

EPS = float(sys.argv[1])


class Bot(PolicyBot):
    def on_new_game(self, msg):
        self.policy = EpsilonGreedyPolicy(rules_from_data(msg.rules), zlib.crc32(f"{msg.game}/{msg.seat}".encode()))
        self.policy.EPSILON = EPS


if __name__ == "__main__":
    Bot(f"eps{EPS}").run()
'''
# (name, kind): kind is an eps value, "no_hello" (refused at the door) or "crash_in_games"
WAVES = [
    [("e00", "0"), ("e01", "0.1"), ("e02", "0.25"), ("e03", "0.5"), ("e04", "1"), ("e05", "0"), ("e06", "0.1"),
     ("e07", "0.5"), ("b00", "no_hello"), ("c00", "crash_in_games")],
    [("e08", "0.25"), ("e09", "1"), ("e10", "0"), ("e11", "0.1"), ("e12", "0.5"), ("e13", "0.25"), ("e14", "1"),
     ("e15", "0.1"), ("b01", "no_hello"), ("c01", "crash_in_games")],
    [("e16", "0"), ("e17", "0.25"), ("e18", "0.5"), ("e04", "0"), ("e07", "0.1"), ("e09", "0.25"), ("e19", "0.1"),
     ("e20", "1"), ("b02", "no_hello"), ("c02", "crash_in_games")],
]


def folder(tmp: Path, name: str, kind: str, n: int) -> Path:
    out = tmp / f"{name}-{n}"
    if kind in ("no_hello", "crash_in_games"):
        out.mkdir(parents=True)
        shutil.copy(ROOT / "tests" / "bots" / "ladder_bot.py", out / "bot.py")
        (out / "bot.toml").write_text(f'command = "python3 bot.py {kind}"\n')
        return out
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", "js", "*.pyc")
    for pkg in ("arena", "protocol", "sample_bots"):
        shutil.copytree(ROOT / pkg, out / pkg, ignore=ignore)
    (out / "entrant.py").write_text(ENTRANT)
    (out / "bot.toml").write_text(f'command = "python3 entrant.py {kind}"\n')
    return out


def start(root: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as f:
        return subprocess.Popen(CLI + ["run", str(root)], cwd=ROOT, stdout=f, stderr=f, start_new_session=True)


class Server:
    """``arena ladder serve`` as a visitor sees it: a poller loads /api/snapshot every 0.25 s and counts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.proc: subprocess.Popen[str] | None = None
        self.base = ""
        self.down = False
        self.loads = self.errors = self.errors_while_down = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        self.proc = subprocess.Popen(CLI + ["serve", str(self.root), "--listen", "127.0.0.1:0"], cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()
        self.base = line.split(" at ", 1)[1].split("/ ", 1)[0]
        self.down = False
        if not self.thread.is_alive():
            self.thread.start()

    def snapshot(self) -> dict[str, object]:
        with urllib.request.urlopen(f"{self.base}/api/snapshot", timeout=30) as r:
            data: dict[str, object] = json.loads(r.read())
        return data

    def _poll(self) -> None:
        while not self.stopping.wait(0.25):
            try:
                self.snapshot()
                self.loads += 1
            except (OSError, ValueError):
                if self.down:
                    self.errors_while_down += 1
                else:
                    self.errors += 1

    def kill(self) -> None:
        self.down = True
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def close(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(40)
        self.kill()


def journaled(root: Path) -> dict[tuple[str, int], float]:
    return {(b.name, e.index): e.duration_s for b in layout.batch_dirs(root) for e in read(b).entries}


def games(root: Path) -> int:
    return sum(len(read(b).entries) for b in layout.batch_dirs(root))


def placed_after(points: list[list[float]], final: float, within: float = 100.0) -> int | None:
    """Games played when the rating came within ``within`` of ``final`` and stayed there."""
    at = None
    for g, r in points:
        if abs(r - final) <= within:
            at = at if at is not None else int(g)
        else:
            at = None
    return at


def _game(i: int, seats: list[str], first: int) -> JournalEntry:
    return JournalEntry(index=i, game_id=f"g{i:06d}", table=i // 2, set=0, seating=i % 2, seats=seats,
                        placings=[1, 2] if first == 0 else [2, 1], totals=[0, 0], failures=[{}, {}], record=None)


def snapshot_figure(out: Path, n_games: int, per_batch: int = 100, entrants: int = 20) -> dict[str, object]:
    """``snapshot`` timed on a hand-made ladder of ``n_games`` signed games (no bot runs)."""
    import random

    root = out / "ladder"
    subprocess.run(CLI + ["init", str(root), "--variant", "basic", "--seats", "2", "--name", "snap"], cwd=ROOT,
                   check=True, capture_output=True)
    names = [f"e{i:02d}" for i in range(entrants)]
    layout.save_registry(root, {n: [{"version": 1, "submitted": "t0", "fingerprint": n, "status": "active",
                                     "reason": None, "command": "python3 bot.py", "transport": "zmq"}] for n in names})
    rng = random.Random(1)
    strength = {n: rng.gauss(0, 1) for n in names}
    number = 0
    for start_at in range(0, n_games, per_batch):
        number += 1
        folder = root / "batches" / f"{number:06d}"
        folder.mkdir(parents=True)
        key = make_key(folder)
        with Journal(folder, key) as j:
            for i in range(min(per_batch, n_games - start_at)):
                a, b = rng.sample(names, 2)
                p = 1 / (1 + 10 ** ((strength[b] - strength[a]) * 0.7))
                j.append(_game(i, [f"{a}.v1", f"{b}.v1"], 0 if rng.random() < p else 1))
    timings = {}
    t0 = time.perf_counter()
    snap = snapshot(root)
    timings["first_s"] = round(time.perf_counter() - t0, 3)
    reads = ladder_games_module.reads
    t0 = time.perf_counter()
    snapshot(root)
    timings["cached_s"] = round(time.perf_counter() - t0, 5)
    timings["journals_read_by_cached_call"] = ladder_games_module.reads - reads
    folder = root / "batches" / f"{number:06d}"
    with Journal(folder, folder_key(folder) or b"") as j:
        j.append(_game(per_batch + 1, ["e00.v1", "e01.v1"], 0))
    reads = ladder_games_module.reads
    t0 = time.perf_counter()
    snapshot(root)
    timings["after_one_game_s"] = round(time.perf_counter() - t0, 3)
    timings["journals_read_after_one_game"] = ladder_games_module.reads - reads
    return {"games": snap["ladder"]["games"], "batches": number, "entrants": entrants, **timings}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--snapshot-games", type=int, default=0, help="time snapshot() alone on this many games")
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    a.out.mkdir(parents=True)
    if a.snapshot_games:
        print(json.dumps(snapshot_figure(a.out, a.snapshot_games), indent=1))
        return
    root, tmp, log = a.out / "ladder", a.out / "src", a.out / "run.log"
    subprocess.run(CLI + ["init", str(root), "--variant", "basic", "--seats", "2", "--name", "bench"], cwd=ROOT, check=True)
    text = (root / "ladder.toml").read_text()
    text = text.replace("deal_sets = 2", "deal_sets = 1").replace("new_games = 30", "new_games = 20")
    (root / "ladder.toml").write_text(text)
    t0 = time.monotonic()
    for n, (name, kind) in enumerate(WAVES[0]):
        subprocess.run(CLI + ["submit", str(root), str(folder(tmp, name, kind, n)), "--name", name], cwd=ROOT,
                       capture_output=True)
    door_s = time.monotonic() - t0
    phase = a.minutes * 60 / 3
    counts = []
    run_wall = 0.0
    proc = start(root, log)
    server = Server(root)
    server.start()
    server_kill: dict[str, object] = {}
    try:
        for wave in range(3):
            if wave:  # the wave goes to the inbox at once; the run takes it between batches
                for n, (name, kind) in enumerate(WAVES[wave]):
                    src = folder(tmp, name, kind, 100 * wave + n)
                    dest = root / "inbox" / name
                    waited = time.monotonic()
                    while dest.exists() and time.monotonic() - waited < phase:
                        time.sleep(0.5)  # the entrant's earlier version is still in the inbox: not taken yet
                    if dest.exists():
                        shutil.rmtree(dest)  # never taken (a short run): this version replaces it
                    os.replace(src, dest)
            began = time.monotonic()
            if wave == 0:  # the server's kill -9, half way through the first phase
                time.sleep(phase / 2)
                seen = journaled(root)
                server.kill()
                killed_at = time.monotonic()
                while len(journaled(root)) == len(seen) and time.monotonic() - killed_at < phase / 2:
                    time.sleep(0.1)
                server.start()
                down_s = time.monotonic() - killed_at
                meanwhile = {k: d for k, d in journaled(root).items() if k not in seen}
                server_kill = {"down_s": round(down_s, 1), "games_while_down": len(meanwhile),
                               "median_game_s_while_down": round(statistics.median(meanwhile.values()), 2) if meanwhile else None}
            time.sleep(max(0.0, phase - (time.monotonic() - began)))
            before = games(root)
            if wave < 2:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                counts.append(("kill -9", before, games(root)))
                proc = start(root, log)
            else:
                os.kill(proc.pid, signal.SIGTERM)  # the ladder alone: it stops its workers itself
                proc.wait(120)
                counts.append(("SIGTERM", before, games(root)))
            run_wall += time.monotonic() - began
        time.sleep(1.5)  # past the server's snapshot TTL
        server_kill["served_equals_folder"] = server.snapshot() == json.loads(json.dumps(board_view(snapshot(root))))
    finally:
        server.close()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    server_kill |= {"page_loads": server.loads, "page_errors_while_up": server.errors,
                    "page_errors_while_down": server.errors_while_down}
    total = games(root)
    whole = True
    for b in layout.batch_dirs(root):
        idx = sorted(e.index for e in read(b).entries)
        want = list(range(schedule.total_games(read_resolved(b))))
        whole &= idx == want or (b == layout.batch_dirs(root)[-1] and idx == sorted(set(idx)))
    snap = snapshot(root)
    final = {f"{r['entrant']}.v{r['version']}": r["rating"] for r in snap["leaderboard"] if r["rating"] is not None}
    history: dict[str, list[list[float]]] = {}
    for line in (root / layout.HISTORY_FILE).read_text().splitlines():
        for bot, point in json.loads(line)["ratings"].items():
            history.setdefault(bot, []).append(point)
    late = {f"{n}.v{len(snap['entrants'][n]['versions'])}" for wave in WAVES[1:] for n, _k in wave
            if n in snap["entrants"]}
    placed = {b: placed_after(history.get(b, []), final[b]) for b in sorted(late) if b in final}
    entries = [e for b in layout.batch_dirs(root) for e in read(b).entries]
    tenth = max(1, len(entries) // 10)
    first, last = entries[:tenth], entries[-tenth:]
    statuses: dict[str, int] = {}
    for people in snap["entrants"].values():
        for v in people["versions"]:
            statuses[v["status"]] = statuses.get(v["status"], 0) + 1
    print(json.dumps({
        "submissions": sum(len(w) for w in WAVES), "versions_by_status": statuses,
        "games": total, "batches": len(layout.batch_dirs(root)), "run_wall_s": round(run_wall, 1),
        "games_per_s": round(total / run_wall, 3), "door_s_first_wave": round(door_s, 1),
        "kills": counts, "every_batch_whole": whole,
        "placed_within_100_elo_after_games": placed,
        "placed_median_games": statistics.median([g for g in placed.values() if g is not None]) if any(
            g is not None for g in placed.values()) else None,
        "never_placed": sorted(b for b, g in placed.items() if g is None),
        "server_kill": server_kill | {"median_game_s_all": round(statistics.median(e.duration_s for e in entries), 2)},
        "runner_rss_mb_first_last": [round(statistics.median(e.runner_rss_mb for e in first), 1),
                                     round(statistics.median(e.runner_rss_mb for e in last), 1)],
        "worker_rss_mb_first_last": [round(statistics.median(e.worker_rss_mb for e in first), 1),
                                     round(statistics.median(e.worker_rss_mb for e in last), 1)],
        "leaderboard": [(r["entrant"], r["version"], r["rating"], r["games"], r["status"]) for r in snap["leaderboard"]],
    }, indent=1))


if __name__ == "__main__":
    main()
