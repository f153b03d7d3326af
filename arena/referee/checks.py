"""The checks of ``arena check-bot``, one job each, in the order they run (``IN_SESSION``, then
``OWN_SESSION``); ``arena.referee.compliance`` runs them on a ``checks_session.Session``.

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

Each check is a ``BotCheck``: the lines it reports (``names``; said as SKIP, with the
reason, when the check cannot run) and what it does.  The ``IN_SESSION`` checks share one bot
process, started by the handshake, and run only if the handshake passed; the ``OWN_SESSION`` ones
start the bot again, and run if it said hello at all.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from arena.referee import wire
from arena.referee.checks_session import REJECT_REASON, Session
from arena.referee.entries import Failure
from arena.referee.host import BotHost, Peer
from arena.referee.launch import LOG_CAP_BYTES, log_path, rotated
from arena.rules.presets import PRESETS
from arena.settings import FailurePolicy
from protocol.codec import encode
from protocol.messages import PROTOCOL_VERSION

OUTPUT_LIMIT = LOG_CAP_BYTES // 2  # a bot writing more than this in a check would lose logs in a tournament
SHUTDOWN_S = 3.0  # "shortly after" (SPEC 3.2): room for a loaded machine and the gate's relay
VERSION_EXIT_S = 3.0

# Every failure ends the bot's game at once (a broken bot is reported fast); stale replies are logged.
CHECK_POLICY = FailurePolicy(timeout="forfeit", crash="forfeit", disconnect="forfeit", illegal="forfeit",
                             malformed="forfeit", oversized="forfeit", stale="retry", token="retry",
                             resource="forfeit", strikes=0)
RETRY_POLICY = FailurePolicy(timeout="forfeit", crash="forfeit", disconnect="forfeit", illegal="retry",
                             malformed="forfeit", oversized="forfeit", stale="retry", token="retry",
                             resource="forfeit", strikes=1)


# -- handshake ----------------------------------------------------------------------------
def handshake(s: Session, host: BotHost, bot: Peer) -> bool:
    """Start the bot; returns whether a hello arrived at all (even one that was refused)."""
    t0 = time.monotonic()
    ok = host.start(bot)
    elapsed = time.monotonic() - t0
    if ok:
        assert bot.hello is not None
        h = bot.hello
        s.report.bot_name = h.name
        versions = h.versions or [h.v]
        author = f", author {h.author!r}" if h.author else ""
        s.emit("handshake", True, f"hello in {elapsed:.2f} s: name {h.name!r}, versions {versions}{author}")
        return True
    kind, reason = bot.problem or ("timeout", "no hello")
    if "no common protocol version" in reason:
        s.emit("handshake", False, f"{reason} -- fix: list {PROTOCOL_VERSION} in hello.versions "
                                   f"(and write hello.v = {PROTOCOL_VERSION}) (SPEC 2, 11)")
        return True
    if kind == "token":
        fix = ("set the DEALER's routing id (ZMQ_ROUTING_ID) to the token before connect, and send hello "
               "right after connecting (SPEC 1, 2)")
    elif kind == "crash":
        fix = "the bot must keep running; start it by hand with --endpoint/--token to see the error"
    elif s.transport == "stdio":
        fix = ("write hello as the first line on stdout, end it with a newline and flush; "
               f"within the start clock of {s.time.start_ms} ms (SPEC 2, 14)")
    else:
        fix = (f"send hello as the first message, within the start clock of {s.time.start_ms} ms, on a "
               "DEALER connected to the endpoint with the routing id set to the token (SPEC 1, 2)")
    s.emit("handshake", False, f"{reason} -- fix: {fix}{s.log_hint(bot)}")
    return False


# -- games --------------------------------------------------------------------------------
def sizes(variant: str) -> list[int]:
    """The table sizes a preset's games are checked at: 2 seats and 4 (or the preset's maximum)."""
    lo, hi = PRESETS[variant].players
    return sorted({max(lo, 2), min(4, hi)})


def games(s: Session, host: BotHost, bot: Peer) -> None:
    opponents = s.opponents
    k = 0
    for variant in s.variants:
        asked: Counter[str] = Counter()
        answered: Counter[str] = Counter()
        slowest: dict[str, float] = {}
        timeouts: list[Failure] = []
        for n in sizes(variant):
            name = f"game {variant} {n}p"
            seat = 0 if n == 2 else 1
            if not s.ensure_bot(host, bot):
                s.emit(name, False, s.no_restart(bot))
                continue
            ref, result, mine = s.play(host, bot, opponents, variant, n, seat, s.seed + k, CHECK_POLICY)
            k += 1
            asked.update(ref.asked)
            answered.update(ref.answered)
            for d, ms in ref.slowest.items():
                slowest[d] = max(slowest.get(d, 0.0), ms)
            timeouts += [e for e in mine if e.kind == "timeout"]
            if mine:
                s.emit(name, False, s.describe_failure(mine[0], bot, len(mine)))
            else:
                place = result.placings[seat]
                s.emit(name, True, f"a whole game at seat {seat}: {ref.answered['draw']} draws and "
                                   f"{ref.answered['play']} plays, all legal; {result.deals} deal(s), "
                                   f"ended by {result.end_reason}, placed {place} of {n}")
        _decisions(s, variant, asked, answered, slowest, timeouts)


def _decisions(s: Session, variant: str, asked: Counter[str], answered: Counter[str], slowest: dict[str, float],
               timeouts: list[Failure]) -> None:
    name = f"decisions {variant}"
    limit = s.time.decision_ms
    if timeouts:
        s.emit(name, False, f"{timeouts[0].reason} -- fix: {s.fix('timeout')}")
        return
    missing = [d for d in ("draw", "play") if not answered[d]]
    if missing:
        what = " or ".join(missing)
        s.emit(name, False, f"no {what} request was answered: the bot's games ended at an earlier failure "
                            "-- fix: see the game checks above")
        return
    slow = max(slowest.values())
    s.emit(name, True, f"answered {answered['draw']} draw and {answered['play']} play requests, "
                       f"slowest {slow:.0f} ms (limit {limit} ms)")


# -- recovering from an error -------------------------------------------------------
def illegal_retry(s: Session, host: BotHost, bot: Peer) -> None:
    name = "illegal-retry"
    if not s.ensure_bot(host, bot):
        s.emit(name, False, s.no_restart(bot))
        return
    variant = s.variants[0]
    ref, _result, mine = s.play(host, bot, s.opponents, variant, 2, 1, s.seed + 1000, RETRY_POLICY,
                                reject_first_play=True)
    if ref.rejected_seq is None:
        why = (s.describe_failure(mine[0], bot, len(mine)) if mine
               else "the bot was never asked to play -- fix: see the game checks above")
        s.emit(name, False, f"no play to reject: {why}")
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
        s.emit(name, False, f"play seq {ref.rejected_seq} was rejected on purpose and the fresh request seq "
                            f"{ref.retry_seq} was not answered: {detail} -- fix: {fix}{s.log_hint(bot)}")
        return
    if others:
        e = others[0]
        s.emit(name, False, f"the game with the rejection had another failure: "
                            f"{s.describe_failure(e, bot, len(others))}")
        return
    s.emit(name, True, f"play seq {ref.rejected_seq} rejected on purpose (error illegal, retry true); the fresh "
                       f"request seq {ref.retry_seq} got a legal answer and the game went on to its end")


def several_games(s: Session, host: BotHost, bot: Peer) -> None:
    name = "several-games"
    games = s.games_played
    if s.crashes:
        game, reason = s.crashes[0]
        if game == 1:
            detail = f"the bot left the session in its first game: {reason}"
        else:
            detail = f"game 1 went fine, but in game {game} on the same connection the bot {reason}"
        s.emit(name, False, f"{detail}; it was started {bot.starts} times for {games} games -- fix: a session "
                            "holds several games (game_over, then another new_game): keep running, on one "
                            f"connection, until shutdown (SPEC 2){s.log_hint(bot)}")
        return
    if bot.starts > 1:
        s.emit(name, False, f"the bot had to be started {bot.starts} times for {games} games -- fix: keep one "
                            f"connection for the whole session (SPEC 1, 2){s.log_hint(bot)}")
        return
    s.emit(name, True, f"{games} games on one connection (new_game ... game_over, {games} times), "
                       f"{s.games_with_answers} of them with the bot answering requests")


# -- the end of the session ---------------------------------------------------------------
def shutdown(s: Session, host: BotHost, bot: Peer) -> None:
    name = "shutdown"
    proc = bot.process
    if proc is None or not proc.alive() or not bot.ready:
        s.emit(name, False, "the bot was not running at the end of the games, so shutdown could not be "
                            f"checked -- fix: see the failures above{s.log_hint(bot)}")
        return
    host.send(bot, encode(wire.shutdown("the compliance check is done")))
    t0 = time.monotonic()
    host.wait_gone(bot, t0 + SHUTDOWN_S)
    exited = not proc.alive()
    elapsed = time.monotonic() - t0
    if not exited:
        s.emit(name, False, f"still running {SHUTDOWN_S:.0f} s after shutdown -- fix: on shutdown close the "
                            "socket and exit with code 0; a bot that lingers is killed (SPEC 3.2)")
        return
    code = proc.exit_code()
    if code != 0:
        s.emit(name, False, f"{proc.exit_description()} after shutdown -- fix: exit with code 0 on "
                            f"shutdown (SPEC 3.2){s.log_hint(bot)}")
        return
    s.emit(name, True, f"exited with code 0 in {elapsed:.2f} s")


def output(s: Session, host: BotHost | None, bot: Peer) -> None:
    name = "output"
    log = log_path(s.log_dir / "session", bot.spec.name)
    # give the log reader a moment to drain what the process wrote last
    time.sleep(0.05)
    size = sum(p.stat().st_size for p in (log, rotated(log)) if p.exists())  # the log rotates at the cap
    what = "stderr" if s.transport == "stdio" else "stdout and stderr"
    if size >= OUTPUT_LIMIT:
        s.emit(name, False, f"the bot wrote {'at least ' if rotated(log).exists() else ''}{size} bytes to "
                            f"{what} in {s.games_played} games; a bot's log rotates at {LOG_CAP_BYTES} "
                            f"bytes, keeping only its latest 1-2 MiB and dropping the oldest -- fix: log "
                            f"less, and to stderr (SPEC 1) (log: {log})")
        return
    if s.transport == "stdio":
        lines, bad, sample = bot.lines, bot.bad_lines, bot.bad_sample or b""
        if bad:
            s.emit(name, False, f"{bad} of {lines} lines on stdout were not JSON messages (first: "
                                f"{sample.decode('utf-8', 'replace')!r}) -- fix: on the stdio transport stdout "
                                "carries protocol messages only, one JSON object per line; write logs to "
                                "stderr (SPEC 14)")
            return
        s.emit(name, True, f"all {lines} lines on stdout were JSON messages; {size} bytes on stderr")
        return
    s.emit(name, True, f"{size} bytes of output (stdout and stderr) in {s.games_played} games, "
                       f"well under the {LOG_CAP_BYTES}-byte log cap")


# -- a refused handshake ------------------------------------------------------------------
def version_refusal(s: Session) -> None:
    name = "version-refusal"
    host = BotHost(s.time, s.log_dir / "version", sandbox=s.sandbox)
    try:
        peer = host.add(s.spec)
        if not host.start(peer, welcome=False):
            why = peer.problem[1] if peer.problem else f"no hello within {s.time.start_ms} ms"
            s.emit(name, False, f"no hello in a second session: {why} -- fix: say hello first in every "
                                f"session (SPEC 2) (log: {host.log_path(peer)})")
            return
        hello = peer.hello
        assert hello is not None
        reason = ("no common protocol version: you speak "
                  f"{hello.versions or [hello.v]}, this referee speaks [99] (compliance check)")
        host.send(peer, encode(wire.version_refusal(reason, [99])))
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
            s.emit(name, False, f"still running {VERSION_EXIT_S:.0f} s after an error of kind version{busy} "
                                "-- fix: when an error of kind version or token arrives before welcome, the "
                                "referee will not talk to you again: exit with a non-zero code (SPEC 2)")
            return
        code = proc.exit_code()
        if code == 0:
            s.emit(name, True, f"exited in {elapsed:.2f} s after an error of kind version (with code 0; the "
                               "spec asks for a non-zero code, so that scripts see the refusal)")
        else:
            s.emit(name, True, f"{proc.exit_description()}, {elapsed:.2f} s after an error of kind version")
    finally:
        host.close()




# -- the list -----------------------------------------------------------------------------
@dataclass(frozen=True)
class BotCheck:
    """One check: the lines it reports (as SKIP when it cannot run) and what it does."""

    names: Callable[[Session], list[str]]
    run: Callable[..., None]  # (session, host, bot) in the shared session; (session) in its own


def _game_names(s: Session) -> list[str]:
    return [name for v in s.variants for name in [*(f"game {v} {n}p" for n in sizes(v)), f"decisions {v}"]]


def _named(name: str) -> Callable[[Session], list[str]]:
    return lambda _s: [name]


IN_SESSION: tuple[BotCheck, ...] = (
    BotCheck(_game_names, games),
    BotCheck(_named("illegal-retry"), illegal_retry),
    BotCheck(_named("several-games"), several_games),
    BotCheck(_named("shutdown"), shutdown),
    BotCheck(_named("output"), output),
)
OWN_SESSION: tuple[BotCheck, ...] = (
    BotCheck(_named("version-refusal"), version_refusal),
)
