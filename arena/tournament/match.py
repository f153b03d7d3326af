"""``arena match A B``: duplicate pairs between two bots until a sequential test decides.

Owns the sequential match (docs/ARCHITECTURE.md section 5).  A match is an
ordinary tournament written to a results folder and played by the tournament
runner, so the journal, the secret key, ``--resume``, the sandbox, restarts and
``arena standings`` work as for any tournament; no new way of playing games.
Heads-up without opponents it is a two-bot round robin with seating ``all``
(each deal-set is the deal played twice with the seats swapped); with
``--opponents`` at 2 to 6 seats it is the ``match`` format of
``arena.tournament.schedule`` (each deal-set is A in seat s with the others,
then B in the same seat with the same others on the same deal).  Either way
the games of deal-set j are indices 2j (A's) and 2j+1 (B's twin), and that
twin is the pair: its score difference (A's margin over its table minus B's)
feeds the margin test, its placings the pentanomial (``arena.tournament.sprt``).
After each game the runner journals, the match counts it and, once the test
accepts H0 or H1, stops the run by raising ``Decided`` out of the runner's
progress callback: the runner stops its workers and their bots as on any
error.  The final verdict is recounted from the whole journal through the usual
checks, with the estimate corrected for the stop (``arena.tournament.poststop``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tomli_w

from arena.settings import BotSpec, TimeControl
from arena.tournament import poststop, schedule, sprt
from arena.tournament.config import MAX_GAMES, ConfigError, Tournament, validate_text
from arena.tournament.journal import JournalEntry, check, journal_path, read
from arena.tournament.runner import RunSummary, run
from arena.tournament.sprt import H0, H1, Estimate, Sprt, estimate

MARGIN, PENTA = "margin", "penta"
TESTS = (MARGIN, PENTA)


def tournament(a: BotSpec, b: BotSpec, variant: str, max_pairs: int, time: TimeControl, out: Path,
               sandbox: bool = True, concurrency: int = 1, base_dir: Path | None = None,
               seats: int = 2, opponents: Sequence[BotSpec] = ()) -> tuple[Tournament | None, list[ConfigError]]:
    """The tournament of a match, checked like any tournament file (every problem at once)."""
    data = {
        "name": f"match-{a.name}-vs-{b.name}".replace("/", "_"),
        "variant": variant, "seats": seats, "deal_sets": max_pairs,
        "concurrency": concurrency, "output": str(out), "sandbox": sandbox, "records": True,
        "max_games": max(MAX_GAMES, 2 * max_pairs), "time": asdict(time),
        "bots": [a.to_data(), b.to_data(), *(o.to_data() for o in opponents)],
    }
    if opponents:
        data |= {"format": schedule.MATCH, "challengers": [a.name, b.name], "seating": "rotate"}
    else:
        data |= {"format": "round_robin", "seating": "all"}
    return validate_text(tomli_w.dumps(data), base_dir=base_dir or Path.cwd(), file="the match")


def margin(entry: JournalEntry, bot: str) -> float | None:
    """``bot``'s total minus the mean of the others', in the direction that wins; None if it did not sit.

    The direction is read off the game itself (penalty scoring: the lowest total places first).
    """
    n = len(entry.seats)
    if bot not in entry.seats or len(entry.totals) != n or len(entry.placings) != n or n < 2:
        return None
    me = entry.seats.index(bot)
    others = [x for i, x in enumerate(entry.totals) if i != me]
    m = entry.totals[me] - sum(others) / len(others)
    best = min(range(len(entry.seats)), key=lambda i: entry.placings[i])
    worst = max(range(len(entry.seats)), key=lambda i: entry.placings[i])
    return -m if entry.totals[best] < entry.totals[worst] else m


def game_score(entry: JournalEntry, bot: str) -> float | None:
    """``bot``'s placing score: the share of the others it placed ahead of (a tie half); None if absent."""
    if bot not in entry.seats or len(entry.placings) != len(entry.seats) or len(entry.seats) < 2:
        return None
    me = entry.seats.index(bot)
    mine = entry.placings[me]
    others = [p for i, p in enumerate(entry.placings) if i != me]
    return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)


