"""Standings of a results folder: the per-bot table, the pairs and the crosstable.

Owns what ``arena standings DIR`` shows (docs/ARCHITECTURE.md section 5).
``compute(folder)`` reads the journal (and the resolved ``tournament.toml`` when present, for the bot
order, ladder points and whether lower scores are better) and returns a
``Standings`` value, which ``standings_text`` renders; the tests and intervals behind its
columns are in ``standings_stats``.

Columns: Rank, Bot, Rating (``ratings.rating_fit``: ``> 1714`` / ``< 1361`` for
a bot that never lost / never won, a 95% bound; ``?`` after a provisional
bot's), ±95%, Games, 1st%, Avg place, Avg score (final
total), Margin ±CI (own total minus the mean of the table opponents' totals,
sign flipped under penalty scoring so positive is always better), Points (only
with ``ladder_points``), then one column per failure kind that occurred.

Pair (row, column): W-L-D counts the games where both sat at the same table by
placing (row placed higher, lower, or the same; heads-up that is who came
first), LOS is the likelihood that row is the stronger from the per-deal-set
sums of its wins minus losses (``los``: the exact sign-flip test up to 12
deal-sets, the t test beyond; the deal-sets are the independent units), and
the margin is the mean
score margin of row over column.  Margin intervals are 95% normal intervals
with standard errors clustered by deal-set (games of one duplicate set are not
independent).

Order: established bots first, then provisional ones (fewer than 10 games or 5
deal-sets: a 2-game bot never outranks a 40-game one on luck); within each, the
bots that never lost, then the rated ones by rating, then those that never won.
A run in progress says so: the title reads ``41 of 180 games`` and a note says
the run is not complete.

Leagues (``format = "swiss"`` or ``"adaptive"``): an SoS column (strength of
schedule: the mean rating of the opponents a bot met, game by game) beside
1st%, Place and Margin, which depend on those opponents (a note says so), and
a Settled column giving, for each bot, the chance that it is truly ahead of the
next bot in the order (the league fit's normal posterior, covariance included:
``league_fit.league_fit``, ``matchmaking.settled``); csv and json carry them as
``sos`` and ``settled``.  The other formats' output has neither.  An adaptive league
with ``top = K`` adds a Top K% column: the chance a bot is in the top K (the share of
joint posterior draws of the league fit putting it there), shown around the cut
(csv and json: ``top_pct`` for every bot).

Seat advantage (json ``seat_advantage``, and the report): per table size, each
seat's win rate and mean placing, and those of the player who played first (as
the rules engine deals it), with 95% intervals clustered by deal-set.

Nothing is shown as more certain than it is: an interval over fewer than 2
deal-sets, or over values without spread, is not shown ("-"); games a bot
forfeited are left out of its score margins (a forfeit freezes its score, so
its margin would say when it failed, not how it played; a pair where one side
forfeited every game shows "-", and its W-L-D says who won); and adjacent bots
that ``NOISE_TEST`` (a two-sided t test at 5% on their rating difference, with
the deal-set-clustered covariance) does not separate get a note that they are
within noise of each other, naming the test.

Only journal lines that verify under the folder's secret key, with an index in
the schedule and the first result of their game, are counted; any other line
stops ``compute`` with ``BadJournal`` (a sentence per line), unless it is asked
to set such lines aside in ``journal.rejected.jsonl`` (``drop_bad_lines``),
which it then lists among the notes.
"""

from __future__ import annotations

import functools
import itertools
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from arena.failures import FAILURE_KINDS
from arena.tournament import league_fit, ratings, schedule
from arena.tournament.config import RESOLVED_FILE, ConfigFileError, read_resolved
from arena.tournament.journal import (
    LOCK_FILE,
    JournalContents,
    JournalEntry,
    JournalError,
    check,
    lock_folder,
    read,
    set_aside,
    with_seeds,
)
from arena.tournament.standings_stats import (
    NOISE_TEST,
    Clustered,
    Margin,
    los,
    seat_advantage,
    top_chances,
    within_noise,
)


@dataclass(frozen=True)
class Pair:
    """Row bot against column bot over the games they sat at the same table."""

    mean: float | None   # mean score margin of row over column; None when every game had a forfeit in it
    ci: float | None     # as Margin.ci
    games: int           # games the margin is over (games without a forfeit of either)
    wins: int            # games row placed higher than column
    losses: int
    draws: int           # same placing
    los: float | None    # likelihood of superiority of row, from its per-deal-set wins minus losses (``los``)


