"""The session of ``arena check-bot`` (``arena.referee.compliance`` runs it): what every check shares.

A ``Session`` is the checker's state across its checks: the bot's spec and clocks, the report its
checks write to (``emit``: one ``Check`` a line), the built-in opponents kept running across games,
the games played and how the bot left them; and the referee it plays them with (``CheckReferee``:
it counts the checked seat's decisions and can reject its first play on purpose).  The checks
themselves are ``arena.referee.checks``.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.failures import GONE, KINDS
from arena.referee.channel import Closed, Line
from arena.referee.entries import Failure
from arena.referee.game import Answered, Failed, GameResult, Outcome, Referee, SeatState
from arena.referee.host import BotHost, Peer
from arena.referee.launch import log_path
from arena.rules.options import RuleSet, resolve
from arena.settings import BotSpec, FailurePolicy, Limits, TimeControl
from protocol.codec import decode_from_bot
from protocol.messages import Draw, MessageError, Play

BOT_NAME = "bot"  # the seat's label (log file bot.log); the bot's own name comes from its hello
OPPONENT_START_MS = 30_000  # the built-in opponents' start clock, whatever the bot's
REJECT_REASON = ("compliance check: this play is rejected on purpose (it may well be legal) to check that you "
                 "recover: answer the fresh request that follows, with its new seq (SPEC 9)")

LATE_WAIT_MIN_S, LATE_WAIT_FACTOR = 3.0, 5  # how long a timed-out bot's late replies are awaited between games
_REPLY_OF_GAME = re.compile(r" of game (\S+) while ")  # in the referee's reason for a stale reply

STDIO_HINT = ("; on the stdio transport stdout carries protocol messages only, one JSON object per line, each "
              "ended by a newline and flushed (logs go to stderr)")


class CheckError(ArenaError, RuntimeError):
    """The check itself could not run (bad arguments, the built-in opponents would not start)."""


@dataclass
class Check:
    name: str
    ok: bool | None  # None: skipped (an earlier check it needs failed)
    detail: str

    def line(self) -> str:
        word = {True: "PASS", False: "FAIL", None: "SKIP"}[self.ok]
        return f"{word} {self.name}: {self.detail}" if self.detail else f"{word} {self.name}"


@dataclass
class Report:
    command: str
    transport: str
    variants: list[str]
    bot_name: str | None = None
    checks: list[Check] = field(default_factory=list)
    log_dir: str | None = None
    elapsed_s: float = 0.0

    @property
    def passed(self) -> int:
        return sum(1 for c in self.checks if c.ok is True)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.checks if c.ok is False)

    @property
    def skipped(self) -> int:
        return sum(1 for c in self.checks if c.ok is None)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0

    def get(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.ok is False]

    def summary(self) -> str:
        s = f"{self.passed} passed, {self.failed} failed"
        return s + (f", {self.skipped} skipped" if self.skipped else "")


class CheckReferee(Referee):
    """A referee that counts the checked seat's decisions and can reject its first play on purpose,
    both through the referee's public hook ``on_outcome``."""

    def __init__(self, *args: Any, target: int, reject_first_play: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.target = target
        self.asked: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.slowest: dict[str, float] = {}
        self.reject_first_play = reject_first_play
        self.rejected_seq: int | None = None
        self.retry_seq: int | None = None  # the fresh request that followed the rejection
        self.retry_answered: bool | None = None  # whether that request got a well-formed reply in time

    def on_outcome(self, st: SeatState, decision: str, outcome: Outcome) -> Outcome:
        if st.seat != self.target:
            return outcome
        seq = st.peer.seq  # the request's seq
        if self.rejected_seq is not None and self.retry_seq is None:
            self.retry_seq = seq  # the fresh request that followed the rejection
            self.retry_answered = isinstance(outcome, Answered)
        self.asked[decision] += 1
        if isinstance(outcome, Answered):
            self.answered[decision] += 1
            self.slowest[decision] = max(self.slowest.get(decision, 0.0), outcome.ms)
            if self.reject_first_play and decision == "play" and self.rejected_seq is None:
                self.rejected_seq = seq
                return Failed(self.reject(st, "illegal", REJECT_REASON, seq=seq))
        return outcome


def _first(items: list[Failure]) -> Failure | None:
    return items[0] if items else None


class Session:
    """The checker's state across its checks, and the games it plays with the bot."""

    def __init__(self, command: str, variants: list[str], transport: str, seed: int, decision_ms: int,
                 start_ms: int, out: Callable[[str], None], log_dir: Path, sandbox: bool = True, *,
                 limits: Limits | None = None, clock: TimeControl | None = None,
                 rules: dict[str, RuleSet] | None = None) -> None:
        # limits, clock, rules: a competition's own (arena ladder's door), instead of none, the flags', the presets'
        self.spec = BotSpec(name=BOT_NAME, command=command, transport=transport, limits=limits or Limits())
        self.variants = variants
        self.transport = self.spec.speaks  # a bundled bot is checked on stdio, as it runs
        self.seed = seed
        self.time = clock or TimeControl(start_ms=start_ms, decision_ms=decision_ms, grace_ms=50)
        self.rules = rules or {}
        self.out = out
        self.log_dir = log_dir
        self.report = Report(command, self.transport, variants)
        self.sandbox = sandbox
        self.games_played = 0
        self.games_with_answers = 0
        self.crashes: list[tuple[int, str]] = []  # (game number, how the bot left the session)
        self.opponents: list[Peer] = []  # built-in greedy bots, kept running across games
        self.timed_out_games: set[str] = set()  # games in which a request to the bot timed out
        self.hung = False  # a late reply was awaited once and never came

    # -- reporting -----------------------------------------------------------------------
    def emit(self, name: str, ok: bool | None, detail: str) -> Check:
        check = Check(name, ok, detail)
        self.report.checks.append(check)
        self.out(check.line())
        return check

    def fix(self, kind: str) -> str:
        row = KINDS.get(kind)
        hint = row.fix if row is not None else "see SPEC.md section 9"
        if self.transport == "stdio" and kind in ("timeout", "malformed"):
            hint += STDIO_HINT
        return hint

    def log_hint(self, peer: Peer) -> str:
        return f" (log: {log_path(self.log_dir / 'session', peer.spec.name)})"

    # -- playing a game with the bot ------------------------------------------------------------
    def opponents_for(self, host: BotHost, opponents: list[Peer], n: int) -> list[Peer]:
        while len(opponents) < n:
            opponents.append(host.add(BotSpec(name=f"greedy{len(opponents) + 1}", command="greedy")))
        for p in opponents[:n]:
            if not p.ready or not p.alive():
                host.time = replace(self.time, start_ms=max(self.time.start_ms, OPPONENT_START_MS))
                try:
                    started = host.start(p)
                finally:
                    host.time = self.time
                if not started:
                    raise CheckError(f"the built-in greedy bot did not start: {p.problem[1] if p.problem else '?'}")
        return opponents[:n]

    def ensure_bot(self, host: BotHost, bot: Peer) -> bool:
        if bot.ready and bot.alive():
            return True
        return host.start(bot)

    def play(self, host: BotHost, bot: Peer, opponents: list[Peer], variant: str, n: int, seat: int, seed: int,
             policy: FailurePolicy, reject_first_play: bool = False) -> tuple[CheckReferee, GameResult, list[Failure]]:
        rules = self.rules.get(variant) or resolve(variant)
        others = self.opponents_for(host, opponents, n - 1)
        peers = list(others)
        peers.insert(seat, bot)
        self.games_played += 1
        game_id = f"check-{variant}-{n}p-{self.games_played}"
        ref = CheckReferee(host, peers, rules, seed, game_id, self.time, policy, target=seat,
                           reject_first_play=reject_first_play)
        result = ref.run()
        mine = [e for e in result.failure_log if e.seat == seat and not self._late_to_earlier_game(e)]
        late = {(game_id, seq) for seq in ref.seats[seat].timed_out}
        if late:
            self.timed_out_games.add(game_id)
            self._await_late(host, bot, late)
        if sum(ref.answered.values()):
            self.games_with_answers += 1
        gone = _first([e for e in mine if e.kind in GONE])
        if gone is not None:
            proc = bot.process
            how = proc.exit_description() if proc is not None and not proc.alive() else "disconnected"
            self.crashes.append((self.games_played, f"{how} ({gone.kind}: {gone.reason})"))
        return ref, result, mine

    def _await_late(self, host: BotHost, bot: Peer, late: set[tuple[str, int]]) -> None:
        """Before the next game, wait (a while) for the bot's late replies to the requests that timed out,
        and drop them: a slow bot is reported once, by its timeout, not again as stale (or as a second
        timeout while it still thinks) in the games after it.  A bot that never answers is waited for once."""
        if self.hung:
            return
        deadline = time.monotonic() + max(LATE_WAIT_MIN_S, LATE_WAIT_FACTOR * self.time.decision_ms / 1000)
        while late and bot.alive():
            left = deadline - time.monotonic()
            if left <= 0:
                self.hung = True
                return
            item = host.recv(bot, min(left, 0.05))
            if isinstance(item, Closed):
                return
            if isinstance(item, Line):
                try:
                    msg = decode_from_bot(item.data)
                except MessageError:
                    continue
                if isinstance(msg, (Draw, Play)):
                    late.discard((msg.game, msg.seq))

    def _late_to_earlier_game(self, e: Failure) -> bool:
        """A stale reply that answers a request of an earlier game that timed out (its timeout was reported)."""
        if e.kind != "stale":
            return False
        m = _REPLY_OF_GAME.search(e.reason)
        return m is not None and m.group(1) in self.timed_out_games

    def no_restart(self, bot: Peer) -> str:
        return (f"the bot did not start again: {bot.problem[1] if bot.problem else '?'} -- fix: see the handshake "
                f"check{self.log_hint(bot)}")

    def describe_failure(self, e: Failure, bot: Peer, total: int) -> str:
        where = f" (deal {e.deal})" if e.deal else ""
        more = f"; {total - 1} more failure(s)" if total > 1 else ""
        return f"{e.kind}{where}: {e.reason}{more} -- fix: {self.fix(e.kind)}{self.log_hint(bot)}"
