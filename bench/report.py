"""Report benchmark: how long `arena report` takes on a 10,000-game results folder, how big the report
is and how long Chromium takes to render it.

The folder is built in-process (``make_folder``): a resolved tournament of 10
sample bots heads-up at basic (45 tables x 112 deal-sets x 2 seatings = 10,080
games), a secret key, signed journal lines and one record per game.  A pool
of distinct games is really played by the engine's greedy/random policies;
the other games' journal lines reuse a pool game's result and hard-link its
record, which costs the report the same to read.  Decision latencies are
drawn from a seeded log-normal; every 7th game has an ``illegal`` failure.
``make_folder`` is also what the fast tests build their folders with.

Run: ``python bench/report.py [--games N] [--browser]``; ``main()`` returns the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arena.integrity import make_key  # noqa: E402
from arena.referee.entries import Failure, Line, Timed, encode_line  # noqa: E402
from arena.rules.log import DrawEntry, PlayEntry  # noqa: E402
from arena.rules.record import header_of  # noqa: E402
from arena.selfplay import play_game, policies_for  # noqa: E402
from arena.tournament import schedule  # noqa: E402
from arena.tournament.config import load, write_resolved  # noqa: E402
from arena.tournament.journal import Journal, JournalEntry  # noqa: E402

FAILURE_EVERY = 7


def tournament_toml(name: str, bots: list[str], deal_sets: int, target: int) -> str:
    lines = [f'name = "{name}"', 'variant = "basic"', "seats = 2", f"deal_sets = {deal_sets}", "seed = 3",
             'output = "out"', "", "[rules]", f"target = {target}", "", "[time]", "decision_ms = 1000", ""]
    for b in bots:
        policy = "random" if b.startswith("random") else "greedy"
        lines += ["[[bots]]", f'name = "{b}"', f'command = "{policy}"', ""]
    return "\n".join(lines)


def _record_lines(game: Any, seats: list[str], game_id: str, rng: random.Random, failure: bool) -> list[str]:
    header = header_of(game, tuple(seats), game_id=game_id, bots=list(seats)).to_data()
    lines = [json.dumps(header)]
    failed = False
    for e in game.log:
        line: Line = Timed(e, round(rng.lognormvariate(-0.5, 0.8), 3)) if isinstance(e, DrawEntry | PlayEntry) else e
        lines.append(encode_line(line).decode())
        if failure and not failed and isinstance(e, DrawEntry) and e.seat == 1:
            failed = True
            lines.append(encode_line(Failure(seat=1, bot=seats[1], kind="illegal",
                                             reason="action 1 (meld): AS is not in your hand (RULES 3.2)",
                                             action="retry", deal=1, turn=2)).decode())
    return lines


def make_folder(out: Path, games: int, bots: int = 10, pool: int = 40, deal_sets: int | None = None,
                target: int = 50, seed: int = 1) -> Path:
    """A results folder with ``games`` journal lines and records (see the module docstring); returns it."""
    names = [f"greedy-{i}" if i % 3 else f"random-{i}" for i in range(bots)]
    tables = bots * (bots - 1) // 2
    sets = deal_sets or max(1, -(-games // (tables * 2)))
    out.mkdir(parents=True, exist_ok=True)
    src = out.parent / f"{out.name}.toml"
    src.write_text(tournament_toml("bench-report", names, sets, target), encoding="utf-8")
    t = load(src)
    write_resolved(t, out)
    key = make_key(out)
    (out / "records").mkdir(exist_ok=True)
    rng = random.Random(seed)
    played: list[tuple[Any, Path, list[str]]] = []
    with Journal(out, key) as journal:
        for index in range(min(games, schedule.total_games(t))):
            spec = schedule.game_at(t, index, key)
            seats = list(spec.seats)
            failure = index % FAILURE_EVERY == FAILURE_EVERY - 1
            record = out / "records" / f"g{index:06d}.jsonl"
            if len(played) < pool or failure:
                policies = ["random" if s.startswith("random") else "greedy" for s in seats]
                game, _ = play_game(t.rules, policies_for(t.rules, policies, index + seed), index + seed)
                record.write_text("\n".join(_record_lines(game, seats, spec.game_id, rng, failure)) + "\n",
                                  encoding="utf-8")
                if not failure:
                    played.append((game, record, seats))
            else:
                game, source, _ = played[index % len(played)]
                os.link(source, record)
            journal.append(JournalEntry(
                index=index, game_id=spec.game_id, deal_seed=spec.deal_seed, table=spec.table, set=spec.set,
                seating=spec.seating, seats=seats, placings=game.placings(), totals=list(game.totals),
                failures=[{}, {"illegal": 1}] if failure else [{}, {}], record=f"records/{record.name}",
                deals=game.deal_no, decisions=sum(1 for e in game.log if isinstance(e, DrawEntry | PlayEntry))))
    return out


def render_seconds(page: Path) -> float:
    """Seconds Chromium takes to load ``page`` and run its scripts (headless, one fresh browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 800})
            tab.goto(page.as_uri())  # warm the browser's caches on the same page once
            start = time.perf_counter()
            tab.goto(page.as_uri(), wait_until="load")
            tab.wait_for_selector("#games-table tbody tr")
            return time.perf_counter() - start
        finally:
            browser.close()


def main(games: int = 10_000, browser: bool = True, base: Path | None = None) -> dict[str, Any]:
    import tempfile

    from arena.report import write_report

    with tempfile.TemporaryDirectory(prefix="bench-report-", dir=base) as tmp:
        folder = Path(tmp) / "results"
        start = time.perf_counter()
        make_folder(folder, games)
        built = time.perf_counter() - start
        start = time.perf_counter()
        page = write_report(folder)
        first = time.perf_counter() - start
        start = time.perf_counter()
        write_report(folder)
        again = time.perf_counter() - start
        figures: dict[str, Any] = {
            "games": games, "build_folder_s": round(built, 1), "report_first_s": round(first, 2),
            "report_rewrite_s": round(again, 2), "report_mb": round(page.stat().st_size / 1e6, 2),
        }
        if browser:
            figures["render_s"] = round(render_seconds(page), 2)
    return figures


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=10_000)
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium render time")
    args = ap.parse_args()
    print(json.dumps(main(args.games, not args.no_browser), indent=2))