@dataclass
class Pairs:
    """The pairs of bots ``a`` (game 2j) and ``b`` (game 2j+1), from journal entries in any order."""

    a: str
    b: str = ""
    seats: int = 2
    counts: list[int] = field(default_factory=list)      # placing test: pairs per pair score (sprt.support_of)
    diffs: list[float] = field(default_factory=list)     # margin test: A's margin minus B's, per pair
    games: int = 0
    waiting: dict[tuple[int, int], JournalEntry] = field(default_factory=dict)  # deal-sets with one game in

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (4 * (self.seats - 1) + 1)

    def add(self, entry: JournalEntry) -> bool:
        """Count a game; True when it completed its deal-set's pair."""
        if self.a not in entry.seats and self.b not in entry.seats:
            return False
        self.games += 1
        key = (entry.table, entry.set)
        other = self.waiting.pop(key, None)
        if other is None:
            self.waiting[key] = entry
            return False
        first, second = sorted((entry, other), key=lambda e: e.seating)
        b = self.b or next(x for x in second.seats if x != self.a)   # heads-up: the other bot
        sa, sb = game_score(first, self.a), game_score(second, b)
        ma, mb = margin(first, self.a), margin(second, b)
        if sa is None or sb is None or ma is None or mb is None:
            return False
        self.counts[round((sa + 1.0 - sb) * 2 * (self.seats - 1))] += 1
        self.diffs.append(ma - mb)
        return True

    @property
    def pairs(self) -> int:
        return max(len(self.diffs), sum(self.counts))   # the same when built by add


@dataclass(frozen=True)
class Test:
    """Which test (margin: nElo on score differences; penta: logistic Elo on placings) and its SPRT."""

    kind: str
    sprt: Sprt
    # A and B each against others (--opponents): a pair's placing score is half A's edge over B
    # (A's edge over the field, minus B's, over 2), so the placing test's Elo is twice its logistic Elo
    others: bool = False

    @property
    def unit(self) -> str:
        return "nElo" if self.kind == MARGIN else "Elo"

    @property
    def factor(self) -> float:
        return 0.5 if self.others else 1.0

    def llr(self, pairs: Pairs) -> float:
        t = self.sprt
        if self.kind == MARGIN:
            return float(sprt.margin_llr(pairs.diffs, t.elo0, t.elo1))
        return float(sprt.llr(pairs.counts, t.elo0 * self.factor, t.elo1 * self.factor))

    def placing_estimate(self, counts: Sequence[int]) -> Estimate:
        e, f = estimate(counts), self.factor
        return Estimate(e.pairs, e.score, e.elo / f, None if e.low is None else e.low / f,
                        None if e.high is None else e.high / f, e.los)

    def walk(self, pairs: Pairs) -> tuple[poststop.Design, float, float, float, float] | None:
        """(design, W, c, drift estimate, sd of the pair score) in normalized units; None without spread."""
        t, n = self.sprt, pairs.pairs
        if self.kind == MARGIN:
            _, dhat = sprt.normalized(pairs.diffs)
            d0, d1, scale = sprt.delta_of_nelo(t.elo0), sprt.delta_of_nelo(t.elo1), 1.0
            delta = float(dhat)
        else:
            e = estimate(pairs.counts)
            support = sprt.support_of(len(pairs.counts))
            var = float(sum(c * (x - e.score) ** 2 for c, x in zip(pairs.counts, support))) / max(1, n)
            if var <= 0:
                return None
            scale = math.sqrt(var)
            d0 = (sprt.score_of_elo(t.elo0 * self.factor) - 0.5) / scale
            d1 = (sprt.score_of_elo(t.elo1 * self.factor) - 0.5) / scale
            delta = (e.score - 0.5) / scale
        c = (d0 + d1) / 2.0
        design = poststop.Design(t.upper / (d1 - d0), -t.lower / (d1 - d0), 0)
        return design, n * (delta - c), c, delta, scale

    def elo_of(self, delta: float, scale: float) -> float:
        if self.kind == MARGIN:
            return sprt.nelo_of_delta(delta)
        return sprt.elo_of_score(min(1.0, max(0.0, 0.5 + delta * scale))) / self.factor