@dataclass(frozen=True)
class Row:
    rank: int
    bot: str
    rating: float        # the estimate, or for a bound (``bound``) the bound itself
    ci: float | None     # ± half width of the 95% interval; None for a bound or when there is no interval
    games: int
    first_pct: float
    avg_place: float
    avg_score: float
    margin: Margin | None  # None when no game of the bot counts (no games, or all forfeited)
    points: int | None
    failures: dict[str, int]
    rating_low: float | None = 0.0   # the 95% interval itself (equal to the rating when there is none);
    rating_high: float | None = 0.0  # None on the open side of a bound
    settled: float | None = None  # leagues: chance this bot is truly ahead of the next (None for the last)
    bound: str | None = None  # ">": never lost, the rating is a 95% lower bound; "<": never won, an upper one
    provisional: bool = False  # too few games or deal-sets (ratings.Rating.provisional): ranked after the rest
    deal_sets: int = 0         # deal-sets the bot played in
    sos: float | None = None   # leagues: strength of schedule, the mean rating of the opponents it met
    top_pct: float | None = None  # top = K leagues: the chance (0..1) this bot is in the top K


@dataclass
class Standings:
    name: str
    games: int
    ladder_points: bool
    failure_kinds: list[str]
    rows: list[Row]
    crosstable: dict[str, dict[str, Pair | None]]
    problems: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # bad journal lines moved to journal.rejected.jsonl
    within_noise: list[list[str]] = field(default_factory=list)  # runs of adjacent bots whose intervals overlap
    deal_sets: int = 0        # duplicate deal-sets the games came from
    league: bool = False      # swiss or adaptive: the Settled and SoS columns
    top: int | None = None    # an adaptive league's top = K: the Top K% column
    total: int | None = None  # games in the schedule (None without a tournament file): a partial run says so
    seat_advantage: list[dict[str, Any]] = field(default_factory=list)  # per table size (``seat_advantage``)

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.league:  # the other formats' output stays as it was
            del data["league"]
            for row in data["rows"]:
                del row["settled"], row["sos"]
        if self.top is None:
            del data["top"]
            for row in data["rows"]:
                del row["top_pct"]
        for row in data["rows"]:
            if not row["games"]:  # the fit's prior, not a rating
                row["rating"] = row["rating_low"] = row["rating_high"] = None
        return data

    @property
    def partial(self) -> bool:
        return self.total is not None and self.games < self.total

    @property
    def progress(self) -> str:
        """``41 of 180 games`` during a run, ``180 games`` once it is complete."""
        return f"{self.games} of {self.total} games" if self.partial else f"{self.games} games"

    @property
    def notes(self) -> list[str]:
        """What the reader must know to read the tables right: noise, missing intervals, the journal."""
        out = []
        if self.games and self.deal_sets < 2:
            out.append(f"only {self.deal_sets} deal-set was played: there are no intervals, so no difference "
                       "here is shown to be more than luck")
        if self.partial:
            out.append(f"the run is not complete: {self.progress}; the numbers are those of the games so far")
        for run in self.within_noise:
            names = _and(run)
            what = "each other" if len(run) == 2 else "the next in this order"
            out.append(f"{names} are within noise of {what}: {NOISE_TEST} does not separate them")
        bounded = [r.bot for r in self.rows if r.bound and r.games]
        if bounded:
            out.append(f"{_and(bounded)}: no finite rating fits a bot that never lost (or never won) against the "
                       "bots rated below (above) it, so its rating is a 95% lower (upper) bound and the others are "
                       "rated without it")
        provisional = [r.bot for r in self.rows if r.provisional and r.games]
        if provisional:
            out.append(f"? provisional ({', '.join(provisional)}): fewer than {ratings.PROVISIONAL_GAMES} games "
                       f"or {ratings.PROVISIONAL_SETS} deal-sets; ranked after the established bots, their "
                       "intervals are wide for what they have")
        if self.league and self.rows:
            out.append("in a league 1st%, Place and Margin depend on the opponents each bot met (SoS: their mean "
                       "rating); compare bots by Rating")
        return out + self.problems


def _and(names: list[str]) -> str:
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


def _tournament_info(folder: Path) -> dict[str, Any]:
    path = folder / RESOLVED_FILE
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _schedule_size(folder: Path) -> int | None:
    """How many games the folder's tournament has, or None without a tournament file to say."""
    if not (folder / RESOLVED_FILE).exists():
        return None
    try:
        return schedule.total_games(read_resolved(folder))
    except ConfigFileError:
        return None


def counted_lines(folder: Path, drop_bad_lines: bool = False) -> tuple[JournalContents, list[str]]:
    """The journal lines that count, and notes on the bad lines set aside (``drop_bad_lines``);
    BadJournal without it when there are bad lines."""
    total = _schedule_size(folder)
    if not drop_bad_lines:
        return check(folder, None, total), []
    contents = read(folder, None, total)
    if not contents.bad:
        return contents, []
    with _unused(folder):
        dropped = set_aside(folder, read(folder, None, total))
    notes = [f"set aside in journal.rejected.jsonl: {why}" for why in dropped]
    return read(folder, None, total), notes


