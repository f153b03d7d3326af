"""A tournament that grew: more deal-sets or more bots after games were played (``--resume``).

A results folder's schedule is fixed once games are journaled: every index names one game.  To let an
organiser raise ``deal_sets`` or add bots and play only what is new, the resolved tournament keeps the
schedules it had before as ``history`` (generations, oldest first: the bots and the deal-sets of each),
and the game indices are laid out in blocks, one per generation:

- block 0 is the first generation's schedule, exactly as it was (same indices, tables, deal seeds);
- block g holds the games of generation g that no earlier generation had: for each table of
  generation g (in its own order), the deal-sets from the most an earlier generation gave that table
  (0 for a table with a new bot) up to generation g's ``deal_sets``, each under every seating.

So indices already journaled keep their meaning, and ``--resume`` plays the new blocks.  A table keeps
its number across generations: the new deal-sets of a table whose bots sat together before carry that
table's number (their set numbers are new), and only a table with a new combination of bots gets a
number after every number used so far; so (table, set) stays unique across the folder, which is what
groups duplicate deal-sets in the ratings.  A game of block g > 0 gets a deal seed derived from the key
and (generation, table, set), shared by the set's seatings as in any duplicate set.

Only a round robin or gauntlet without ``max_tables`` grows (a capped subset is a seeded sample that a
larger field would draw differently); ``growth_problem`` says why a change is not growth.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from arena.integrity import derive_int


@dataclass(frozen=True)
class Generation:
    """What the schedule was before a growth: its bots (in file order) and its deal-sets."""

    bots: tuple[str, ...]
    deal_sets: int

    def to_data(self) -> dict[str, Any]:
        return {"bots": list(self.bots), "deal_sets": self.deal_sets}


@dataclass(frozen=True)
class _Source:
    """One generation as the schedule sees a tournament (``schedule.ScheduleSource``)."""

    bot_names: tuple[str, ...]
    seats: int
    deal_sets: int
    seating: str
    max_tables: int | None
    seed: int
    twin_suits: str
    format: str
    challengers: tuple[str, ...]


def generations(t: Any) -> tuple[_Source, ...]:
    """Every generation of ``t``'s schedule, oldest first, the current one last."""
    now = _Source(t.bot_names, t.seats, t.deal_sets, t.seating, t.max_tables, t.seed, t.twin_suits,
                  getattr(t, "format", "round_robin"), tuple(getattr(t, "challengers", ())))
    return tuple(replace(now, bot_names=g.bots, deal_sets=g.deal_sets) for g in t.history) + (now,)


@dataclass(frozen=True)
class _Block:
    tables: tuple[tuple[int, int], ...]  # (table in its generation, first deal-set new in it)
    starts: tuple[int, ...]              # first game of each of those tables within the block
    games: int
    numbers: tuple[int, ...]             # the folder-wide number of each of those tables


Tables = Callable[[Any], Sequence[tuple[str, ...]]]
"""A generation's tables in schedule order (the schedule's own ``table_at``; passed in, so this module
does not import the schedule that uses it)."""
PerSet = Callable[[Any], int]
"""Games per deal-set of a generation (its seatings)."""


@lru_cache(maxsize=8)
def _blocks(gens: tuple[_Source, ...], tables_of: Tables, per_set_of: PerSet) -> tuple[_Block, ...]:
    blocks: list[_Block] = []
    covered: dict[frozenset[str], int] = {}  # deal-sets an earlier generation gave a table of these bots
    number: dict[frozenset[str], int] = {}   # the folder-wide number of the table of these bots
    next_free = 0
    for g, src in enumerate(gens):
        per_set = per_set_of(src)
        tables: list[tuple[int, int]] = []
        starts: list[int] = []
        numbers: list[int] = []
        games = 0
        for i, names in enumerate(tables_of(src)):
            bots = frozenset(names)
            first = covered.get(bots, 0) if g else 0
            if g == 0:  # numbered as it always was
                number.setdefault(bots, i)
                next_free = i + 1
            elif bots not in number:
                number[bots], next_free = next_free, next_free + 1
            if first < src.deal_sets:
                tables.append((i, first))
                starts.append(games)
                numbers.append(i if g == 0 else number[bots])
                games += (src.deal_sets - first) * per_set
            covered[bots] = max(covered.get(bots, 0), src.deal_sets)
        blocks.append(_Block(tuple(tables), tuple(starts), games, tuple(numbers)))
    return tuple(blocks)


def total_games(t: Any, tables_of: Tables, per_set_of: PerSet) -> int:
    return sum(b.games for b in _blocks(generations(t), tables_of, per_set_of))


def locate(t: Any, index: int, tables_of: Tables, per_set_of: PerSet) -> tuple[int, _Source, int, int, int, int]:
    """Game ``index`` as (generation number, the generation, its table there, the table's folder-wide number,
    deal-set, seating)."""
    gens = generations(t)
    rest = index
    for g, block in enumerate(_blocks(gens, tables_of, per_set_of)):
        if rest < block.games:
            src = gens[g]
            at = bisect.bisect_right(block.starts, rest) - 1
            table, first = block.tables[at]
            sets, seating = divmod(rest - block.starts[at], per_set_of(src))
            return g, src, table, block.numbers[at], first + sets, seating
        rest -= block.games
    raise IndexError(f"game index {index} out of range 0..{total_games(t, tables_of, per_set_of) - 1}")


def deal_seed(key: bytes, generation: int, table: int, deal_set: int) -> int:
    """The deal seed of a set of a grown generation (generation 0 keeps ``schedule.deal_seed``)."""
    return derive_int(key, "deal", "grown", generation, table, deal_set)


def grown(old: Any, new: Any) -> Any:
    """``new`` with the schedule history that makes ``old``'s journaled games keep their indices."""
    same = old.deal_sets == new.deal_sets and old.bot_names == new.bot_names
    history = tuple(old.history) if same else tuple(old.history) + (Generation(old.bot_names, old.deal_sets),)
    return replace(new, history=history)


def growth_problem(old: Any, new: Any, compare: Sequence[str]) -> str | None:
    """Why ``new`` is not ``old`` grown (None when it is, or when nothing changed).

    ``compare`` names the top-level settings (of ``to_toml_data``) that must stay the same.
    """
    a, b = old.to_toml_data(), new.to_toml_data()
    differ = [k for k in compare if a.get(k) != b.get(k)]
    if differ:
        return f"{', '.join(differ)} changed; only deal_sets (raised) and bots (added) can change on --resume"
    olds = {bot.name: bot for bot in old.bots}
    gone = [name for name in olds if name not in new.bot_names]
    if gone:
        return f"bot(s) {', '.join(gone)} are no longer in the file; bots can be added, not removed"
    if [n for n in new.bot_names if n in olds] != list(olds):  # [[history]] keeps the file's order
        return "the [[bots]] entries were reordered; new bots can go anywhere, but the others keep their order"
    edited = [bot.name for bot in new.bots if bot.name in olds and bot.to_data() != olds[bot.name].to_data()]
    if edited:
        return f"the [[bots]] entry of {', '.join(edited)} changed"
    if new.deal_sets < old.deal_sets:
        return f"deal_sets went down from {old.deal_sets} to {new.deal_sets}; it can only be raised"
    if (new.deal_sets, new.bot_names) != (old.deal_sets, old.bot_names) and old.max_tables is not None:
        return "a tournament with max_tables cannot grow: its tables are a seeded sample of the whole field"
    if getattr(new, "format", "round_robin") not in ("round_robin", "gauntlet"):
        return f"a {new.format} tournament grows by raising games, not deal_sets or bots"
    return None