@dataclass(frozen=True)
class Report:
    """Where a match stands: the pairs, the LLR against its bounds, the estimates, the verdict if any."""

    a: str
    b: str
    test: Test
    pairs: int
    counts: tuple[int, ...]
    mean_diff: float
    llr: float
    estimate: Estimate | sprt.MarginEstimate
    verdict: str | None
    corrected: tuple[float, float, float] | None = None   # median-unbiased estimate, 95% low, high
    more: float | None = None                             # undecided: expected further pairs at the estimate

    def progress_line(self) -> str:
        t = self.test.sprt
        what = (f"diff {self.mean_diff:+.1f}" if self.test.kind == MARGIN
                else f"penta [{', '.join(str(n) for n in self.counts)}]")
        return (f"pairs {self.pairs:>4}  {what}  {self.test.unit} {_est_text(self.estimate)}  "
                f"LLR {self.llr:+.2f} ({t.lower:+.2f}, {t.upper:+.2f})")

    def _estimates(self) -> str:
        unit = self.test.unit
        naive = f"{unit} {_est_text(self.estimate)}"
        if self.corrected is None:
            stopped = self.verdict is not None and self.test.kind == PENTA
            return f"{naive} naive (biased away from 0 by the stop)" if stopped else naive
        mid, lo, hi = self.corrected
        return (f"{naive} naive; corrected for the sequential stop (median-unbiased) "
                f"{_elo(mid)} (95% {_elo(lo)} to {_elo(hi)})")

    def verdict_line(self, max_pairs: int) -> str:
        t, pairs, unit = self.test.sprt, f"{self.pairs} pair(s)", self.test.unit
        if self.verdict == H1:
            return (f"H1 accepted: {self.a} is stronger than {self.b} (elo1 = {t.elo1:g} {unit} fits better than "
                    f"elo0 = {t.elo0:g}) after {pairs}: LLR {self.llr:.2f} >= {t.upper:.2f}; {self._estimates()}")
        if self.verdict == H0:
            return (f"H0 accepted: {self.a} is not stronger than {self.b} by elo1 = {t.elo1:g} {unit} (elo0 = "
                    f"{t.elo0:g} fits better) after {pairs}: LLR {self.llr:.2f} <= {t.lower:.2f}; {self._estimates()}")
        more = "" if self.more is None else (
            f"; a decision needs about {_count(self.more)} more pair(s) at the current estimate")
        return (f"no decision after {pairs} (--max-pairs {max_pairs}): LLR {self.llr:.2f} is between "
                f"{t.lower:.2f} and {t.upper:.2f}; the data show {self._estimates()}{more}")


def _count(x: float) -> str:
    return "many thousand" if not math.isfinite(x) or x > 1e6 else f"{max(1, round(x)):,}"


def _elo(x: float) -> str:
    return "+inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:+.0f}"


def _est_text(e: Estimate | sprt.MarginEstimate) -> str:
    if e.pairs == 0:
        return "-"
    value = e.nelo if isinstance(e, sprt.MarginEstimate) else e.elo
    interval = "no interval" if e.low is None or e.high is None else f"95% {_elo(e.low)} to {_elo(e.high)}"
    return f"{_elo(value)} ({interval})"


def report(pairs: Pairs, b: str, test: Test | Sprt, final: bool = False, max_pairs: int = 0) -> Report:
    """The report of ``pairs``; ``final`` adds the estimate corrected for the stop, or the pairs still needed."""
    if isinstance(test, Sprt):
        test = Test(PENTA, test)
    value = test.llr(pairs)
    verdict = test.sprt.decide(value)
    est: Estimate | sprt.MarginEstimate = (sprt.margin_estimate(pairs.diffs) if test.kind == MARGIN
                                           else test.placing_estimate(pairs.counts))
    mean_diff = sum(pairs.diffs) / len(pairs.diffs) if pairs.diffs else 0.0
    corrected, more = None, None
    walk = test.walk(pairs) if final and pairs.pairs >= 2 else None
    if walk is not None:
        design, w, c, _, scale = walk
        capped = verdict is None and pairs.pairs >= max_pairs
        # the margin test's LLR is exactly linear in the walk, so the walk's stop is the test's; the
        # placing test's exact LLR grows slower than its normal approximation on lopsided pairs (a big
        # effect), and a correction from that approximation is wrong there: it prints the naive one only
        if test.kind == MARGIN and (verdict is not None or capped):
            got = poststop.corrected(design, verdict, pairs.pairs, w)
            mid = got.mu + c
            # the walk has unit steps in units of the estimated sd; estimating it widens the interval of
            # a ratio mean / sd by sqrt(1 + delta^2 / 2) (the delta method), which matters for big effects
            wide = math.sqrt(1.0 + mid * mid / 2.0)
            corrected = (test.elo_of(mid, scale), test.elo_of(mid + (got.low - got.mu) * wide, scale),
                         test.elo_of(mid + (got.high - got.mu) * wide, scale))
        if verdict is None:
            # where the test's own LLR is, in walk units, and the rate it has been moving at (for the
            # margin test exactly the walk and its estimated drift)
            at = value * design.a / test.sprt.upper
            more = poststop.expected_more(at / pairs.pairs, design, at)
    return Report(pairs.a, b, test, pairs.pairs, tuple(pairs.counts), mean_diff, value, est, verdict,
                  corrected, more)


