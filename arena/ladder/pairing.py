"""Who plays in the ladder's next batch, and at which tables (pure: a function of its arguments).

A batch seats each chosen version once.  Chosen: every active version with fewer than ``new_games``
games (new versions, provisional: they play every batch, fewest games first), then each settled one
with chance ``settled_share`` (so settled versions play less often), up to ``tables_per_batch``
tables.  The tables are an adaptive league round (``arena.tournament.matchmaking.adaptive_round``:
a Swiss round on an order drawn from the league fit's posterior) among the chosen: a version whose
place is uncertain meets the versions it may be confused with, which places it in few games.  The
fit (``league_fit.league_fit``) covers every version that ever played, retired ones too, so the old
games keep anchoring the scale.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from arena.tournament.journal import JournalEntry
from arena.tournament.league_fit import league_fit
from arena.tournament.matchmaking import adaptive_round


def choose(active: Sequence[str], games: dict[str, int], entries: Sequence[JournalEntry], seats: int,
           tables_per_batch: int, new_games: int, settled_share: float, seed: int) -> list[tuple[str, ...]]:
    """The next batch's tables (bot names), or [] when fewer than ``seats`` versions can play."""
    rng = random.Random(f"arena-ladder:{seed}")
    new = sorted((b for b in active if games.get(b, 0) < new_games), key=lambda b: (games.get(b, 0), b))
    settled = [b for b in sorted(active) if games.get(b, 0) >= new_games]
    drawn = [b for b in settled if rng.random() < settled_share]
    rest = [b for b in settled if b not in drawn]
    rng.shuffle(rest)
    cap = tables_per_batch * seats
    chosen = (new + drawn)[:cap]
    while len(chosen) % seats and rest:  # fill the last table from the settled versions not drawn
        chosen.append(rest.pop())
    chosen = chosen[: len(chosen) - len(chosen) % seats]
    if len(chosen) < seats:
        return []
    names = sorted({b for e in entries for b in e.seats} | set(chosen))
    strength, cov = league_fit(entries, names)
    at = [names.index(b) for b in chosen]
    sub_s, sub_c = strength[at], cov[np.ix_(at, at)]
    tables, _out = adaptive_round(sub_s, sub_c, seats, set(), [0] * len(chosen), rng)
    return [tuple(chosen[i] for i in t) for t in tables]
