"""``arena match A B``: duplicate deal-sets between two bots until the SPRT decides.

Owns the sequential match (docs/ARCHITECTURE.md section 5).  A match is an
ordinary two-bot tournament (2 seats, seating ``all``: each deal-set is a
duplicate pair, the same deal with the seats swapped) with ``deal_sets =
max_pairs``, written to a results folder and played by the tournament runner,
so the journal, the secret key, ``--resume``, the sandbox, restarts and
``arena standings`` work as for any tournament; no new way of playing games.
The runner hands out games in index order, two per deal-set.  After each game
it journals, the match reads the journal's new lines (verified under the
folder's key), scores every deal-set whose two games are both in as one
pentanomial pair (``arena.tournament.sprt``) and, once the SPRT accepts H0 or
H1, stops the run by raising ``Decided`` out of the runner's progress
callback: the runner stops its workers and their bots as on any error.  The
final verdict is recounted from the whole journal through the usual checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tomli_w

from arena.settings import BotSpec, TimeControl
from arena.tournament import schedule
from arena.tournament.config import MAX_GAMES, ConfigError, Tournament, validate_text
from arena.tournament.journal import JournalEntry, check, journal_path, read
from arena.tournament.runner import RunSummary, run
from arena.tournament.sprt import H0, H1, OUTCOME_NAMES, OUTCOMES, Estimate, Sprt, estimate, pair_outcome


def tournament(a: BotSpec, b: BotSpec, variant: str, max_pairs: int, time: TimeControl, out: Path,
               sandbox: bool = True, concurrency: int = 1, base_dir: Path | None = None
               ) -> tuple[Tournament | None, list[ConfigError]]:
    """The two-bot tournament of a match, checked like any tournament file (every problem at once)."""
    data = {
        "name": f"match-{a.name}-vs-{b.name}".replace("/", "_"),
        "variant": variant, "seats": 2, "format": "round_robin", "deal_sets": max_pairs, "seating": "all",
        "concurrency": concurrency, "output": str(out), "sandbox": sandbox, "records": True,
        "max_games": max(MAX_GAMES, 2 * max_pairs), "time": asdict(time), "bots": [a.to_data(), b.to_data()],
    }
    return validate_text(tomli_w.dumps(data), base_dir=base_dir or Path.cwd(), file="the match")


def game_score(entry: JournalEntry, bot: str) -> float | None:
    """``bot``'s score in a heads-up game: 1 first, 0.5 a shared place, 0 behind; None if it did not sit."""
    if bot not in entry.seats or len(entry.placings) != len(entry.seats) or len(entry.seats) != 2:
        return None
    me = entry.seats.index(bot)
    mine, theirs = entry.placings[me], entry.placings[1 - me]
    return 1.0 if mine < theirs else 0.0 if mine > theirs else 0.5


@dataclass
class Pairs:
    """Pentanomial counts of bot ``a``, built from journal entries in any order."""

    a: str
    counts: list[int] = field(default_factory=lambda: [0] * OUTCOMES)
    games: int = 0
    waiting: dict[tuple[int, int], float] = field(default_factory=dict)  # deal-sets with one game in

    def add(self, entry: JournalEntry) -> bool:
        """Count a game; True when it completed its deal-set's pair."""
        score = game_score(entry, self.a)
        if score is None:
            return False
        self.games += 1
        key = (entry.table, entry.set)
        first = self.waiting.pop(key, None)
        if first is None:
            self.waiting[key] = score
            return False
        self.counts[pair_outcome(first, score)] += 1
        return True

    @property
    def pairs(self) -> int:
        return sum(self.counts)


