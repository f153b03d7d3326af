"""``arena ladder final``: a full duplicate round robin among the top N versions; its standings are the result.

The ladder is frozen first (no more submissions).  The top N are the leaderboard's first N active
versions (``snapshot``).  Size, from the stated precision goal (``[final] precision_elo``, the 95%
half width wanted for a finalist's rating): the ladder's own games give, per finalist, a half width
``h`` after ``d`` deal-sets; half widths shrink as 1/sqrt(deal-sets), so a finalist needs
``d * (h / goal)^2`` deal-sets (the median over finalists), which the round robin reaches with
``ceil(that / tables per finalist)`` deal-sets per table, at most ``max_deal_sets``.  Without
intervals to go by (no spread yet), the normal approximation for even pairs stands in: a deal-set
of s seatings at k seats gives s*(k-1) comparisons, and a half width of ``goal`` needs
``4 * (1.96 * 400 / ln 10 / goal)^2`` of them.

The final is a tournament folder (``DIR/final``) played by the runner, so it resumes after any kill
as tournaments do; once all its games are in, the ladder's state is ``final``.
"""

from __future__ import annotations

import math
import shutil
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from arena.ladder.games import ladder_games
from arena.ladder.layout import (
    FINAL,
    LadderError,
    locked,
    registry,
    require_ladder,
    set_state,
    split_bot_id,
    state,
    version_dir,
)
from arena.ladder.settings import LadderSettings, load
from arena.ladder.snapshot import snapshot
from arena.settings import BotSpec
from arena.tournament import schedule
from arena.tournament.config import Tournament, read_resolved
from arena.tournament.journal import read
from arena.tournament.ratings import ELO_SCALE, rate

Z95 = 1.96


@dataclass(frozen=True)
class FinalPlan:
    bots: tuple[str, ...]
    deal_sets: int
    games: int
    why: str        # how the size was reached, one sentence


def size(root: Path, s: LadderSettings, bots: list[str]) -> tuple[int, str]:
    """Deal-sets per table of the final among ``bots`` for the precision goal, and why."""
    k, n, goal = s.base.seats, len(bots), s.precision_elo
    tables_each = math.comb(n - 1, k - 1)
    seatings = schedule.seatings_per_set(replace(s.base, bots=tuple(BotSpec(b, "random") for b in bots)))
    ratings = rate([g.entry for g in ladder_games(root)])
    needs = [r.deal_sets * (r.plus_minus / goal) ** 2 for b in bots
             if (r := ratings.get(b)) is not None and r.plus_minus is not None and r.deal_sets >= 2]
    if needs:
        sets_each = statistics.median(needs)
        how = f"the ladder's intervals ({len(needs)} finalist(s)) need {sets_each:.0f} deal-set(s) each"
    else:
        comparisons = 4 * (Z95 * ELO_SCALE / goal) ** 2
        sets_each = comparisons / (seatings * (k - 1))
        how = f"no interval yet: even pairs need {comparisons:.0f} comparisons, {sets_each:.0f} deal-set(s) each"
    per_table = max(1, math.ceil(sets_each / tables_each))
    capped = min(per_table, s.max_deal_sets)
    cap = f", capped at max_deal_sets = {s.max_deal_sets}" if capped < per_table else ""
    return capped, (f"±{goal:g} Elo: {how}; {tables_each} table(s) per finalist, so {capped} deal-set(s) "
                    f"per table{cap}")


def plan(root: Path, top: int | None = None) -> FinalPlan:
    s = load(root)
    n = top or s.final_top
    board = [row for row in snapshot(root)["leaderboard"] if row["status"] == "active"]
    bots = [f"{row['entrant']}.v{row['version']}" for row in board[:n]]
    if len(bots) < max(2, s.base.seats):
        raise LadderError(f"the final needs at least {max(2, s.base.seats)} active versions; the ladder has {len(bots)}")
    sets, why = size(root, s, bots)
    t = _tournament(root, s, bots, sets)
    return FinalPlan(tuple(bots), sets, schedule.total_games(t), why)


def _tournament(root: Path, s: LadderSettings, bots: list[str], deal_sets: int) -> Tournament:
    entrants = registry(root)
    specs = []
    for bot in bots:
        name, version = split_bot_id(bot)
        v = next(x for x in entrants[name] if x["version"] == version)
        cwd = (version_dir(root, name, version) / "bot").relative_to(root).as_posix()
        specs.append(BotSpec(name=bot, command=v["command"], cwd=cwd, transport=v.get("transport", "zmq"), limits=s.limits))
    return replace(s.base, name=f"{s.base.name}-final", bots=tuple(specs), format="round_robin", deal_sets=deal_sets,
                   base_dir=str(root), output=str(root / FINAL), max_tables=None, challengers=(), history=(), games=None)


def play_final(root: Path, top: int | None = None) -> tuple[FinalPlan | None, int, bool]:
    """Freeze the ladder and play (or resume) its final: (the plan when new, games played, interrupted)."""
    from arena.tournament.runner import BotProblems, RunError, run

    require_ladder(root)
    with locked(root):
        if state(root) == "open":
            set_state(root, "frozen")
    folder = root / FINAL
    if (folder / "tournament.toml").exists() and read(folder).entries:
        t, fp = read_resolved(folder), None
        resume = True
    else:
        shutil.rmtree(folder, ignore_errors=True)
        fp = plan(root, top)
        t, resume = _tournament(root, load(root), list(fp.bots), fp.deal_sets), False
    try:
        summary = run(t, folder, resume=resume)
    except BotProblems as e:
        raise LadderError(f"the final cannot start: {'; '.join(e.problems)}") from None
    except RunError as e:
        raise LadderError(f"the final stopped: {e}") from None
    if not summary.interrupted and len(read(folder).entries) >= schedule.total_games(t):
        with locked(root):
            set_state(root, "final")
    return fp, summary.played, summary.interrupted