@contextmanager
def _unused(folder: Path) -> Iterator[None]:
    """Hold the folder's run lock while bad lines are moved; JournalError if a run is using the folder."""
    try:
        f = lock_folder(folder)
    except BlockingIOError:
        raise JournalError(f"{folder} is in use by an `arena run`; set bad lines aside once it has stopped") from None
    except OSError as e:
        raise JournalError(f"cannot lock {folder / LOCK_FILE}: {e.strerror or e}") from None
    with f:
        yield


def compute(folder: str | Path, resamples: int = 0, drop_bad_lines: bool = False) -> Standings:
    """Standings of a results folder (its journal plus its resolved tournament file).

    ``resamples`` is unused (the intervals are analytic since the bootstrap went); kept for its callers."""
    folder = Path(folder)
    info = _tournament_info(folder)
    contents, dropped = counted_lines(folder, drop_bad_lines)
    entries = with_seeds(folder, contents.entries)  # lines carry no deal seed; who played first needs it
    bots_cfg: list[str] = [b["name"] for b in info.get("bots", []) if isinstance(b, dict) and b.get("name")]
    ladder = bool(info.get("ladder_points", False))
    rules = info.get("rules", {})
    sign = -1.0 if isinstance(rules, dict) and rules.get("scoring") == "penalty" else 1.0
    seed = info.get("seed", 0) if isinstance(info.get("seed", 0), int) else 0
    league = info.get("format") in schedule.LEAGUES
    top = info.get("top") if league and isinstance(info.get("top"), int) else None
    st = _standings(str(info.get("name", folder.name)), entries, bots_cfg, ladder, sign, seed, resamples,
                    dropped + contents.problems, league=league, first_seat=_first_seat(folder), top=top)
    st.set_aside = dropped
    st.total = _schedule_size(folder)
    return st


def _first_seat(folder: Path) -> Callable[[int, int], int | None] | None:
    """Who plays first in a game of the folder's rules, from its deal seed, as the rules engine deals it
    (left of the first dealer, RULES 2.2 and 2.6); None without a readable tournament file."""
    try:
        rules = read_resolved(folder).rules
    except (ConfigFileError, OSError):
        return None
    from arena.rules.game import Game

    @functools.cache
    def first(seed: int, seats: int) -> int | None:
        try:
            return Game(rules, seats, seed).current
        except ValueError:  # a table size the rules do not allow (RulesError): no answer rather than a crash
            return None

    return first