@dataclass(frozen=True)
class Report:
    """Where a match stands: the pairs, the LLR against its bounds, the Elo estimate, the verdict if any."""

    a: str
    b: str
    test: Sprt
    counts: tuple[int, ...]
    llr: float
    estimate: Estimate
    verdict: str | None

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def progress_line(self) -> str:
        penta = ", ".join(f"{n}" for n in self.counts)
        return (f"pairs {self.pairs:>4}  penta [{penta}]  Elo {_elo_text(self.estimate)}  "
                f"LLR {self.llr:+.2f} ({self.test.lower:+.2f}, {self.test.upper:+.2f})")

    def verdict_line(self, max_pairs: int) -> str:
        t, pairs = self.test, f"{self.pairs} pair(s)"
        elo = f"Elo {_elo_text(self.estimate)}"
        if self.verdict == H1:
            return (f"H1 accepted: {self.a} is stronger than {self.b} (elo1 = {t.elo1:g} fits better than "
                    f"elo0 = {t.elo0:g}) after {pairs}: LLR {self.llr:.2f} >= {t.upper:.2f}; {elo}")
        if self.verdict == H0:
            return (f"H0 accepted: {self.a} is not stronger than {self.b} by elo1 = {t.elo1:g} (elo0 = {t.elo0:g} "
                    f"fits better) after {pairs}: LLR {self.llr:.2f} <= {t.lower:.2f}; {elo}")
        return (f"no decision after {pairs} (--max-pairs {max_pairs}): LLR {self.llr:.2f} is between "
                f"{t.lower:.2f} and {t.upper:.2f}; {elo}")


def _elo(x: float) -> str:
    return "+inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:+.0f}"


def _elo_text(e: Estimate) -> str:
    if e.pairs == 0:
        return "-"
    interval = "no interval" if e.low is None or e.high is None else f"95% {_elo(e.low)} to {_elo(e.high)}"
    return f"{_elo(e.elo)} ({interval})"


def report(pairs: Pairs, b: str, test: Sprt) -> Report:
    value = test.llr(pairs.counts)
    return Report(pairs.a, b, test, tuple(pairs.counts), value, estimate(pairs.counts), test.decide(value))


def header_line(t: Tournament, test: Sprt) -> str:
    a, b = t.bot_names
    return (f"match {a} vs {b}, {t.variant}: up to {t.deal_sets} duplicate pair(s); results in {t.output_dir}\n"
            f"SPRT elo0 {test.elo0:g}, elo1 {test.elo1:g}, alpha {test.alpha:g}, beta {test.beta:g}: H1 at LLR >= "
            f"{test.upper:.2f}, H0 at LLR <= {test.lower:.2f}\n"
            f"penta = pairs {a} scored {', '.join(OUTCOME_NAMES)} in; Elo = {a} over {b} (logistic), 95% interval")


class Decided(Exception):
    """Raised out of the runner's progress callback to stop the run once the SPRT has decided."""


def counted(folder: Path, t: Tournament, skip_bad: bool = False) -> list[JournalEntry]:
    """The journal entries of a match folder that count: BadJournal for lines that cannot, unless ``skip_bad``."""
    if not journal_path(folder).exists():
        return []
    total = schedule.total_games(t)
    return (read(folder, None, total) if skip_bad else check(folder, None, total)).entries


def tally(entries: Iterable[JournalEntry], a: str) -> Pairs:
    pairs = Pairs(a)
    for e in sorted(entries, key=lambda e: e.index):
        pairs.add(e)
    return pairs


def play(t: Tournament, test: Sprt, resume: bool = False, on_pair: Callable[[Report], None] | None = None,
         on_progress: Callable[[RunSummary, JournalEntry], None] | None = None,
         drop_bad_lines: bool = False) -> tuple[Report, RunSummary | None]:
    """Play ``t``'s pairs until the SPRT decides or they run out; the final report and the run's summary.

    A resumed match that the journal already decides plays nothing (the summary is None).
    RunError / BadJournal as ``runner.run``.
    """
    a, b = t.bot_names
    folder = t.output_dir.resolve()
    # a resumed match goes on from the journal's pairs (a half-finished one included), so it stops
    # after the same pair as a match that was never interrupted
    pairs = tally(counted(folder, t, skip_bad=drop_bad_lines), a) if resume else Pairs(a)
    if resume:
        done = report(pairs, b, test)
        if done.verdict is not None:
            return done, None

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
    final = report(tally(counted(folder, t), a), b, test)
    return final, summary
