"""The tournament schedule: which bots play which game, in which seats, with which deal.

Owns the tables of both formats and duplicate play (docs/ARCHITECTURE.md
section 5).  Round robin: tables are the k-combinations of the N bots in
lexicographic order (or, with ``max_tables`` below C(N, k), a seeded balanced
subset).  Gauntlet: with C challengers and the M other bots (the pool), every
table holds exactly ONE challenger and k-1 pool bots, so challengers never
meet and each faces the same field: table t is challenger ``t % C`` with the
``t // C``-th (k-1)-combination of the pool, C * C(M, k-1) tables; with
``max_tables`` below that, the pool combinations are a seeded balanced subset
shared by every challenger (challenger i gets the first ones, in turn).  A
table's bots are always in file order.  Each table plays ``deal_sets`` sets;
each set is replayed under every seating of the design
(``all`` permutations, ``williams`` balanced Latin square, ``rotate``) with the
SAME deal seed.  The unit of work is one game with a global index::

    index = ((table * deal_sets) + set) * seatings_per_set + seating

``game_at`` computes any game by index arithmetic (combinatorial unranking), so
nothing is materialized even when C(N, k) is astronomically large (only a
``max_tables`` subset is built, and it has ``max_tables`` entries).

Leagues (``swiss``, ``adaptive``) are played in rounds of ``n // k`` tables, every bot seated
once a round (``n % k`` sit out), until the ``games`` budget (rounded up to whole rounds).  Table
number ``round * tables_per_round + t`` is table t of its round, so the index formula above holds
unchanged; but a round's tables are chosen from the games of the rounds before it
(``round_tables``, with ``arena.tournament.matchmaking``), so ``game_at`` of a league game needs
them passed in, and the runner gives out a round only once every game before it is journaled.

The tournament ``seed`` decides the schedule (which tables, in which order), so
the same file gives the same schedule in any folder.  What bots must not
predict comes from the results folder's secret key instead (``arena.integrity``):
the deal seed of each (table, set), and a game id that is opaque (it shows
neither seed, table, set nor seating).

With ``twin_suits = "permute"`` every seating of a set is also dealt under its
own suit map (``arena.rules.suits``): the same deal with the suits renamed,
so a bot that remembers one game of the set does not find its cards in the
next.  The 24 suit maps are put in a keyed random order per (table, set) and
seating i takes the i-th, so up to 24 seatings of a set never share one.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from arena.integrity import derive_hex, derive_int
from arena.rules.suits import ALL_SUIT_MAPS, SuitMap
from arena.tournament import growth
from arena.tournament.designs import balanced_subset, seatings, unrank_combination

if TYPE_CHECKING:
    from arena.tournament.journal import JournalEntry


class ScheduleSource(Protocol):
    """What the schedule needs of a tournament (``config.Tournament`` has it all)."""

    @property
    def bot_names(self) -> tuple[str, ...]: ...
    @property
    def seats(self) -> int: ...
    @property
    def deal_sets(self) -> int: ...
    @property
    def seating(self) -> str: ...
    @property
    def max_tables(self) -> int | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def twin_suits(self) -> str: ...


ROUND_ROBIN, GAUNTLET, MATCH = "round_robin", "gauntlet", "match"
LEAGUES = ("swiss", "adaptive")
RoundTables = Sequence[tuple[str, ...]]


def is_match(t: ScheduleSource) -> bool:
    """``arena match --opponents``: one table (A, B and the others); set j is A's game then B's twin.

    Game ``2 j + h`` deals set j; ``h = 0`` seats A, ``h = 1`` seats B, in seat ``j % seats``, the
    others in the remaining seats in file order from the next seat on: the same seats, opponents and
    deal for both, which is the duplicate pair ``arena.tournament.match`` compares.
    """
    return getattr(t, "format", ROUND_ROBIN) == MATCH


def _match_spec(t: ScheduleSource, index: int, key: bytes) -> GameSpec:
    deal_set, half = divmod(index, 2)
    bots, k = t.bot_names, t.seats
    seat = deal_set % k
    seats = [""] * k
    seats[seat] = bots[half]
    for i, other in enumerate(bots[2:]):
        seats[(seat + 1 + i) % k] = other
    return GameSpec(index=index, table=0, bots=bots, set=deal_set, seating=half, seats=tuple(seats),
                    deal_seed=deal_seed(key, 0, deal_set), game_id=game_id(key, index),
                    suit_map=suit_map_of(key, 0, deal_set, half) if t.twin_suits == "permute" else None)


def is_league(t: ScheduleSource) -> bool:
    """A format whose tables are chosen round by round from the results (swiss, adaptive)."""
    return getattr(t, "format", ROUND_ROBIN) in LEAGUES


def tables_per_round(t: ScheduleSource) -> int:
    return len(t.bot_names) // t.seats


def games_per_round(t: ScheduleSource) -> int:
    return tables_per_round(t) * games_per_table(t)


def rounds(t: ScheduleSource) -> int:
    """A league's rounds: its ``games`` budget rounded up to whole rounds."""
    budget = int(getattr(t, "games", None) or 0)
    return max(1, -(-budget // games_per_round(t)))


def round_of(t: ScheduleSource, index: int) -> int:
    """The round a league's game ``index`` belongs to."""
    return index // games_per_round(t)


def _gauntlet(t: ScheduleSource) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(challenger positions, pool positions) in the bot list for a gauntlet; None for a round robin.

    A source without ``format`` (one that predates gauntlets) is a round robin.
    """
    if getattr(t, "format", ROUND_ROBIN) != GAUNTLET:
        return None
    chosen = set(getattr(t, "challengers", ()))
    names = t.bot_names
    return (tuple(i for i, b in enumerate(names) if b in chosen), tuple(i for i, b in enumerate(names) if b not in chosen))


@dataclass(frozen=True, slots=True)
class GameSpec:
    """One scheduled game."""

    index: int                # global game index, 0 .. total_games - 1
    table: int                # table index
    bots: tuple[str, ...]     # the table's bots (file order)
    set: int                  # deal-set number within the table
    seating: int              # seating number within the set
    seats: tuple[str, ...]    # bot name in seat 0 .. k-1
    deal_seed: int            # same for every seating of a (table, set): duplicate play; from the key
    game_id: str              # opaque: from the key and the index only
    suit_map: SuitMap | None = None  # twin_suits = "permute": the suits of this seating's decks; None: as shuffled


# -- tables -----------------------------------------------------------------------

def full_table_count(t: ScheduleSource) -> int:
    """Tables of the whole format, before ``max_tables``."""
    if is_league(t):
        return rounds(t) * tables_per_round(t)
    if is_match(t):
        return 1
    g = _gauntlet(t)
    if g is None:
        return math.comb(len(t.bot_names), t.seats)
    challengers, pool = g
    return len(challengers) * math.comb(len(pool), t.seats - 1)


def table_count(t: ScheduleSource) -> int:
    full = full_table_count(t)
    return full if t.max_tables is None else min(full, t.max_tables)


def table_at(t: ScheduleSource, table: int, round_tables: RoundTables | None = None) -> tuple[str, ...]:
    """The bot names of table ``table`` (file order); a league's needs its round's ``round_tables``."""
    n, k = len(t.bot_names), t.seats
    if not 0 <= table < table_count(t):
        raise IndexError(table)
    if is_league(t):
        if round_tables is None:
            raise ValueError("a league's tables come from the games before their round: pass round_tables")
        return tuple(round_tables[table % tables_per_round(t)])
    if is_match(t):
        return t.bot_names
    capped = t.max_tables is not None and t.max_tables < full_table_count(t)
    g = _gauntlet(t)
    if g is not None:
        challengers, pool = g
        nth = table // len(challengers)
        if capped:
            assert t.max_tables is not None
            shared = -(-t.max_tables // len(challengers))  # the most any challenger gets
            others = balanced_subset(len(pool), k - 1, shared, t.seed)[nth]
        else:
            others = unrank_combination(len(pool), k - 1, nth)
        combo = tuple(sorted((challengers[table % len(challengers)],) + tuple(pool[i] for i in others)))
    elif capped:
        assert t.max_tables is not None
        combo = balanced_subset(n, k, t.max_tables, t.seed)[table]
    else:
        combo = unrank_combination(n, k, table)
    return tuple(t.bot_names[i] for i in combo)


def _tables(t: ScheduleSource) -> Iterator[tuple[str, ...]]:
    n, k = len(t.bot_names), t.seats
    if is_league(t):
        raise ValueError("a league's tables are chosen round by round from the journal; use game_at")
    if _gauntlet(t) is not None or is_match(t):
        for table in range(table_count(t)):
            yield table_at(t, table)
        return
    if t.max_tables is not None and t.max_tables < math.comb(n, k):
        combos: Iterator[tuple[int, ...]] = iter(balanced_subset(n, k, t.max_tables, t.seed))
    else:
        combos = itertools.combinations(range(n), k)
    for combo in combos:
        yield tuple(t.bot_names[i] for i in combo)


# -- games ------------------------------------------------------------------------

def deal_seed(key: bytes, table: int, deal_set: int) -> int:
    """A 63-bit deal seed of (table, set) under the tournament's secret key; independent of the seating."""
    return derive_int(key, "deal", table, deal_set)


def game_id(key: bytes, index: int) -> str:
    """The id bots are told for game ``index``: unique in the tournament, and meaningless without the key."""
    return "g" + derive_hex(key, "game-id", index)


@lru_cache(maxsize=256)
def suit_order(key: bytes, table: int, deal_set: int) -> tuple[SuitMap, ...]:
    """The 24 suit maps in an order that only the key's holder can compute, one order per (table, set)."""
    return tuple(sorted(ALL_SUIT_MAPS, key=lambda m: derive_hex(key, "suits", table, deal_set, *m)))


def suit_map_of(key: bytes, table: int, deal_set: int, seating: int) -> SuitMap:
    """The suit map of a seating: distinct for the first 24 seatings of a set, then repeating."""
    order = suit_order(key, table, deal_set)
    return order[seating % len(order)]


def games_per_table(t: ScheduleSource) -> int:
    return t.deal_sets * _per_set(t)


def total_games(t: ScheduleSource) -> int:
    if getattr(t, "history", ()):
        return growth.total_games(t, _tables_of, _per_set)
    return table_count(t) * games_per_table(t)


def _tables_of(t: ScheduleSource) -> tuple[tuple[str, ...], ...]:
    return tuple(_tables(t))


def _per_set(t: ScheduleSource) -> int:
    return 2 if is_match(t) else len(seatings(t.seats, t.seating))


def seatings_per_set(t: ScheduleSource) -> int:
    """Games per deal-set: the seating design's, or a match's two (A's game and B's twin)."""
    return _per_set(t)


def _spec(key: bytes, index: int, table: int, bots: tuple[str, ...], deal_set: int, seating: int,
          perm: Sequence[int], twin_suits: str) -> GameSpec:
    return GameSpec(
        index=index, table=table, bots=bots, set=deal_set, seating=seating,
        seats=tuple(bots[p] for p in perm), deal_seed=deal_seed(key, table, deal_set),
        game_id=game_id(key, index),
        suit_map=suit_map_of(key, table, deal_set, seating) if twin_suits == "permute" else None,
    )


def game_at(t: ScheduleSource, index: int, key: bytes, round_tables: RoundTables | None = None) -> GameSpec:
    """Game number ``index`` (0-based) without building the schedule; deal seed and id under ``key``.

    A league's game needs ``round_tables``: ``round_tables(t, round_of(t, index), entries)``.
    """
    if not 0 <= index < total_games(t):
        raise IndexError(f"game index {index} out of range 0..{total_games(t) - 1}")
    perms = seatings(t.seats, t.seating)
    if getattr(t, "history", ()):
        return _grown_spec(t, index, key)
    if is_match(t):
        return _match_spec(t, index, key)
    rest, seating = divmod(index, len(perms))
    table, deal_set = divmod(rest, t.deal_sets)
    return _spec(key, index, table, table_at(t, table, round_tables), deal_set, seating, perms[seating],
                 t.twin_suits)


def round_tables(t: ScheduleSource, r: int, entries: Iterable[JournalEntry]) -> tuple[tuple[str, ...], ...]:
    """The tables of round ``r`` of a league: a function of the games of rounds before ``r`` and the seed.

    ``entries`` may hold more (later games are ignored) but must hold every game before round ``r``.
    """
    from arena.tournament import league_fit, matchmaking

    names = t.bot_names
    before = r * games_per_round(t)
    prev = sorted({e.index: e for e in entries if e.index < before}.values(), key=lambda e: e.index)
    if len(prev) != before:
        raise ValueError(f"round {r} is chosen from the {before} game(s) before it; {len(prev)} are in the journal")
    pos = {b: i for i, b in enumerate(names)}
    games = [tuple(sorted(pos[b] for b in e.seats)) for e in prev]
    seated: list[set[int]] = [set() for _ in range(r)]
    for e in prev:
        seated[round_of(t, e.index)].update(pos[b] for b in e.seats)
    byes = [sum(b not in s for s in seated) for b in range(len(names))]
    idle = [next((i for i, s in enumerate(reversed(seated)) if b in s), r) for b in range(len(names))]
    fit = league_fit.league_fit(prev, names) if prev else None
    chosen = matchmaking.league_round(str(getattr(t, "format", "")), len(names), t.seats, t.seed, r, fit, games, byes,
                                      top=getattr(t, "top", None), top_order=bool(getattr(t, "top_order", False)),
                                      uneven=bool(getattr(t, "uneven", False)),
                                      idle=idle, table_games=games_per_table(t))
    return tuple(tuple(names[i] for i in table) for table in chosen)


def _grown_spec(t: ScheduleSource, index: int, key: bytes) -> GameSpec:
    """A game of a tournament that grew (``arena.tournament.growth``: one block of indices per generation)."""
    generation, src, table, number, deal_set, seating = growth.locate(t, index, _tables_of, _per_set)
    spec = _spec(key, index, number, table_at(src, table), deal_set, seating,
                 seatings(t.seats, t.seating)[seating], t.twin_suits)
    if generation == 0:
        return spec
    return dataclasses.replace(spec, deal_seed=growth.deal_seed(key, generation, table, deal_set))


def iter_games(t: ScheduleSource, key: bytes) -> Iterator[GameSpec]:
    """Every game in index order, lazily; deal seeds and ids under ``key``."""
    if getattr(t, "history", ()) or is_match(t):
        yield from (game_at(t, i, key) for i in range(total_games(t)))
        return
    perms = seatings(t.seats, t.seating)
    index = 0
    for table, bots in enumerate(_tables(t)):
        for deal_set in range(t.deal_sets):
            for seating, perm in enumerate(perms):
                yield _spec(key, index, table, bots, deal_set, seating, perm, t.twin_suits)
                index += 1