def _standings(name: str, entries: list[JournalEntry], bots: list[str], ladder: bool, sign: float, seed: int,
               resamples: int, problems: list[str], league: bool = False,
               first_seat: Callable[[int, int], int | None] | None = None, top: int | None = None) -> Standings:
    # in game order, not journal order: parallel workers finish games in any order, and every sum below
    # must come out the same to the last bit (the same games, the same standings)
    entries = sorted(entries, key=lambda e: e.index)
    names = ratings.bot_order(entries, bots)
    fit = league_fit.league_fit(entries, names) if league and entries else None  # Settled's
    rfit = ratings.rating_fit(entries, names)
    rated = rfit.ratings
    points = ratings.ladder_points(entries) if ladder else {}
    games = dict.fromkeys(names, 0)
    firsts = dict.fromkeys(names, 0)
    place_sum = dict.fromkeys(names, 0.0)
    score_sum = dict.fromkeys(names, 0.0)
    opp_sum = dict.fromkeys(names, 0.0)
    opp_n = dict.fromkeys(names, 0)
    fails: dict[str, dict[str, int]] = {b: {} for b in names}
    margin = {b: Clustered() for b in names}
    pair = {a: {b: Clustered() for b in names if b != a} for a in names}
    wld = {a: {b: [0, 0, 0] for b in names if b != a} for a in names}
    set_sums: dict[str, dict[str, dict[tuple[int, int], float]]] = {a: {b: {} for b in names if b != a} for a in names}
    for e in entries:
        k = len(e.seats)
        cluster = (e.table, e.set)
        placed = len(e.placings) == k
        for s, bot in enumerate(e.seats):
            games[bot] += 1
            for other in e.seats[:s] + e.seats[s + 1:]:
                opp_sum[bot] += rated[other].rating
                opp_n[bot] += 1
            if s < len(e.placings):
                place_sum[bot] += e.placings[s]
                firsts[bot] += e.placings[s] == 1
            if s < len(e.failures):
                for kind, n in e.failures[s].items():
                    fails[bot][kind] = fails[bot].get(kind, 0) + n
            if placed:
                for o, other in enumerate(e.seats):
                    if o != s:
                        mine, theirs = e.placings[s], e.placings[o]
                        wld[bot][other][0 if mine < theirs else 1 if mine > theirs else 2] += 1
                        sums = set_sums[bot][other]
                        sums[cluster] = sums.get(cluster, 0.0) + (mine < theirs) - (mine > theirs)
            if len(e.totals) != k or k < 2:
                continue
            score_sum[bot] += e.totals[s]
            if s in e.forfeited:
                continue  # a forfeit freezes the score: it says when the bot failed, not how it played
            rivals = [o for o in range(k) if o != s and o not in e.forfeited]
            if rivals:
                others = sum(e.totals[o] for o in rivals) / len(rivals)
                margin[bot].add(cluster, sign * (e.totals[s] - others))
            for o in rivals:
                pair[bot][e.seats[o]].add(cluster, sign * (e.totals[s] - e.totals[o]))
    kinds_seen = {kind for f in fails.values() for kind, n in f.items() if n}
    kinds = [k for k in FAILURE_KINDS if k in kinds_seen] + sorted(kinds_seen - set(FAILURE_KINDS))
    # established bots first, then provisional ones (a 2-game bot never outranks a 40-game one on noise); in
    # each, bots that never lost first and ones that never won last (no finite rating), else by rating
    order = sorted(names, key=lambda b: (games[b] == 0, rated[b].provisional, rated[b].order_key(), b))
    rows = []
    for rank, b in enumerate(order, start=1):
        g = games[b]
        r = rated[b]
        rows.append(Row(
            rank=rank, bot=b, rating=r.rating, ci=r.plus_minus, games=g,
            first_pct=100.0 * firsts[b] / g if g else 0.0,
            avg_place=place_sum[b] / g if g else 0.0,
            avg_score=score_sum[b] / g if g else 0.0,
            margin=margin[b].result(),
            points=points.get(b, 0) if ladder else None,
            failures={k: fails[b].get(k, 0) for k in kinds},
            rating_low=r.low, rating_high=r.high, bound=r.bound, provisional=r.provisional, deal_sets=r.deal_sets,
            sos=opp_sum[b] / opp_n[b] if opp_n[b] else None,
        ))
    if fit is not None:
        rows = _with_settled(rows, names, fit)
        if top is not None and top < len(names):
            rows = _with_top(rows, names, fit, top, seed)
    cross = {a: {b: (_pair(pair[a][b], wld[a][b], set_sums[a][b]) if b != a else None) for b in order}
             for a in order}
    deal_sets = len({(e.table, e.set) for e in entries})
    return Standings(name, len(entries), ladder, kinds, rows, cross, list(problems),
                     within_noise=_noise_runs(rows, rfit) if deal_sets >= 2 else [], deal_sets=deal_sets,
                     league=league, seat_advantage=seat_advantage(entries, first_seat),
                     top=top if league and top is not None and top < len(names) else None)


def _with_settled(rows: list[Row], names: list[str], fit: tuple[np.ndarray, np.ndarray]) -> list[Row]:
    """Each row with the chance that its bot is truly ahead of the next row's (the last row: None),
    from the league fit ``fit`` (strengths of ``names`` and their covariance)."""
    from arena.tournament import matchmaking

    pos = {b: i for i, b in enumerate(names)}
    strength, cov = fit
    ahead = matchmaking.settled(strength, cov, [pos[r.bot] for r in rows])
    return [replace(r, settled=ahead[i] if i < len(ahead) else None) for i, r in enumerate(rows)]


def _with_top(rows: list[Row], names: list[str], fit: tuple[np.ndarray, np.ndarray], top: int,
              seed: int) -> list[Row]:
    """Each row with the chance its bot is in the top ``top``: the share of joint draws from the league fit's
    posterior that put it there (seeded, so the same journal shows the same figures)."""
    chance = top_chances(*fit, top, seed)
    pos = {b: i for i, b in enumerate(names)}
    return [replace(r, top_pct=float(chance[pos[r.bot]])) for r in rows]


def _pair(margin: Clustered, wld: list[int], set_sums: dict[tuple[int, int], float]) -> Pair | None:
    wins, losses, draws = wld
    m = margin.result()
    if m is None and wins + losses + draws == 0:
        return None  # never at the same table
    return Pair(m.mean if m else None, m.ci if m else None, m.games if m else 0, wins, losses, draws,
                los(list(set_sums.values())))


def _noise_runs(rows: list[Row], fit: ratings.RatingFit) -> list[list[str]]:
    """Maximal runs of adjacent bots (in rank order) that ``within_noise`` does not separate."""
    runs: list[list[str]] = []
    current = [rows[0].bot] if rows else []
    for upper, lower in itertools.pairwise(rows):
        if lower.games and upper.games and within_noise(fit, upper.bot, lower.bot):
            current.append(lower.bot)
            continue
        if len(current) > 1:
            runs.append(current)
        current = [lower.bot]
    if len(current) > 1:
        runs.append(current)
    return runs


