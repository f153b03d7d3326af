"""The checks of ``arena check-bot`` (the command is in ``arena.cli``): a protocol compliance check for one bot,
in the style of a conformance suite.

The checker is a referee (``BotHost`` + ``Referee``) that plays real games with
the bot and a few special sessions, and reports one line per check::

    PASS handshake: hello in 0.21 s: name 'greedy', versions [1]
    FAIL game basic 2p: illegal: discard: 9D was taken ... -- fix: ...
    ...
    14 passed, 1 failed

The checks, in order:

- ``handshake``: ``hello`` arrives within the start clock, with a name and a
  version the referee speaks (SPEC 2, 11).
- ``game VARIANT Np``: a whole seeded game of each preset asked for (all six
  by default), at 2 seats and at 4 (or the preset's maximum), against the
  built-in greedy bot: every reply is well-formed, legal, on time, and echoes
  its ``game``/``seq``.  Any failure forfeits the game at once, so a broken
  bot is reported quickly.  A bot that timed out is reported once, by that
  timeout: its late replies are awaited (up to ``LATE_WAIT_*``) and dropped
  before the next game, never charged there as ``stale``.
- ``decisions VARIANT``: both decision kinds (draw and play) were asked and
  answered within the clock in that preset; the slowest answer is shown.
- ``illegal-retry``: the checker rejects the bot's first play of a game with an
  ``error`` of kind ``illegal`` and ``retry: true`` (on purpose: the play may
  well be legal), then asks again with a fresh ``seq``; the bot must answer the
  fresh request, legally (SPEC 9).
- ``several-games``: all the games above were played on one connection: the
  bot took each ``game_over`` and the next ``new_game`` in its stride, without
  exiting or being restarted (SPEC 2).
- ``shutdown``: after ``shutdown`` the process exits, with code 0, within a
  few seconds (SPEC 3.2).
- ``output``: a ZeroMQ bot's output (stdout and stderr, captured to its log)
  stays well under the log cap; a stdio bot's stdout carries only JSON
  messages, one per line (SPEC 14).
- ``version-refusal``: in a second session the checker answers the bot's
  ``hello`` with an ``error`` of kind ``version`` (as a referee that only
  speaks a future version would): the bot must exit by itself within a few
  seconds instead of hanging or spinning; the spec asks for a non-zero code.

Every session launches the bot through ``BotHost.start``, as a tournament does
(the version-refusal session with ``welcome=False``, to answer the hello
itself).  Every bot process is killed on every exit path (``BotHost.close``).  The logs
of a check that failed are kept, and their folder is printed.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.failures import GONE, KINDS
from arena.referee import wire
from arena.referee.channel import Closed, Line
from arena.referee.entries import Failure
from arena.referee.game import Answered, Failed, GameResult, Outcome, Referee, SeatState
from arena.referee.host import BotHost, Peer
from arena.referee.launch import LOG_CAP_BYTES, log_path, rotated
from arena.rules.options import RulesError, resolve
from arena.rules.presets import PRESETS
from arena.settings import BUNDLED_BOTS, TRANSPORTS, BotSpec, FailurePolicy, TimeControl
from protocol.messages import PROTOCOL_VERSION, Draw, Error, MessageError, Play, decode_from_bot, encode

__all__ = ["Check", "CheckError", "Report", "check_bot"]

BOT_NAME = "bot"  # the seat's label (log file bot.log); the bot's own name comes from its hello
OUTPUT_LIMIT = LOG_CAP_BYTES // 2  # a bot writing more than this in a check would lose logs in a tournament
SHUTDOWN_S = 3.0  # "shortly after" (SPEC 3.2): room for a loaded machine and the gate's relay
VERSION_EXIT_S = 3.0
OPPONENT_START_MS = 30_000  # the built-in opponents' start clock, whatever the bot's
REJECT_REASON = ("compliance check: this play is rejected on purpose (it may well be legal) to check that you "
                 "recover: answer the fresh request that follows, with its new seq (SPEC 9)")

# Every failure ends the bot's game at once (a broken bot is reported fast); stale replies are logged.
CHECK_POLICY = FailurePolicy(timeout="forfeit", crash="forfeit", disconnect="forfeit", illegal="forfeit",
                             malformed="forfeit", oversized="forfeit", stale="retry", token="retry",
                             resource="forfeit", strikes=0)
RETRY_POLICY = FailurePolicy(timeout="forfeit", crash="forfeit", disconnect="forfeit", illegal="retry",
                             malformed="forfeit", oversized="forfeit", stale="retry", token="retry",
                             resource="forfeit", strikes=1)

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


class _CheckReferee(Referee):
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


class _Checker:
    def __init__(self, command: str, variants: list[str], transport: str, seed: int, decision_ms: int,
                 start_ms: int, out: Callable[[str], None], log_dir: Path, sandbox: bool = True) -> None:
        self.spec = BotSpec(name=BOT_NAME, command=command, transport=transport)
        self.variants = variants
        self.transport = transport
        self.seed = seed
        self.time = TimeControl(start_ms=start_ms, decision_ms=decision_ms, grace_ms=50)
        self.out = out
        self.log_dir = log_dir
        self.report = Report(command, transport, variants)
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

    # -- the whole run ----------------------------------------------------------------------
    def run(self) -> Report:
        host = BotHost(self.time, self.log_dir / "session", sandbox=self.sandbox)
        said_hello = False
        try:
            bot = host.add(self.spec)
            said_hello = self.check_handshake(host, bot)
            if bot.ready:
                self.check_games(host, bot)
                self.check_illegal_retry(host, bot)
                self.check_several_games(bot)
                self.check_shutdown(host, bot)
                self.check_output(bot)
            else:
                for name in ["games", "illegal-retry", "several-games", "shutdown", "output"]:
                    self.emit(name, None, "not run: the handshake failed")
        finally:
            host.close("the compliance check is done")
        if said_hello:
            self.check_version_refusal()
        else:
            self.emit("version-refusal", None, "not run: the bot never said hello")
        return self.report

    # -- handshake ----------------------------------------------------------------------------
    def check_handshake(self, host: BotHost, bot: Peer) -> bool:
        """Start the bot; returns whether a hello arrived at all (even one that was refused)."""
        t0 = time.monotonic()
        ok = host.start(bot)
        elapsed = time.monotonic() - t0
        if ok:
            assert bot.hello is not None
            h = bot.hello
            self.report.bot_name = h.name
            versions = h.versions or [h.v]
            author = f", author {h.author!r}" if h.author else ""
            self.emit("handshake", True, f"hello in {elapsed:.2f} s: name {h.name!r}, versions {versions}{author}")
            return True
        kind, reason = bot.problem or ("timeout", "no hello")
        if "no common protocol version" in reason:
            self.emit("handshake", False, f"{reason} -- fix: list {PROTOCOL_VERSION} in hello.versions "
                                          f"(and write hello.v = {PROTOCOL_VERSION}) (SPEC 2, 11)")
            return True
        if kind == "token":
            fix = ("set the DEALER's routing id (ZMQ_ROUTING_ID) to the token before connect, and send hello "
                   "right after connecting (SPEC 1, 2)")
        elif kind == "crash":
            fix = "the bot must keep running; start it by hand with --endpoint/--token to see the error"
        elif self.transport == "stdio":
            fix = ("write hello as the first line on stdout, end it with a newline and flush; "
                   f"within the start clock of {self.time.start_ms} ms (SPEC 2, 14)")
        else:
            fix = (f"send hello as the first message, within the start clock of {self.time.start_ms} ms, on a "
                   "DEALER connected to the endpoint with the routing id set to the token (SPEC 1, 2)")
        self.emit("handshake", False, f"{reason} -- fix: {fix}{self.log_hint(bot)}")
        return False

    # -- games --------------------------------------------------------------------------------
    def _opponents(self, host: BotHost, opponents: list[Peer], n: int) -> list[Peer]:
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

    def _ensure_bot(self, host: BotHost, bot: Peer) -> bool:
        if bot.ready and bot.alive():
            return True
        return host.start(bot)

    def _play(self, host: BotHost, bot: Peer, opponents: list[Peer], variant: str, n: int, seat: int, seed: int,
              policy: FailurePolicy, reject_first_play: bool = False) -> tuple[_CheckReferee, GameResult, list[Failure]]:
        rules = resolve(variant)
        others = self._opponents(host, opponents, n - 1)
        peers = list(others)
        peers.insert(seat, bot)
        self.games_played += 1
        game_id = f"check-{variant}-{n}p-{self.games_played}"
        ref = _CheckReferee(host, peers, rules, seed, game_id, self.time, policy, target=seat,
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

    def _no_restart(self, bot: Peer) -> str:
        return (f"the bot did not start again: {bot.problem[1] if bot.problem else '?'} -- fix: see the handshake "
                f"check{self.log_hint(bot)}")

    def _describe_failure(self, e: Failure, bot: Peer, total: int) -> str:
        where = f" (deal {e.deal})" if e.deal else ""
        more = f"; {total - 1} more failure(s)" if total > 1 else ""
        return f"{e.kind}{where}: {e.reason}{more} -- fix: {self.fix(e.kind)}{self.log_hint(bot)}"

    def check_games(self, host: BotHost, bot: Peer) -> None:
        opponents = self.opponents
        k = 0
        for variant in self.variants:
            lo, hi = PRESETS[variant].players
            sizes = sorted({max(lo, 2), min(4, hi)})
            asked: Counter[str] = Counter()
            answered: Counter[str] = Counter()
            slowest: dict[str, float] = {}
            timeouts: list[Failure] = []
            for n in sizes:
                name = f"game {variant} {n}p"
                seat = 0 if n == 2 else 1
                if not self._ensure_bot(host, bot):
                    self.emit(name, False, self._no_restart(bot))
                    continue
                ref, result, mine = self._play(host, bot, opponents, variant, n, seat, self.seed + k, CHECK_POLICY)
                k += 1
                asked.update(ref.asked)
                answered.update(ref.answered)
                for d, ms in ref.slowest.items():
                    slowest[d] = max(slowest.get(d, 0.0), ms)
                timeouts += [e for e in mine if e.kind == "timeout"]
                if mine:
                    self.emit(name, False, self._describe_failure(mine[0], bot, len(mine)))
                else:
                    place = result.placings[seat]
                    self.emit(name, True, f"a whole game at seat {seat}: {ref.answered['draw']} draws and "
                                          f"{ref.answered['play']} plays, all legal; {result.deals} deal(s), "
                                          f"ended by {result.end_reason}, placed {place} of {n}")
            self._decisions(variant, asked, answered, slowest, timeouts)

    def _decisions(self, variant: str, asked: Counter[str], answered: Counter[str], slowest: dict[str, float],
                   timeouts: list[Failure]) -> None:
        name = f"decisions {variant}"
        limit = self.time.decision_ms
        if timeouts:
            self.emit(name, False, f"{timeouts[0].reason} -- fix: {self.fix('timeout')}")
            return
        missing = [d for d in ("draw", "play") if not answered[d]]
        if missing:
            what = " or ".join(missing)
            self.emit(name, False, f"no {what} request was answered: the bot's games ended at an earlier failure "
                                   "-- fix: see the game checks above")
            return
        slow = max(slowest.values())
        self.emit(name, True, f"answered {answered['draw']} draw and {answered['play']} play requests, "
                              f"slowest {slow:.0f} ms (limit {limit} ms)")

    # -- recovering from an error -------------------------------------------------------
    def check_illegal_retry(self, host: BotHost, bot: Peer) -> None:
        name = "illegal-retry"
        if not self._ensure_bot(host, bot):
            self.emit(name, False, self._no_restart(bot))
            return
        variant = self.variants[0]
        ref, _result, mine = self._play(host, bot, self.opponents, variant, 2, 1, self.seed + 1000, RETRY_POLICY,
                                        reject_first_play=True)
        if ref.rejected_seq is None:
            why = (self._describe_failure(mine[0], bot, len(mine)) if mine
                   else "the bot was never asked to play -- fix: see the game checks above")
            self.emit(name, False, f"no play to reject: {why}")
            return
        at = next(i for i, e in enumerate(mine) if e.reason == REJECT_REASON)
        others = mine[:at] + mine[at + 1 :]
        if not ref.retry_answered:
            e = mine[at + 1] if len(mine) > at + 1 else None
            if e is None:
                detail = "the fresh request was never asked"
                fix = "see SPEC.md section 9"
            else:
                detail = f"{e.kind}: {e.reason}"
                if e.kind in ("crash", "resource"):
                    fix = "an error message is not fatal: log it and keep reading (SPEC 9)"
                else:
                    fix = ("after an error with retry: true a fresh request follows; answer that one, with its "
                           "new seq, not the old one (SPEC 9)")
            self.emit(name, False, f"play seq {ref.rejected_seq} was rejected on purpose and the fresh request seq "
                                   f"{ref.retry_seq} was not answered: {detail} -- fix: {fix}{self.log_hint(bot)}")
            return
        if others:
            e = others[0]
            self.emit(name, False, f"the game with the rejection had another failure: "
                                   f"{self._describe_failure(e, bot, len(others))}")
            return
        self.emit(name, True, f"play seq {ref.rejected_seq} rejected on purpose (error illegal, retry true); the fresh "
                              f"request seq {ref.retry_seq} got a legal answer and the game went on to its end")

    def check_several_games(self, bot: Peer) -> None:
        name = "several-games"
        games = self.games_played
        if self.crashes:
            game, reason = self.crashes[0]
            if game == 1:
                detail = f"the bot left the session in its first game: {reason}"
            else:
                detail = f"game 1 went fine, but in game {game} on the same connection the bot {reason}"
            self.emit(name, False, f"{detail}; it was started {bot.starts} times for {games} games -- fix: a session "
                                   "holds several games (game_over, then another new_game): keep running, on one "
                                   f"connection, until shutdown (SPEC 2){self.log_hint(bot)}")
            return
        if bot.starts > 1:
            self.emit(name, False, f"the bot had to be started {bot.starts} times for {games} games -- fix: keep one "
                                   f"connection for the whole session (SPEC 1, 2){self.log_hint(bot)}")
            return
        self.emit(name, True, f"{games} games on one connection (new_game ... game_over, {games} times), "
                              f"{self.games_with_answers} of them with the bot answering requests")

    # -- the end of the session ---------------------------------------------------------------
    def check_shutdown(self, host: BotHost, bot: Peer) -> None:
        name = "shutdown"
        proc = bot.process
        if proc is None or not proc.alive() or not bot.ready:
            self.emit(name, False, "the bot was not running at the end of the games, so shutdown could not be "
                                   f"checked -- fix: see the failures above{self.log_hint(bot)}")
            return
        host.send(bot, encode(wire.shutdown("the compliance check is done")))
        t0 = time.monotonic()
        host.wait_gone(bot, t0 + SHUTDOWN_S)
        exited = not proc.alive()
        elapsed = time.monotonic() - t0
        if not exited:
            self.emit(name, False, f"still running {SHUTDOWN_S:.0f} s after shutdown -- fix: on shutdown close the "
                                   "socket and exit with code 0; a bot that lingers is killed (SPEC 3.2)")
            return
        code = proc.exit_code()
        if code != 0:
            self.emit(name, False, f"{proc.exit_description()} after shutdown -- fix: exit with code 0 on "
                                   f"shutdown (SPEC 3.2){self.log_hint(bot)}")
            return
        self.emit(name, True, f"exited with code 0 in {elapsed:.2f} s")

    def check_output(self, bot: Peer) -> None:
        name = "output"
        log = log_path(self.log_dir / "session", bot.spec.name)
        # give the log reader a moment to drain what the process wrote last
        time.sleep(0.05)
        size = sum(p.stat().st_size for p in (log, rotated(log)) if p.exists())  # the log rotates at the cap
        what = "stderr" if self.transport == "stdio" else "stdout and stderr"
        if size >= OUTPUT_LIMIT:
            self.emit(name, False, f"the bot wrote {'at least ' if rotated(log).exists() else ''}{size} bytes to "
                                   f"{what} in {self.games_played} games; a bot's log rotates at {LOG_CAP_BYTES} "
                                   f"bytes, keeping only its latest 1-2 MiB and dropping the oldest -- fix: log "
                                   f"less, and to stderr (SPEC 1) (log: {log})")
            return
        if self.transport == "stdio":
            lines, bad, sample = bot.lines, bot.bad_lines, bot.bad_sample or b""
            if bad:
                self.emit(name, False, f"{bad} of {lines} lines on stdout were not JSON messages (first: "
                                       f"{sample.decode('utf-8', 'replace')!r}) -- fix: on the stdio transport stdout "
                                       "carries protocol messages only, one JSON object per line; write logs to "
                                       "stderr (SPEC 14)")
                return
            self.emit(name, True, f"all {lines} lines on stdout were JSON messages; {size} bytes on stderr")
            return
        self.emit(name, True, f"{size} bytes of output (stdout and stderr) in {self.games_played} games, "
                              f"well under the {LOG_CAP_BYTES}-byte log cap")

    # -- a refused handshake ------------------------------------------------------------------
    def check_version_refusal(self) -> None:
        name = "version-refusal"
        host = BotHost(self.time, self.log_dir / "version", sandbox=self.sandbox)
        try:
            peer = host.add(self.spec)
            if not host.start(peer, welcome=False):
                why = peer.problem[1] if peer.problem else f"no hello within {self.time.start_ms} ms"
                self.emit(name, False, f"no hello in a second session: {why} -- fix: say hello first in every "
                                       f"session (SPEC 2) (log: {host.log_path(peer)})")
                return
            hello = peer.hello
            assert hello is not None
            reason = ("no common protocol version: you speak "
                      f"{hello.versions or [hello.v]}, this referee speaks [99] (compliance check)")
            host.send(peer, encode(Error(game=None, seq=None, kind="version", reason=reason, retry=False,
                                         supported_versions=[99])))
            proc = peer.process
            assert proc is not None
            t0 = time.monotonic()
            cpu0 = proc.cpu_seconds()
            host.wait_gone(peer, t0 + VERSION_EXIT_S)
            exited = not proc.alive()
            elapsed = time.monotonic() - t0
            if not exited:
                cpu = (proc.cpu_seconds() - cpu0) / VERSION_EXIT_S
                busy = f", using {cpu:.0%} of a CPU (spinning)" if cpu > 0.5 else " (waiting)"
                self.emit(name, False, f"still running {VERSION_EXIT_S:.0f} s after an error of kind version{busy} "
                                       "-- fix: when an error of kind version or token arrives before welcome, the "
                                       "referee will not talk to you again: exit with a non-zero code (SPEC 2)")
                return
            code = proc.exit_code()
            if code == 0:
                self.emit(name, True, f"exited in {elapsed:.2f} s after an error of kind version (with code 0; the "
                                      "spec asks for a non-zero code, so that scripts see the refusal)")
            else:
                self.emit(name, True, f"{proc.exit_description()}, {elapsed:.2f} s after an error of kind version")
        finally:
            host.close()


def check_bot(command: str, variants: list[str] | None = None, transport: str = "zmq", seed: int = 1,
              decision_ms: int = 2000, out: Callable[[str], None] = print, *, start_ms: int = 10000,
              log_dir: Path | None = None, sandbox: bool = True) -> Report:
    """Run the compliance checks against one bot and print one line per check, then a summary.

    ``command`` is a bundled sample bot's name or a command line.  ``variants``
    are preset names (default: all six).  The logs go to ``log_dir`` (default: a
    temporary folder, removed when every check passed and kept otherwise).
    Raises ``CheckError`` for bad arguments.
    """
    chosen = list(dict.fromkeys(variants or PRESETS))
    for v in chosen:
        if v not in PRESETS:
            raise CheckError(f"unknown preset {v!r}; expected one of {', '.join(PRESETS)}")
        try:
            resolve(v)
        except RulesError as e:  # pragma: no cover - presets always resolve
            raise CheckError(str(e)) from None
    if transport not in TRANSPORTS:
        raise CheckError(f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}")
    if not command.strip():
        raise CheckError("no bot command given")
    if command.startswith("remote:"):
        raise CheckError("check-bot launches the bot itself; give its command line, not remote:NAME")
    if decision_ms < 1 or start_ms < 1:
        raise CheckError("the clocks must be at least 1 ms")
    keep = log_dir is not None
    folder = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="arena-check-"))
    checker = _Checker(command, chosen, transport, seed, decision_ms, start_ms, out, folder, sandbox)
    shown = command if command not in BUNDLED_BOTS else f"{command} (sample bot)"
    out(f"checking {shown} over the {transport} transport: presets {', '.join(chosen)}; seed {seed}; "
        f"{decision_ms} ms per decision")
    t0 = time.monotonic()
    report = checker.report
    try:
        checker.run()
    finally:
        report.elapsed_s = time.monotonic() - t0
        if report.failed or keep:
            report.log_dir = str(folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    name = f" ({report.bot_name!r})" if report.bot_name else ""
    out(f"{report.summary()}{name} in {report.elapsed_s:.1f}s" + (f"; logs in {report.log_dir}" if report.failed else ""))
    return report