def header_line(t: Tournament, test: Test | Sprt) -> str:
    if isinstance(test, Sprt):
        test = Test(PENTA, test)
    a, b = t.bot_names[:2]
    others = t.bot_names[2:]
    table = (f"{t.seats} seats, both against {', '.join(others)} in the same seat on the same deal"
             if others else "heads-up, seats swapped on the same deal")
    s = test.sprt
    what = (f"margin test: nElo of the pairs' score differences ({a}'s margin minus {b}'s, bounded)"
            if test.kind == MARGIN else f"pentanomial test on placings: logistic Elo of {a} over {b}")
    return (f"match {a} vs {b}, {t.variant}, {table}: up to {t.deal_sets} duplicate pair(s); results in "
            f"{t.output_dir}\n"
            f"{what}; SPRT elo0 {s.elo0:g}, elo1 {s.elo1:g} {test.unit}, alpha {s.alpha:g}, beta {s.beta:g}: "
            f"H1 at LLR >= {s.upper:.2f}, H0 at LLR <= {s.lower:.2f}")


class Decided(Exception):
    """Raised out of the runner's progress callback to stop the run once the SPRT has decided."""


def counted(folder: Path, t: Tournament, skip_bad: bool = False) -> list[JournalEntry]:
    """The journal entries of a match folder that count: BadJournal for lines that cannot, unless ``skip_bad``."""
    if not journal_path(folder).exists():
        return []
    total = schedule.total_games(t)
    return (read(folder, None, total) if skip_bad else check(folder, None, total)).entries


def new_pairs(t: Tournament) -> Pairs:
    a, b = t.bot_names[:2]
    return Pairs(a, b, t.seats)


def tally(entries: Iterable[JournalEntry], a: str | Pairs) -> Pairs:
    pairs = Pairs(a) if isinstance(a, str) else a
    for e in sorted(entries, key=lambda e: e.index):
        pairs.add(e)
    return pairs


def play(t: Tournament, test: Test | Sprt, resume: bool = False, on_pair: Callable[[Report], None] | None = None,
         on_progress: Callable[[RunSummary, JournalEntry], None] | None = None,
         drop_bad_lines: bool = False) -> tuple[Report, RunSummary | None]:
    """Play ``t``'s pairs until the test decides or they run out; the final report and the run's summary.

    A resumed match that the journal already decides plays nothing (the summary is None).
    RunError / BadJournal as ``runner.run``.
    """
    b = t.bot_names[1]
    folder = t.output_dir.resolve()
    # a resumed match goes on from the journal's pairs (a half-finished one included), so it stops
    # after the same pair as a match that was never interrupted
    pairs = tally(counted(folder, t, skip_bad=drop_bad_lines), new_pairs(t)) if resume else new_pairs(t)
    if resume and report(pairs, b, test).verdict is not None:
        return report(pairs, b, test, final=True, max_pairs=t.deal_sets), None

    def progress(summary: RunSummary, entry: JournalEntry) -> None:
        if on_progress is not None:
            on_progress(summary, entry)
        if pairs.add(entry):  # the runner hands over each game once it is journaled (signed)
            now = report(pairs, b, test)
            if on_pair is not None:
                on_pair(now)
            if now.verdict is not None:
                raise Decided(now.verdict)

    summary: RunSummary | None = None
    try:
        summary = run(t, folder, resume=resume, on_progress=progress, drop_bad_lines=drop_bad_lines)
    except Decided:
        pass
    final = report(tally(counted(folder, t), new_pairs(t)), b, test, final=True, max_pairs=t.deal_sets)
    return final, summary
